-- The change ledger: one row per change of a stored host.
CREATE TABLE ledger (
    id BIGSERIAL PRIMARY KEY,
    host TEXT NOT NULL,
    domain TEXT NOT NULL,
    tld TEXT NOT NULL,
    subdomain TEXT NOT NULL,
    host_type TEXT NOT NULL,
    ip_address TEXT NOT NULL,
    category TEXT NOT NULL,
    change TEXT NOT NULL,
    value TEXT NOT NULL,
    old_value TEXT NOT NULL,
    source TEXT NOT NULL,
    ts BIGINT NOT NULL
);
CREATE INDEX ledger_host_ts ON ledger (host, ts DESC, id DESC);
CREATE INDEX ledger_domain_ts ON ledger (domain, ts DESC, id DESC);

-- What a source missed on its last observation of a host (pending removals).
CREATE TABLE ledger_misses (
    host TEXT NOT NULL,
    source TEXT NOT NULL,
    category TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (host, source, category, value)
);

CREATE TABLE alerts (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    type TEXT NOT NULL,
    severity TEXT NOT NULL,
    title TEXT NOT NULL,
    message TEXT NOT NULL,
    evidence TEXT NOT NULL,
    host TEXT NOT NULL,
    domain TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    count BIGINT NOT NULL,
    first_seen BIGINT NOT NULL,
    last_seen BIGINT NOT NULL,
    state TEXT NOT NULL,
    state_changed_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX alerts_fingerprint ON alerts (account_id, fingerprint);
CREATE INDEX alerts_account_seen ON alerts (account_id, last_seen DESC, id);

-- Where each background job stopped (ledger id, finding id, ...).
CREATE TABLE alert_checkpoints (
    name TEXT PRIMARY KEY,
    position BIGINT NOT NULL,
    leased_until BIGINT NOT NULL DEFAULT 0,
    holder TEXT NOT NULL DEFAULT ''
);

-- When an organization's asset first had data: the baseline window's start.
CREATE TABLE alert_baselines (
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    asset TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    PRIMARY KEY (organization_id, asset)
);

CREATE TABLE webhook_endpoints (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    format TEXT NOT NULL,
    secret TEXT NOT NULL,
    previous_secret TEXT NOT NULL DEFAULT '',
    previous_until BIGINT NOT NULL DEFAULT 0,
    min_severity TEXT NOT NULL,
    types TEXT NOT NULL,
    status TEXT NOT NULL,
    failures BIGINT NOT NULL DEFAULT 0,
    last_error TEXT NOT NULL DEFAULT '',
    last_delivery_at BIGINT NOT NULL DEFAULT 0,
    disabled_at BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX webhook_endpoints_org ON webhook_endpoints (organization_id);

-- The durable outbox: one row per delivery of one message to one endpoint.
CREATE TABLE webhook_outbox (
    id TEXT PRIMARY KEY,
    endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    alert_id TEXT NOT NULL DEFAULT '',
    event TEXT NOT NULL,
    payload TEXT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    next_attempt_at BIGINT NOT NULL,
    leased_until BIGINT NOT NULL DEFAULT 0,
    delivered_at BIGINT NOT NULL DEFAULT 0,
    failed_at BIGINT NOT NULL DEFAULT 0,
    last_status BIGINT NOT NULL DEFAULT 0,
    last_error TEXT NOT NULL DEFAULT ''
);
CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE delivered_at = 0 AND failed_at = 0;
