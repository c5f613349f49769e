-- Dark-web storage at scale (issue 15's ingest, search and listing
-- targets). Records get an ascending integer sequence (seq: appends land at
-- the end of the table) and the blind-index rows shrink to integers: k is
-- the type code in the top byte and 56 bits of the HMAC below it (a
-- candidate is checked against its decrypted value, so a collision never
-- shows a wrong record). Index rows are no longer written per record: a
-- load stages each record's packed keys in darkweb_stage and builds the
-- index rows, the identity check and the listing counts in sorted bulk
-- statements (darkwebstore's build). Rows copied here are staged without
-- keys: the first unlock with the key computes them and builds the index
-- (nothing stored is lost; the old index rows are derived data).

ALTER TABLE darkweb_records RENAME TO darkweb_records_v1;
DROP INDEX darkweb_records_email;

CREATE TABLE darkweb_records (
    seq INTEGER PRIMARY KEY,
    id BLOB NOT NULL,
    key_id TEXT NOT NULL,
    blob BLOB NOT NULL,
    breach TEXT NOT NULL,
    breach_date TEXT NOT NULL,
    source TEXT NOT NULL,
    date_added INTEGER NOT NULL
);
INSERT INTO darkweb_records (id, key_id, blob, breach, breach_date, source, date_added)
    SELECT id, key_id, blob, breach, breach_date, source, date_added
    FROM darkweb_records_v1 ORDER BY date_added, id;
DROP TABLE darkweb_records_v1;
DROP TABLE darkweb_index;
DROP TABLE darkweb_counts;

-- A record's identity (the keyed hash of its normalised fields and breach)
-- to its seq: re-ingesting a record finds it here and stores nothing.
CREATE TABLE darkweb_ids (
    id BLOB PRIMARY KEY,
    seq INTEGER NOT NULL
) WITHOUT ROWID;

-- One row per (blind index, record), newest first within a key: a search
-- is one backward range scan. Codes 17 and 18 are the listing rows of an
-- email domain (records with a secret; records with an email, x holding
-- the email's key).
CREATE TABLE darkweb_index (
    k INTEGER NOT NULL,
    d INTEGER NOT NULL,
    rec INTEGER NOT NULL,
    x INTEGER,
    PRIMARY KEY (k, d, rec)
) WITHOUT ROWID;

-- Listing totals kept by the build (k = code 17 or 18 listing key).
CREATE TABLE darkweb_counts (
    k INTEGER PRIMARY KEY,
    n INTEGER NOT NULL
);

-- Records stored but not yet indexed: the packed keys (a JSON array of
-- integers; NULL: compute from the decrypted record at unlock), the
-- listing keys among them again (the counts read only those) and the
-- email's key. Emptied by every build.
CREATE TABLE darkweb_stage (
    seq INTEGER PRIMARY KEY,
    d INTEGER NOT NULL,
    email INTEGER,
    keys TEXT,
    lkeys TEXT
);
INSERT INTO darkweb_stage (seq, d) SELECT seq, date_added FROM darkweb_records;
