-- The hosts table keeps only the columns a query reads: the name, the two
-- index keys, resolvability and last_seen (covered by the subdomain index),
-- the lower-cased title (the title filter) and the document, which holds
-- everything. domain, ip, first_seen and the flags other than
-- is_resolvable went: flags are posting terms, and no query read the rest.
-- A bulk ingest binds and writes 7 values a host instead of 16. SQLite drops
-- columns by rewriting the table, so the table is rebuilt once.
CREATE TABLE hosts_lean (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    rkey TEXT NOT NULL,
    -- ipkey is the address as 32 hex digits (IPv4 mapped into IPv6), so a
    -- CIDR block is one key range.
    ipkey TEXT NOT NULL DEFAULT '',
    is_resolvable INTEGER NOT NULL DEFAULT 0,
    http_title TEXT NOT NULL DEFAULT '',
    last_seen INTEGER NOT NULL DEFAULT 0,
    doc BLOB NOT NULL
);
INSERT INTO hosts_lean (id, name, rkey, ipkey, is_resolvable, http_title, last_seen, doc)
    SELECT id, name, rkey, ipkey, is_resolvable, http_title, last_seen, doc FROM hosts ORDER BY id;
DROP TABLE hosts;
ALTER TABLE hosts_lean RENAME TO hosts;
CREATE INDEX hosts_ipkey ON hosts (ipkey);
CREATE INDEX hosts_rkey ON hosts (rkey, is_resolvable, last_seen);
