-- Answer heads: for a search value with many records, a copy of its newest
-- records' rows side by side (darkwebstore heads.go). A page of 1,000 such
-- records read through the index is 1,000 random reads over the whole
-- records table; read from here it is one range scan of a few dozen pages.
-- A head row is the record row numbered rec as the index orders it under
-- the key k (d is the index row's date); meta is the record's breach,
-- source and breach date joined by U+001F, as the reads select them. Heads
-- are copies: a search checks every row against the index page it is
-- answering and reads what a head lacks from darkweb_records, so a head
-- that is behind an ingest costs reads, never a wrong answer.
CREATE TABLE darkweb_heads (
    k BIGINT NOT NULL,
    d BIGINT NOT NULL,
    rec BIGINT NOT NULL,
    id BYTEA NOT NULL,
    key_id TEXT NOT NULL,
    blob BYTEA NOT NULL,
    meta TEXT NOT NULL,
    PRIMARY KEY (k, d, rec)
);

-- What the last complete pass of the head builder covered: every record up
-- to max_seq, sealed under key_id. A pass with nothing new to cover stops
-- after reading this row.
CREATE TABLE darkweb_heads_done (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    max_seq BIGINT NOT NULL,
    key_id TEXT NOT NULL
);
