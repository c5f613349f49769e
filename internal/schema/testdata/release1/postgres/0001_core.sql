CREATE TABLE accounts (
    id TEXT PRIMARY KEY,
    company TEXT NOT NULL,
    plan TEXT NOT NULL DEFAULT 'free',
    enterprise BOOLEAN NOT NULL DEFAULT FALSE,
    oem BOOLEAN NOT NULL DEFAULT FALSE,
    credits_per_month BIGINT NOT NULL DEFAULT 0,
    credits_used BIGINT NOT NULL DEFAULT 0,
    oem_credits_per_month BIGINT NOT NULL DEFAULT 0,
    oem_credits_used BIGINT NOT NULL DEFAULT 0,
    credits_period TEXT NOT NULL DEFAULT '',
    max_results_per_request INTEGER NOT NULL DEFAULT 100,
    rate_limit BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    CHECK (credits_used >= 0 AND oem_credits_used >= 0)
);
CREATE UNIQUE INDEX accounts_company ON accounts (company);

CREATE TABLE users (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    email TEXT NOT NULL,
    first_name TEXT NOT NULL DEFAULT '',
    last_name TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX users_email ON users (email);
CREATE INDEX users_account ON users (account_id);

CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name TEXT NOT NULL DEFAULT '',
    prefix TEXT NOT NULL,
    hash TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
);
CREATE UNIQUE INDEX api_keys_hash ON api_keys (hash);
CREATE INDEX api_keys_account ON api_keys (account_id);

CREATE TABLE organizations (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    is_default BOOLEAN NOT NULL DEFAULT FALSE,
    created_at BIGINT NOT NULL
);
CREATE INDEX organizations_account ON organizations (account_id);
CREATE UNIQUE INDEX organizations_one_default ON organizations (account_id) WHERE is_default;

-- One row per (kind, value): which account holds an asset. Makes "another
-- account holds it" a primary-key conflict, atomic on both engines.
CREATE TABLE asset_claims (
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    PRIMARY KEY (kind, value)
);

CREATE TABLE org_assets (
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (organization_id, kind, value)
);
CREATE INDEX org_assets_value ON org_assets (kind, value);
CREATE INDEX org_assets_account ON org_assets (account_id, kind);

CREATE TABLE audit_logs (
    id BIGSERIAL PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    key_prefix TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    method TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    status_code INTEGER NOT NULL,
    credits_charged INTEGER NOT NULL,
    query_tags JSONB NOT NULL DEFAULT '{}',
    request JSONB NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_logs_account_time ON audit_logs (account_id, created_at DESC, id DESC);
