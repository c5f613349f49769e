-- Issue 35: indexes a bulk load into an empty host index drops at its
-- start and builds at its end (one sorted build instead of millions of
-- random inserts). Each row keeps an index's definition as the engine's
-- catalog gave it; owner (host name:process id) and touched (the load's
-- heartbeat, Unix seconds) tell whether the load is alive, so that the
-- indexes of a load that died are built again by the next open
-- (store.RestoreAbandonedIndexes).
CREATE TABLE deferred_indexes (
    name TEXT PRIMARY KEY,
    definition TEXT NOT NULL,
    owner TEXT NOT NULL,
    touched BIGINT NOT NULL
);
