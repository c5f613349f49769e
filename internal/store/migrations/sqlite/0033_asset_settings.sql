-- Settings of an organization's domain or IP range (FullHunt's PUT
-- .../domains/settings and .../ip-ranges/settings, issue 33). A row applies
-- while updated_at is not before the asset's created_at: an asset removed
-- and added again starts from the defaults (everything on).
CREATE TABLE asset_settings (
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    continuous_scans INTEGER NOT NULL,
    notifications INTEGER NOT NULL,
    redacted INTEGER NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (organization_id, kind, value)
);
