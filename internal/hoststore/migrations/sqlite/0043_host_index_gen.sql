-- The host index's generation: every transaction that writes hosts or
-- their posting lists adds one before it commits (HostWriter.Commit), so a
-- reader that sees the same generation twice saw the same index between.
-- The in-memory posting lists (postcache.go) are kept for one generation.
CREATE TABLE host_index_gen (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    gen INTEGER NOT NULL
);
INSERT INTO host_index_gen (id, gen) VALUES (1, 1);
