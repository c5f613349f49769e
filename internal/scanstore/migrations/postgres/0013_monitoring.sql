-- Active monitoring (issue 16): ownership proofs, operator authorisations
-- and the scans that probe what they cover.

-- One verification token per organization, made on first use.
CREATE TABLE org_verification_tokens (
    organization_id TEXT PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
    token TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

-- An asset of org_assets that may be probed: a domain verified by its TXT
-- record or by an operator, an IP range authorised by an operator. Valid
-- only while authorized_at is not before the asset row's created_at (an
-- asset removed and added again must be verified again).
CREATE TABLE asset_authorizations (
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    method TEXT NOT NULL,
    authorized_at BIGINT NOT NULL,
    PRIMARY KEY (organization_id, kind, value)
);

CREATE TABLE scans (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    origin TEXT NOT NULL,
    target_type TEXT NOT NULL,
    target TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    started_at BIGINT NOT NULL DEFAULT 0,
    completed_at BIGINT NOT NULL DEFAULT 0,
    names BIGINT NOT NULL DEFAULT 0,
    addresses BIGINT NOT NULL DEFAULT 0,
    open_ports BIGINT NOT NULL DEFAULT 0,
    hosts_stored BIGINT NOT NULL DEFAULT 0,
    skipped_private BIGINT NOT NULL DEFAULT 0,
    error TEXT NOT NULL DEFAULT ''
);
CREATE INDEX scans_status ON scans (status, created_at);
CREATE INDEX scans_org ON scans (organization_id, created_at);

-- The latest request per (account, target): a repeat inside the window
-- reuses its scan. One row per key makes the check atomic on both engines.
CREATE TABLE scan_requests (
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    target_type TEXT NOT NULL,
    target TEXT NOT NULL,
    scan_id TEXT NOT NULL,
    requested_at BIGINT NOT NULL,
    PRIMARY KEY (account_id, target_type, target)
);

-- Which scan runs for an organization, until when: at most one at a time,
-- across instances; an expired row (a crashed runner) may be taken over.
CREATE TABLE scan_locks (
    organization_id TEXT PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
    scan_id TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
