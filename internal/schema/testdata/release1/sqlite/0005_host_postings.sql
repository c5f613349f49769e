-- The host index's terms become posting lists (see internal/store/postings.go):
-- per term, rows of ascending host ids, keyed by (term, first id), the ids
-- as uvarint gaps after the first. The host_terms rows (one per term and
-- host), and the flags of every host as terms, are moved here by the Go step
-- of this migration, which then drops host_terms.
CREATE TABLE host_postings (
    term TEXT NOT NULL,
    first_id INTEGER NOT NULL,
    n INTEGER NOT NULL,
    ids BLOB NOT NULL,
    PRIMARY KEY (term, first_id)
) WITHOUT ROWID;
