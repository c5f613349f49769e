-- The posting rows of a first bulk load wait here, appended in the order
-- they are written, and enter host_postings sorted at the load's end
-- (stage.go): inserting them one batch at a time put most rows at random
-- places in an index larger than memory. A row with n < 0 removes its -n
-- ids from the term. Each run of rows written in term order is one row of
-- host_postings_stage_runs.
CREATE TABLE host_postings_stage (
    seq BIGINT PRIMARY KEY,
    term TEXT NOT NULL,
    first_id BIGINT NOT NULL,
    n INTEGER NOT NULL,
    ids BYTEA NOT NULL
);
CREATE TABLE host_postings_stage_runs (
    lo BIGINT PRIMARY KEY,
    hi BIGINT NOT NULL
);
