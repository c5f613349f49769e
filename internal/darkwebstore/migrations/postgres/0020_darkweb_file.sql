-- On SQLite the dark-web tables move to a file of their own (see
-- sqlite/0020_darkweb_file.sql); PostgreSQL keeps one database.
SELECT 1;
