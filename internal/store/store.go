// Package store is the core of Periscope's storage: one Store on
// database/sql for SQLite (the embedded default) and PostgreSQL, its
// transactions, the migration runner, and what every capability shares
// (accounts, keys, credits, organizations and their assets, audit). Each
// capability keeps its own tables in its own package (internal/hoststore,
// internal/vulnstore, internal/brandstore) built on this one; the
// differences between the two engines are methods of Dialect (dialect.go),
// the SQL helpers the capabilities share are in sqlhelp.go.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "modernc.org/sqlite"             // registers the "sqlite" driver
)

//go:embed migrations
var migrations embed.FS

// Store is the database. It is safe for concurrent use.
type Store struct {
	db      *sql.DB
	dialect dialect
	// path is the SQLite main file's path ("" on PostgreSQL); files
	// names the files attached to it (the Files option).
	path  string
	files []string
	// moveRows: rows MoveToFile copies a transaction (0: moveRows; tests
	// make it small).
	moveRows int
	stmts    sync.Map // query text → *sql.Stmt, for hot queries
	auth     authCache
	// feeds is the module of Feed's virtual tables (nil on PostgreSQL).
	feeds *feedModule
	// stopCheckpoints ends the SQLite checkpointer; checkpointsDone is
	// closed when it has.
	stopCheckpoints context.CancelFunc
	checkpointsDone chan struct{}
	// replicas serve the reads of requests marked with ReplicaReads
	// (replica.go); nil without any.
	replicas *replicaSet
	// Now is the clock; tests replace it.
	Now func() time.Time
}

// Open opens the database named by dsn: a postgres:// (or postgresql://) URL
// for PostgreSQL, anything else a SQLite file path (":memory:" is refused:
// each connection would get its own database).
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	d := dialectFor(dsn)
	if !d.files() {
		o.files = nil
	}
	for _, f := range o.files {
		if !validFile(f) {
			return nil, fmt.Errorf("open %s database: file name %q: want lower-case letters, digits and _", d.name(), f)
		}
	}
	o.feeds = &feedModule{}
	db, err := d.open(dsn, o)
	if err != nil {
		return nil, fmt.Errorf("open %s database: %w", d.name(), err)
	}
	d.configure(db)
	s := &Store{db: db, dialect: d, files: o.files, Now: time.Now}
	if d.files() {
		s.path = dsn
	}
	if d.feeds() {
		s.feeds = o.feeds
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to %s database: %w", d.name(), err)
	}
	if err := s.openReplicas(ctx, o.replicas, o.replicaMaxLag); err != nil {
		db.Close()
		return nil, err
	}
	if d.checkpoints() {
		cctx, stop := context.WithCancel(context.Background())
		s.stopCheckpoints, s.checkpointsDone = stop, make(chan struct{})
		go s.checkpointLoop(cctx)
	}
	return s, nil
}

// Option changes how Open sets up the database.
type Option func(*options)

type options struct {
	cacheMiB int
	mmapMiB  int
	files    []string
	// fileCacheKiB is the page cache of files whose set names one
	// (MigrationSet.FileCacheKiB), used unless PageCacheMiB is given.
	fileCacheKiB map[string]int
	// feeds is the module Open registers for Feed (set by Open itself).
	feeds *feedModule
	// replicas are read replicas' DSNs (Replicas).
	replicas      []string
	replicaMaxLag time.Duration
	// busyTimeout is SQLite's busy timeout (BusyTimeout).
	busyTimeout time.Duration
}

// defaultBusyTimeout is how long a SQLite statement waits for a lock
// another connection holds before it fails busy.
const defaultBusyTimeout = 10 * time.Second

// BusyTimeout sets how long, on SQLite, a statement waits for the write
// lock another connection (or process) holds before it fails busy: a
// request then answers 503, a Patient writer waits again. Default 10 s.
func BusyTimeout(d time.Duration) Option {
	return func(o *options) { o.busyTimeout = d }
}

