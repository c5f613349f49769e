-- Per-account quotas on what costs background work (issue 12, defect 9):
-- 0 means the default (see README "Quotas"), as for rate_limit.
ALTER TABLE accounts ADD COLUMN max_organizations BIGINT NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN max_domains BIGINT NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN max_ranges BIGINT NOT NULL DEFAULT 0;

-- Leases of the background jobs when several instances share the database:
-- the holder renews before expires_at; anyone may take an expired lease.
-- Times are the database's clock, so the instances' clocks never disagree.
CREATE TABLE leases (
    name TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    acquired_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
