-- Web console sessions (internal/console): an API key exchanged at sign-in
-- for a random session id, of which only the SHA-256 is stored. A session
-- ends at expires_at, after the idle limit since seen_at, at sign-out, or
-- when its key is revoked (RevokeKey deletes its sessions; the lookup joins
-- the key, so a key revoked by another process ends them too).
CREATE TABLE console_sessions (
    id_hash TEXT PRIMARY KEY,
    key_id TEXT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    csrf TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    seen_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX console_sessions_key ON console_sessions (key_id);
CREATE INDEX console_sessions_expires ON console_sessions (expires_at);
