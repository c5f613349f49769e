-- Issue 12: the audit-retention worker deletes records older than the
-- retention by time across all accounts.
CREATE INDEX audit_logs_created ON audit_logs (created_at);
