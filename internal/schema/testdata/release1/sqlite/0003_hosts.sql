-- The internet host index. One row per host (an FQDN or a bare IP); doc
-- holds the whole host object (JSON). host_terms is an inverted index: one
-- row per (filter term, host), so every search filter is an index range and
-- filters are ANDed by joining ranges on host_id.
CREATE TABLE hosts (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    rkey TEXT NOT NULL,
    domain TEXT NOT NULL DEFAULT '',
    ip TEXT NOT NULL DEFAULT '',
    -- ipkey is the address as 32 hex digits (IPv4 mapped into IPv6), so a
    -- CIDR block is one key range.
    ipkey TEXT NOT NULL DEFAULT '',
    is_live INTEGER NOT NULL DEFAULT 0,
    is_resolvable INTEGER NOT NULL DEFAULT 0,
    is_cloud INTEGER NOT NULL DEFAULT 0,
    is_cdn INTEGER NOT NULL DEFAULT 0,
    is_cloudflare INTEGER NOT NULL DEFAULT 0,
    has_ipv6 INTEGER NOT NULL DEFAULT 0,
    has_private_ip INTEGER NOT NULL DEFAULT 0,
    http_title TEXT NOT NULL DEFAULT '',
    first_seen INTEGER NOT NULL DEFAULT 0,
    last_seen INTEGER NOT NULL DEFAULT 0,
    doc BLOB NOT NULL
);
CREATE UNIQUE INDEX hosts_name ON hosts (name);
-- Subdomain listing: a range of reversed-label keys, covering resolvability
-- and last_seen.
CREATE INDEX hosts_ipkey ON hosts (ipkey);
CREATE INDEX hosts_rkey ON hosts (rkey, is_resolvable, last_seen);

CREATE TABLE host_terms (
    term TEXT NOT NULL,
    host_id INTEGER NOT NULL,
    PRIMARY KEY (term, host_id)
) WITHOUT ROWID;
