-- Issue 29: an OEM dark-web search names a person (an email, a username, a
-- phone number). Its audit record keeps the request sealed with the
-- secrets key (--secrets-key-file) here, bound to the account, and
-- '{"sealed":true}' in request; '' for every other record.
ALTER TABLE audit_logs ADD COLUMN sealed_request TEXT NOT NULL DEFAULT '';