// Files attaches, on SQLite, the file of every set among sets that keeps
// its tables in a file of its own (MigrationSet.File) to every connection,
// creating it when missing; PostgreSQL ignores it. A store migrated with
// such a set must be opened with it.
func Files(sets ...MigrationSet) Option {
	return func(o *options) {
		for _, set := range sets {
			if set.File != "" && !slices.Contains(o.files, set.File) {
				o.files = append(o.files, set.File)
			}
			if set.File != "" && set.FileCacheKiB > 0 {
				if o.fileCacheKiB == nil {
					o.fileCacheKiB = map[string]int{}
				}
				o.fileCacheKiB[set.File] = set.FileCacheKiB
			}
		}
	}
}

// validFile reports whether name can be a schema name in SQL as it is.
func validFile(name string) bool {
	if name == "" || name == "main" || name == "temp" || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// FilePaths lists the SQLite files the store keeps its data in, the main
// file first ("-wal" and "-shm" files beside each while it is open); nil
// on PostgreSQL. Backups copy them all, together.
func (s *Store) FilePaths() []string {
	if s.path == "" {
		return nil
	}
	paths := []string{s.path}
	for _, f := range s.files {
		paths = append(paths, FilePath(s.path, f))
	}
	return paths
}

// PageCacheMiB sets SQLite's page cache per connection (the default is
// 64 MiB; PostgreSQL ignores it). A bulk ingest's writer touches index
// pages all over the file: with 256 MiB it reads and spills far fewer of
// them (1M hosts: 12.5k → 16k hosts/s, BENCHMARKS.md). A cache only grows
// as a connection reads, so it costs memory only where it is used.
func PageCacheMiB(n int) Option { return func(o *options) { o.cacheMiB = n } }

// MmapMiB has SQLite read up to n MiB of the database file through a
// memory map (PRAGMA mmap_size) instead of read calls into each
// connection's page cache; 0, the default, reads. PostgreSQL ignores it.
func MmapMiB(n int) Option { return func(o *options) { o.mmapMiB = n } }

// checkpointInterval is how often the SQLite checkpointer runs.
const checkpointInterval = 200 * time.Millisecond

// checkpointLoop copies what SQLite's write-ahead log holds into the
// database file, from its own goroutine, so that writers never do it inside
// their commits (the connections' automatic checkpoint is set far out, as a
// safety net): a large write transaction commits and returns while its
// pages are copied on another core. PASSIVE: it never waits for readers or
// writers. Without a schema name the pragma checkpoints every attached
// file too (Files).
func (s *Store) checkpointLoop(ctx context.Context) {
	defer close(s.checkpointsDone)
	t := time.NewTicker(checkpointInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			var busy, logged, done int
			// Best effort: a failed checkpoint leaves the log longer.
			s.db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &logged, &done)
		}
	}
}

// Close closes the database.
func (s *Store) Close() error {
	if s.stopCheckpoints != nil {
		s.stopCheckpoints()
		<-s.checkpointsDone
	}
	if s.replicas != nil {
		s.replicas.close()
	}
	s.stmts.Range(func(_, v any) bool {
		v.(*sql.Stmt).Close()
		return true
	})
	return s.db.Close()
}

