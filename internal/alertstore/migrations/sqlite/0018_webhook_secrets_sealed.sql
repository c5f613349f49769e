-- Webhook signing secrets sealed at rest (AES-256-GCM under the secrets
-- key file). secret and previous_secret hold "v1:" + base64(nonce |
-- ciphertext) once sealed; secret_key_id names the key they were sealed
-- under ('' for rows written before this migration, in clear: serve seals
-- them at start, before any delivery, and refuses to start when rows were
-- sealed under another key).
ALTER TABLE webhook_endpoints ADD COLUMN secret_key_id TEXT NOT NULL DEFAULT '';

-- Whether a source has any pending miss at all: a host write by a source
-- with none (imports, CT, most re-scans) skips the per-host look-up.
CREATE INDEX ledger_misses_source ON ledger_misses (source);
