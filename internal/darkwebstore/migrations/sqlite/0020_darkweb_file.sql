-- The dark-web tables in a SQLite file of their own (periscope.db →
-- periscope-darkweb.db), attached to every connection as the schema
-- "darkweb" (MigrationSet.File): every request writes credits and audit rows
-- to the main file, and a write to a file drops every other connection's
-- cache of it, which made each search read its records' pages again. The
-- tables are as 0012 and 0017 left them; darkweb_reveal, which names
-- accounts, stays in the main file. The rows of a database written before
-- are moved by store.MoveToFile after this transaction (darkwebstore's
-- moveToFile): copied, written to disk, then dropped from the main file.
-- IF NOT EXISTS: the move runs this again, and the two files commit apart.

CREATE TABLE IF NOT EXISTS darkweb.darkweb_keys (
    key_id TEXT PRIMARY KEY,
    check_value BLOB NOT NULL,
    active INTEGER NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS darkweb.darkweb_breaches (
    name TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    domain TEXT NOT NULL,
    breach_date TEXT NOT NULL,
    added_date TEXT NOT NULL,
    pwn_count INTEGER NOT NULL,
    data_classes TEXT NOT NULL,
    description TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS darkweb.darkweb_records (
    seq INTEGER PRIMARY KEY,
    id BLOB NOT NULL,
    key_id TEXT NOT NULL,
    blob BLOB NOT NULL,
    breach TEXT NOT NULL,
    breach_date TEXT NOT NULL,
    source TEXT NOT NULL,
    date_added INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS darkweb.darkweb_ids (
    id BLOB PRIMARY KEY,
    seq INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS darkweb.darkweb_index (
    k INTEGER NOT NULL,
    d INTEGER NOT NULL,
    rec INTEGER NOT NULL,
    x INTEGER,
    PRIMARY KEY (k, d, rec)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS darkweb.darkweb_counts (
    k INTEGER PRIMARY KEY,
    n INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS darkweb.darkweb_stage (
    seq INTEGER PRIMARY KEY,
    d INTEGER NOT NULL,
    email INTEGER,
    keys TEXT,
    lkeys TEXT
);