// prepared returns a prepared statement for a hot query (written with ?
// placeholders), preparing it once; database/sql re-prepares it on each
// pooled connection as needed. Parsing SQL is most of a point query's cost.
func (s *Store) prepared(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := s.stmts.Load(q); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := s.db.PrepareContext(ctx, s.dialect.rebind(q))
	if err != nil {
		return nil, err
	}
	if prev, loaded := s.stmts.LoadOrStore(q, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// QueryRowPrepared runs a hot one-row query through a cached prepared statement.
func (s *Store) QueryRowPrepared(ctx context.Context, q string, args ...any) (*sql.Row, error) {
	if r := s.reader(ctx); r != nil {
		if row, err := r.queryRowPrepared(ctx, s.dialect.rebind(q), args...); err == nil {
			return row, nil
		}
	}
	st, err := s.prepared(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryRowContext(ctx, args...), nil
}

// ExecPrepared runs a hot statement through a cached prepared statement.
func (s *Store) ExecPrepared(ctx context.Context, q string, args ...any) (sql.Result, error) {
	st, err := s.prepared(ctx, q)
	if err != nil {
		return nil, err
	}
	return inTurn(ctx, func() (sql.Result, error) { return st.ExecContext(ctx, args...) })
}

// Dialect returns the engine's differences, for capability packages.
func (s *Store) Dialect() Dialect { return s.dialect }

// DB returns the underlying handle, for packages of capabilities that keep
// their own tables (they use Rebind for placeholders).
func (s *Store) DB() *sql.DB { return s.db }

// Rebind rewrites ? placeholders for the store's engine.
func (s *Store) Rebind(q string) string { return s.dialect.rebind(q) }

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Exec runs a statement written with ? placeholders.
func (s *Store) Exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return s.exec(ctx, q, args...)
}

// Query runs a query written with ? placeholders.
func (s *Store) Query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return s.query(ctx, q, args...)
}

// QueryRow runs a one-row query written with ? placeholders.
func (s *Store) QueryRow(ctx context.Context, q string, args ...any) *sql.Row {
	return s.queryRow(ctx, q, args...)
}

func (s *Store) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	q = s.dialect.rebind(q)
	return inTurn(ctx, func() (sql.Result, error) { return s.db.ExecContext(ctx, q, args...) })
}

func (s *Store) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	q = s.dialect.rebind(q)
	if r := s.reader(ctx); r != nil {
		rows, err := r.db.QueryContext(ctx, q, args...)
		if err == nil || ctx.Err() != nil {
			return rows, err
		}
		// The replica failed under the request: the primary answers.
		r.failed(err)
	}
	return s.db.QueryContext(ctx, q, args...)
}

func (s *Store) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	q = s.dialect.rebind(q)
	if r := s.reader(ctx); r != nil {
		return r.db.QueryRowContext(ctx, q, args...)
	}
	return s.db.QueryRowContext(ctx, q, args...)
}

// Tx runs fn in a transaction, committing when fn returns nil.
func (s *Store) Tx(ctx context.Context, fn func(tx *Tx) error) error {
	sqlTx, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	tx := &Tx{tx: sqlTx, d: s.dialect, s: s}
	if err := fn(tx); err != nil {
		sqlTx.Rollback()
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// begin starts a transaction: on SQLite, BEGIN IMMEDIATE takes the write
// lock, waiting for it in turn (Patient).
func (s *Store) begin(ctx context.Context) (*sql.Tx, error) {
	return inTurn(ctx, func() (*sql.Tx, error) { return s.db.BeginTx(ctx, nil) })
}

// Tx is a transaction with the store's placeholder rebinding.
type Tx struct {
	tx    *sql.Tx
	d     dialect
	stmts map[string]*sql.Stmt
	s     *Store
	// conn is the connection a transaction from Begin holds for itself,
	// so CopyFrom can reach the driver; nil for Store.Tx's.
	conn *sql.Conn
}

// prepared returns a statement prepared for the rest of the transaction
// (written with ? placeholders), preparing it once: a batch that runs the
// same statement many times parses it once.
func (t *Tx) prepared(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := t.stmts[q]; ok {
		return st, nil
	}
	st, err := t.tx.PrepareContext(ctx, t.d.rebind(q))
	if err != nil {
		return nil, err
	}
	if t.stmts == nil {
		t.stmts = map[string]*sql.Stmt{}
	}
	t.stmts[q] = st
	return st, nil
}

// Begin starts a transaction the caller ends with Commit or Rollback, for
// writers that span several calls (a host bulk load); Tx is simpler
// otherwise. The transaction holds a connection of its own, so it can
// CopyFrom.
func (s *Store) Begin(ctx context.Context) (*Tx, error) {
	c, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin transaction: %w", err)
	}
	sqlTx, err := inTurn(ctx, func() (*sql.Tx, error) { return c.BeginTx(ctx, nil) })
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("begin transaction: %w", err)
	}
	return &Tx{tx: sqlTx, d: s.dialect, s: s, conn: c}, nil
}

// Commit commits a transaction from Begin.
func (t *Tx) Commit() error {
	err := t.tx.Commit()
	t.release()
	return err
}

