-- Dark-web breach intelligence (issue 15). Every sensitive field lives only
-- inside darkweb_records.blob (AES-256-GCM); searches go through
-- darkweb_index, HMAC-SHA256 blind indexes of normalised values.

CREATE TABLE darkweb_keys (
    key_id TEXT PRIMARY KEY,
    check_value BYTEA NOT NULL,
    active INTEGER NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE darkweb_breaches (
    name TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    domain TEXT NOT NULL,
    breach_date TEXT NOT NULL,
    added_date TEXT NOT NULL,
    pwn_count BIGINT NOT NULL,
    data_classes TEXT NOT NULL,
    description TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- id is the record's 128-bit keyed identity hash (bytes, not hex: it is
-- repeated in every index row).
CREATE TABLE darkweb_records (
    id BYTEA PRIMARY KEY,
    key_id TEXT NOT NULL,
    blob BYTEA NOT NULL,
    breach TEXT NOT NULL,
    breach_date TEXT NOT NULL,
    source TEXT NOT NULL,
    has_secret INTEGER NOT NULL,
    email_idx BYTEA,
    date_added BIGINT NOT NULL
);
CREATE INDEX darkweb_records_email ON darkweb_records (email_idx) WHERE email_idx IS NOT NULL;

-- One row per (search type, blind index) of a record, newest first within
-- a value: a search is one range scan of the primary key. The listing rows
-- (types 17 to 19) point from an email domain to a record with a secret,
-- to an email's blind index, and (undated, once per pair) to the same.
CREATE TABLE darkweb_index (
    type SMALLINT NOT NULL,
    hmac BYTEA NOT NULL,
    date_added BIGINT NOT NULL,
    record_id BYTEA NOT NULL,
    PRIMARY KEY (type, hmac, date_added, record_id)
);

-- Row counts kept at ingest so that listing totals do not scan: the
-- number of records with a secret under an email-domain blind index
-- (code 17, as in darkweb_index).
CREATE TABLE darkweb_counts (
    code SMALLINT NOT NULL,
    hmac BYTEA NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (code, hmac)
);

CREATE TABLE darkweb_reveal (
    account_id TEXT PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE
);
