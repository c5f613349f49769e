-- A text search of the vulnerabilities ranked every match with bm25: for a
-- common word (28,000 of 300,000 CVEs) that is a position list and a
-- docsize lookup per match, 20 ms in the sqlite3 shell and about three
-- times that in the pure-Go build. The search now ranks the newest 500
-- matches, as PostgreSQL does on vulns_search (migration 16), and
-- vulns_search_fts replaces vulns_fts so that "newest" is its rowid order:
-- the rowid of a CVE is its publication date (Unix seconds, clamped to
-- 0..2^32-1) shifted above its id (31 bits), so ORDER BY rowid DESC LIMIT
-- 500 walks the matches' doclist from the newest end and ranks 500 of
-- them, and rowid & 2147483647 is vulns.id. The table is contentless (an
-- external-content table's rowid must be a column of vulns); the store
-- takes a CVE's old text out with FTS5's 'delete' command and the text
-- still in vulns, and writes it in the same transaction as the rows, as
-- before. (contentless_delete=1 was tried: its tombstones made every
-- later merge slower, a KEV load at 300,000 CVEs took twice as long.)
-- The backfill is merged into one segment, so later small writes do not
-- continue the merges it would leave behind.
CREATE VIRTUAL TABLE vulns_search_fts USING fts5(title, description, content='', tokenize='porter unicode61');
INSERT INTO vulns_search_fts (rowid, title, description)
    SELECT (MIN(MAX(published, 0), 4294967295) << 31) | id, title, description FROM vulns ORDER BY 1;
INSERT INTO vulns_search_fts (vulns_search_fts) VALUES ('optimize');
DROP TABLE vulns_fts;