// Rollback rolls a transaction from Begin back.
func (t *Tx) Rollback() error {
	err := t.tx.Rollback()
	t.release()
	return err
}

// minCopyRows is the fewest rows Tx.CopyFrom copies: a COPY costs two
// round trips (the table's column types, then the rows), a prepared
// INSERT of a few rows one.
const minCopyRows = 32

// release hands Begin's connection back to the pool once the transaction
// has ended.
func (t *Tx) release() {
	if t.conn != nil {
		t.conn.Close()
		t.conn = nil
	}
}

// CopyFrom writes rows (values in the order of cols) into table through
// PostgreSQL's COPY, inside the transaction, and reports true; on SQLite,
// in a transaction from Store.Tx, or for fewer than minCopyRows rows, it
// writes nothing and reports false (the caller inserts). See
// Dialect.CopyFrom.
func (t *Tx) CopyFrom(ctx context.Context, table string, cols []string, rows [][]any) (bool, error) {
	if t.conn == nil || len(rows) < minCopyRows {
		return false, nil
	}
	return t.d.CopyFrom(ctx, t.conn, table, cols, rows)
}

// Dialect returns the engine's differences.
func (t *Tx) Dialect() Dialect { return t.d }

// Prepared is prepared for capability packages.
func (t *Tx) Prepared(ctx context.Context, q string) (*sql.Stmt, error) { return t.prepared(ctx, q) }

// Exec runs a statement written with ? placeholders.
func (t *Tx) Exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return t.tx.ExecContext(ctx, t.d.rebind(q), args...)
}

// Query runs a query written with ? placeholders.
func (t *Tx) Query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return t.tx.QueryContext(ctx, t.d.rebind(q), args...)
}

// QueryRow runs a one-row query written with ? placeholders.
func (t *Tx) QueryRow(ctx context.Context, q string, args ...any) *sql.Row {
	return t.tx.QueryRowContext(ctx, t.d.rebind(q), args...)
}

// Migration is one schema change of one engine.
type Migration struct {
	Version int
	Name    string
	SQL     string
	// Step, when set, runs after SQL in the same transaction: a data move
	// SQL cannot express.
	Step func(context.Context, *Tx) error
	// After, when set, runs after the migration's transaction has
	// committed, and again at every Migrate until the store is closed
	// (see MigrationSet.After).
	After func(context.Context, *Store) error
}

// MigrationSet is one capability's schema: files named NNNN_name.sql in the
// directories sqlite/ and postgres/ of FS, and the Go steps of some of its
// versions. Versions are unique across every set of the application (the
// runner refuses a repeat) and never change once released: a database
// records each version it has applied in schema_migrations.
type MigrationSet struct {
	Name  string
	FS    fs.FS
	Steps map[int]func(context.Context, *Tx) error
	// After holds work of some versions too large for one transaction,
	// or that must commit in one file before it changes another (a
	// transaction over attached SQLite files commits each file on its
	// own): Migrate runs it after the version's transaction, every time,
	// so it must be quick once done and safe to run again after an
	// interruption.
	After map[int]func(context.Context, *Store) error
	// File, when set, keeps the set's tables on SQLite in a database file
	// of their own next to the main one (FilePath), attached to every
	// connection as the schema File (open the store with Files): the
	// set's SQLite migrations create its tables as File.table, its
	// queries name them unqualified (SQLite finds a table the main file
	// lacks in the attached ones). Writes to the main file then leave the
	// set's pages in every connection's cache: SQLite drops a
	// connection's whole cache of a file whenever another connection has
	// written to it. PostgreSQL ignores it.
	File string
	// FileCacheKiB, when set, is SQLite's page cache per connection for
	// File, in KiB, unless the store is opened with PageCacheMiB (a bulk
	// writer's setting, which then holds for every file). The cgo-free
	// SQLite's page cache gets slower as it grows (one lock and one LRU
	// list for every connection's cache), so a file read a page a row at
	// random over gigabytes, which no cache of a useful size holds, reads
	// faster with a small one (BENCHMARKS.md's git history).
	FileCacheKiB int
}

