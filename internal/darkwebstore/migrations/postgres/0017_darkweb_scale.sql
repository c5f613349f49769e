-- Dark-web storage at scale (issue 15's targets): see the SQLite file of
-- the same number. Records get an ascending sequence, index rows become
-- integers built in bulk from darkweb_stage; rows copied here are staged
-- without keys, which the first unlock with the key computes.

ALTER TABLE darkweb_records RENAME TO darkweb_records_v1;
DROP INDEX darkweb_records_email;

CREATE TABLE darkweb_records (
    seq BIGINT PRIMARY KEY,
    id BYTEA NOT NULL,
    key_id TEXT NOT NULL,
    blob BYTEA NOT NULL,
    breach TEXT NOT NULL,
    breach_date TEXT NOT NULL,
    source TEXT NOT NULL,
    date_added BIGINT NOT NULL
);
INSERT INTO darkweb_records (seq, id, key_id, blob, breach, breach_date, source, date_added)
    SELECT row_number() OVER (ORDER BY date_added, id), id, key_id, blob, breach, breach_date, source, date_added
    FROM darkweb_records_v1;
DROP TABLE darkweb_records_v1;
DROP TABLE darkweb_index;
DROP TABLE darkweb_counts;

CREATE TABLE darkweb_ids (
    id BYTEA PRIMARY KEY,
    seq BIGINT NOT NULL
);

CREATE TABLE darkweb_index (
    k BIGINT NOT NULL,
    d BIGINT NOT NULL,
    rec BIGINT NOT NULL,
    x BIGINT,
    PRIMARY KEY (k, d, rec)
);

-- Most keys (emails, usernames, passwords, phones) are nearly unique, a
-- few (an email domain's listing keys, a common name) hold many rows: a
-- sampled n_distinct comes out far too low under that skew and made the
-- planner expect hundreds of rows a key (a merge join over every record
-- for a page's 500 emails, with JIT). Half as many distinct keys as rows
-- is closer to every load we measured.
ALTER TABLE darkweb_index ALTER COLUMN k SET (n_distinct = -0.5);

CREATE TABLE darkweb_counts (
    k BIGINT PRIMARY KEY,
    n BIGINT NOT NULL
);

CREATE TABLE darkweb_stage (
    seq BIGINT PRIMARY KEY,
    d BIGINT NOT NULL,
    email BIGINT,
    keys TEXT,
    lkeys TEXT
);
INSERT INTO darkweb_stage (seq, d) SELECT seq, date_added FROM darkweb_records;
