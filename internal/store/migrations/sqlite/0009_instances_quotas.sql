-- Per-account quotas on what costs background work (issue 12, defect 9):
-- 0 means the default (see README "Quotas"), as for rate_limit.
-- (SQLite serves one process: background jobs need no leases there.)
ALTER TABLE accounts ADD COLUMN max_organizations INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN max_domains INTEGER NOT NULL DEFAULT 0;
ALTER TABLE accounts ADD COLUMN max_ranges INTEGER NOT NULL DEFAULT 0;