// coreMigrations is the schema of what every capability shares.
func coreMigrations() MigrationSet {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return MigrationSet{Name: "core", FS: sub}
}

// Migrations lists the migrations of the core and of sets for the store's
// engine, in version order.
func (s *Store) Migrations(sets ...MigrationSet) ([]Migration, error) {
	var ms []Migration
	for _, set := range append([]MigrationSet{coreMigrations()}, sets...) {
		got, err := set.migrations(s.dialect.name())
		if err != nil {
			return nil, err
		}
		ms = append(ms, got...)
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i := 1; i < len(ms); i++ {
		if ms[i].Version == ms[i-1].Version {
			return nil, fmt.Errorf("migrations %s and %s share a number", ms[i-1].Name, ms[i].Name)
		}
	}
	return ms, nil
}

func (set MigrationSet) migrations(engine string) ([]Migration, error) {
	entries, err := fs.ReadDir(set.FS, engine)
	if err != nil {
		return nil, fmt.Errorf("read %s migrations: %w", set.Name, err)
	}
	var ms []Migration
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s/%s: name must start with a number and _", set.Name, e.Name())
		}
		b, err := fs.ReadFile(set.FS, path.Join(engine, e.Name()))
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: e.Name(), SQL: string(b), Step: set.Steps[v], After: set.After[v]})
	}
	return ms, nil
}

// Migrate applies the migrations of the core and of sets not yet recorded
// in schema_migrations, each in its own transaction, and returns the names
// it applied.
func (s *Store) Migrate(ctx context.Context, sets ...MigrationSet) ([]string, error) {
	for _, set := range sets {
		if set.File != "" && s.dialect.files() && !slices.Contains(s.files, set.File) {
			return nil, fmt.Errorf("migrate %s: the store was opened without its file %q (store.Files)", set.Name, set.File)
		}
	}
	if _, err := s.exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
		return nil, fmt.Errorf("create schema_migrations: %w", err)
	}
	ms, err := s.Migrations(sets...)
	if err != nil {
		return nil, err
	}
	var applied []string
	for _, m := range ms {
		err := s.Tx(ctx, func(tx *Tx) error {
			if err := s.dialect.lockMigrations(ctx, tx); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, m.Version).Scan(&n); err != nil {
				return fmt.Errorf("read schema_migrations: %w", err)
			}
			if n > 0 {
				return errSkip
			}
			if _, err := tx.tx.ExecContext(ctx, m.SQL); err != nil {
				return fmt.Errorf("apply migration %s: %w", m.Name, err)
			}
			if m.Step != nil {
				if err := m.Step(ctx, tx); err != nil {
					return fmt.Errorf("apply migration %s: %w", m.Name, err)
				}
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				m.Version, m.Name, s.Now().Unix())
			return err
		})
		if err != nil && !errors.Is(err, errSkip) {
			return applied, err
		}
		if err == nil {
			applied = append(applied, m.Name)
		}
		if m.After != nil {
			if err := m.After(ctx, s); err != nil {
				return applied, fmt.Errorf("finish migration %s: %w", m.Name, err)
			}
		}
	}
	return applied, nil
}

var errSkip = errors.New("skip")

// Writer locks: the capabilities whose writes read before they insert
// (merging hosts, upserting CVEs, certificates and findings) take turns on
// PostgreSQL, as BEGIN IMMEDIATE makes every writer do on SQLite (see
// Dialect.TakeTurns). Without it two writers storing the same new key at
// once fail on the unique index, and counts of inserted and updated rows
// race. The keys are here so that no two capabilities share one.
const (
	LockHosts = 7271938
	LockVulns = 1987407982 // "vuln" in ASCII
	LockBrand = 1651663204 // "brad" in ASCII
	// LockClaims serialises asset claims (AddAsset): the check that no
	// other account claims an overlapping domain or range reads rows that
	// a concurrent claim has not inserted yet, so two overlapping claims
	// would both pass it on PostgreSQL.
	LockClaims = 1668047213 // "clam" in ASCII
)

// Engine is the engine's name, "sqlite" or "postgres", for reports.
func (s *Store) Engine() string { return s.dialect.name() }
