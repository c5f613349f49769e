-- Tor exit addresses (issue 33): the Tor Project's exit lists as loaded by
-- `periscope ingest tor-exits` and the sync, for /nexus/tor/check-ip.
CREATE TABLE tor_exits (
    ip TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL DEFAULT '',
    first_seen BIGINT NOT NULL,
    last_seen BIGINT NOT NULL
);

-- One row per list loaded (a file path or a URL): when and how many.
CREATE TABLE tor_lists (
    source TEXT PRIMARY KEY,
    loaded_at BIGINT NOT NULL,
    exits INTEGER NOT NULL
);
