-- Settings an operator chose for the installation (periscope init), read by
-- serve when no flag or environment variable says otherwise.
CREATE TABLE settings (
    name       TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);
