package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Dialect holds the differences between the two engines that the core and
// every capability share. A capability's own SQL that differs by engine
// (full-text search, say) is a method of that package's dialect, chosen
// once by Name.
type Dialect interface {
	// Name is "sqlite" or "postgres".
	Name() string
	// Rebind rewrites ? placeholders for the engine.
	Rebind(q string) string
	// TakeTurns makes tx wait for, then hold until it ends, the writer
	// lock key (constants Lock* in store.go): PostgreSQL writers that read
	// before they insert take turns, as every SQLite writer does from
	// BEGIN IMMEDIATE.
	TakeTurns(ctx context.Context, tx *Tx, key int64) error
	// InsertIgnoring is a multi-row INSERT INTO of rest (table, columns
	// and values) that leaves out the rows whose key (the columns of
	// conflict) is stored. On SQLite it is INSERT OR IGNORE: a statement
	// that cannot abort needs no statement journal, which otherwise copies
	// every page the statement first touches (half the cost of a batch
	// insert into a large index).
	InsertIgnoring(rest, conflict string) string
	// VacuumAnalyze is the statement that refreshes the planner's
	// statistics and visibility map of tables after a bulk load
	// (PostgreSQL; "" on SQLite, which needs neither).
	VacuumAnalyze(tables ...string) string
	// SingleProcess reports whether only one process serves the database
	// (SQLite), so background work needs no lease between instances.
	SingleProcess() bool
	// SkipLocked is the clause ending a SELECT ... FOR UPDATE that leases
	// rows no other transaction holds (PostgreSQL); "" on SQLite, whose
	// one writer at a time leaves nothing to skip.
	SkipLocked() string
	// CopyFrom writes rows (values in the order of cols) into table
	// through PostgreSQL's COPY on c, inside the transaction c has open,
	// and reports true; on SQLite it writes nothing and reports false (the
	// caller inserts). COPY sends the rows as one binary stream: no
	// statement to parse, plan or execute a batch.
	CopyFrom(ctx context.Context, c *sql.Conn, table string, cols []string, rows [][]any) (bool, error)

	name() string
	// open returns the handle of the database dsn names, with the files
	// of o attached to every connection where the engine has files.
	open(dsn string, o options) (*sql.DB, error)
	// files reports whether capabilities' sets can keep their tables in
	// files of their own (MigrationSet.File): SQLite.
	files() bool
	// feeds reports whether the engine reads Feed's virtual tables
	// (SQLite).
	feeds() bool
	configure(*sql.DB)
	rebind(string) string
	// strpos is the SQL expression of the 1-based position of sub in s,
	// 0 when absent.
	strpos(s, sub string) string
	lockMigrations(context.Context, *Tx) error
	// checkpoints says whether the store runs its own WAL checkpointer
	// (Store.checkpointLoop).
	checkpoints() bool
	// indexDef returns the statement that creates the index name, as the
	// catalog keeps it; ok is false when no such index exists (or it
	// belongs to a constraint, which has no statement of its own).
	indexDef(ctx context.Context, tx *Tx, name string) (def string, ok bool, err error)
	// indexBuildPragmas are the statements run on a connection of its own
	// before it builds a large index; the connection is discarded after.
	indexBuildPragmas() []string
}

type dialect = Dialect

func dialectFor(dsn string) dialect {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return postgres{}
	}
	return sqliteDialect{}
}

type sqliteDialect struct{}

func (sqliteDialect) name() string { return "sqlite" }
func (sqliteDialect) files() bool  { return true }
func (sqliteDialect) feeds() bool  { return true }

// open opens the SQLite file at path through a driver of the store's own,
// whose connection hook attaches the files of o's sets to every new
// connection (ATTACH is a property of a connection, not of the file) and
// sets their pragmas: the DSN's pragmas reach the main file only. The
// module of Feed's virtual tables is registered on that driver too (a
// module registered on the package's shared driver would be shared by
// every store of the process).
func (d sqliteDialect) open(path string, o options) (*sql.DB, error) {
	if err := createPrivate(path, o.files); err != nil {
		return nil, err
	}
	drv := &sqlite.Driver{}
	if err := drv.RegisterModule(feedModuleName, o.feeds); err != nil {
		return nil, err
	}
	var stmts [][2]string // statement, file path it binds ("" for none)
	for _, name := range o.files {
		stmts = append(stmts,
			[2]string{"ATTACH DATABASE ? AS " + name, "file:" + escapeURIPath(FilePath(path, name))},
			[2]string{"PRAGMA " + name + ".journal_mode = WAL"},
			[2]string{"PRAGMA " + name + ".synchronous = NORMAL"},
			[2]string{fmt.Sprintf("PRAGMA %s.cache_size = %d", name, -fileCacheKiB(o, name))})
		if o.mmapMiB > 0 {
			stmts = append(stmts, [2]string{fmt.Sprintf("PRAGMA %s.mmap_size = %d", name, int64(o.mmapMiB)<<20)})
		}
	}
	if len(stmts) > 0 {
		drv.RegisterConnectionHook(func(c sqlite.ExecQuerierContext, _ string) error {
			for _, st := range stmts {
				var args []driver.NamedValue
				if st[1] != "" {
					args = []driver.NamedValue{{Ordinal: 1, Value: st[1]}}
				}
				if _, err := c.ExecContext(context.Background(), st[0], args); err != nil {
					return fmt.Errorf("%s: %w", st[0], err)
				}
			}
			return nil
		})
	}
	return sql.OpenDB(sqliteConnector{drv: drv, dsn: d.dsn(path, o)}), nil
}

// createPrivate creates the database file at path and its attached files
// that do not exist yet, readable by their owner only (0600): they hold
// accounts, audit records and sealed breach data. SQLite gives a
// database's -wal and -shm files the mode of the database file.
func createPrivate(path string, files []string) error {
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil
	}
	paths := []string{path}
	for _, name := range files {
		paths = append(paths, FilePath(path, name))
	}
	// A new database beside an attached file of an earlier one would take
	// that file's tables as its own half-migrated ones: refuse, and say so.
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		for _, p := range paths[1:] {
			if _, err := os.Stat(p); err == nil {
				return fmt.Errorf("%s does not exist but %s, a file of an earlier database at that path, does: move it away (or delete it) to start a new database there", path, p)
			}
		}
	}
	for _, p := range paths {
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("create %s: %w", p, err)
		}
		f.Close()
	}
	return nil
}

// sqliteConnector opens connections through the store's own driver.
type sqliteConnector struct {
	drv *sqlite.Driver
	dsn string
}

func (c sqliteConnector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c sqliteConnector) Driver() driver.Driver                        { return c.drv }

// FilePath is the SQLite file a set with File name keeps its tables in,
// next to the main file at path: periscope.db → periscope-darkweb.db.
func FilePath(path, name string) string {
	ext := filepath.Ext(path)
	if strings.ContainsAny(ext, `/\`) {
		ext = ""
	}
	return strings.TrimSuffix(path, ext) + "-" + name + ext
}

// escapeURIPath escapes the characters URIs give a meaning to in a file
// path.
func escapeURIPath(path string) string {
	return strings.NewReplacer("%", "%25", "#", "%23", "?", "%3f").Replace(path)
}

// fileCacheKiB is the page cache per connection of the attached file name:
// its set's FileCacheKiB unless PageCacheMiB was given, else cacheMiB.
func fileCacheKiB(o options, name string) int {
	if n := o.fileCacheKiB[name]; n > 0 && o.cacheMiB == 0 {
		return n
	}
	return 1024 * cacheMiB(o)
}

func cacheMiB(o options) int {
	if o.cacheMiB > 0 {
		return o.cacheMiB
	}
	return 64
}

func (sqliteDialect) dsn(path string, o options) string {
	cache := cacheMiB(o)
	q := url.Values{}
	busy := o.busyTimeout
	if busy <= 0 {
		busy = defaultBusyTimeout
	}
	for _, p := range []string{"journal_mode(WAL)", "foreign_keys(1)", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()), "synchronous(NORMAL)",
		// Statement journals and sorts in memory and a 64 MiB page cache
		// per connection unless PageCacheMiB says otherwise. The store's
		// own checkpointer (Store.checkpointLoop) keeps the WAL short; a
		// connection checkpoints in its commit only past 1 GiB of WAL,
		// when that falls behind.
		"temp_store(MEMORY)", fmt.Sprintf("cache_size(%d)", -1024*cache), "wal_autocheckpoint(262144)"} {
		q.Add("_pragma", p)
	}
	if o.mmapMiB > 0 {
		q.Add("_pragma", fmt.Sprintf("mmap_size(%d)", int64(o.mmapMiB)<<20))
	}
	// Write transactions take the write lock at BEGIN, so two writers never
	// deadlock upgrading read locks; the busy timeout queues them instead.
	q.Set("_txlock", "immediate")
	// The path is a URI path: escape the characters URIs give a meaning to.
	return "file:" + escapeURIPath(path) + "?" + q.Encode()
}

func (sqliteDialect) configure(db *sql.DB) {
	n := 2 * runtime.GOMAXPROCS(0)
	if n < 4 {
		n = 4
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
}

func (sqliteDialect) rebind(q string) string { return q }

func (sqliteDialect) strpos(s, sub string) string { return "INSTR(" + s + ", " + sub + ")" }

func (d sqliteDialect) Name() string                              { return d.name() }
func (d sqliteDialect) Rebind(q string) string                    { return d.rebind(q) }
func (sqliteDialect) TakeTurns(context.Context, *Tx, int64) error { return nil }
func (sqliteDialect) InsertIgnoring(rest, _ string) string        { return "INSERT OR IGNORE INTO " + rest }
func (sqliteDialect) VacuumAnalyze(...string) string              { return "" }
func (sqliteDialect) SingleProcess() bool                         { return true }
func (sqliteDialect) SkipLocked() string                          { return "" }
func (sqliteDialect) checkpoints() bool                           { return true }

func (sqliteDialect) CopyFrom(context.Context, *sql.Conn, string, []string, [][]any) (bool, error) {
	return false, nil
}

func (sqliteDialect) lockMigrations(context.Context, *Tx) error { return nil } // BEGIN IMMEDIATE already serialises

func (sqliteDialect) indexDef(ctx context.Context, tx *Tx, name string) (string, bool, error) {
	return scanIndexDef(tx.QueryRow(ctx, `SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?`, name))
}

// indexBuildPragmas keeps the build's memory small: its sort holds up to
// the page cache's size of keys in memory before it spills a run (to a
// file, not to memory as the service's temporary storage does), and a
// bulk load's connections have a large cache. The connection is not
// reused after (Store.restoreIndex).
func (sqliteDialect) indexBuildPragmas() []string {
	return []string{"PRAGMA temp_store = FILE", "PRAGMA cache_size = -32768"}
}

// indexBuildPragmas: the server sorts within maintenance_work_mem.
func (postgres) indexBuildPragmas() []string { return nil }

func (postgres) indexDef(ctx context.Context, tx *Tx, name string) (string, bool, error) {
	return scanIndexDef(tx.QueryRow(ctx, `SELECT i.indexdef FROM pg_indexes i
		WHERE i.schemaname = current_schema() AND i.indexname = ?
		AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname AND c.connamespace = current_schema()::regnamespace)`, name))
}

func scanIndexDef(row *sql.Row) (string, bool, error) {
	var def sql.NullString
	if err := row.Scan(&def); errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	} else if err != nil {
		return "", false, err
	}
	return def.String, def.Valid && def.String != "", nil
}

type postgres struct{}

func (postgres) name() string { return "postgres" }
func (postgres) files() bool  { return false }
func (postgres) feeds() bool  { return false }

func (d postgres) open(dsn string, o options) (*sql.DB, error) { return sql.Open("pgx", d.dsn(dsn, o)) }

// dsn turns JIT compilation off unless the URL sets it: the index-driven
// queries here are short, and JIT's compile time (tens of milliseconds) is
// then most of a query's cost.
func (postgres) dsn(s string, _ options) string {
	u, err := url.Parse(s)
	if err != nil {
		return s // pgx reports the error with its own message
	}
	q := u.Query()
	if q.Get("jit") == "" {
		q.Set("jit", "off")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

func (postgres) configure(db *sql.DB) {
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(16)
}

// rebind turns ? into $1, $2, ... outside of quoted strings.
func (postgres) rebind(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	n := 0
	inQuote := false
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'':
			inQuote = !inQuote
			b.WriteByte(c)
		case c == '?' && !inQuote:
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func (postgres) strpos(s, sub string) string { return "STRPOS(" + s + ", " + sub + ")" }

func (d postgres) Name() string           { return d.name() }
func (d postgres) Rebind(q string) string { return d.rebind(q) }
func (postgres) SingleProcess() bool      { return false }
func (postgres) SkipLocked() string       { return " FOR UPDATE SKIP LOCKED" }
func (postgres) checkpoints() bool        { return false }

func (postgres) TakeTurns(ctx context.Context, tx *Tx, key int64) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(?)`, key); err != nil {
		return fmt.Errorf("take the writer lock: %w", err)
	}
	return nil
}

func (postgres) InsertIgnoring(rest, conflict string) string {
	return "INSERT INTO " + rest + " ON CONFLICT (" + conflict + ") DO NOTHING"
}

func (postgres) VacuumAnalyze(tables ...string) string {
	return "VACUUM (ANALYZE) " + strings.Join(tables, ", ")
}

func (postgres) CopyFrom(ctx context.Context, c *sql.Conn, table string, cols []string, rows [][]any) (bool, error) {
	err := c.Raw(func(dc any) error {
		conn, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("copy into %s: not a pgx connection (%T)", table, dc)
		}
		_, err := conn.Conn().CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(rows))
		return err
	})
	if err != nil {
		return true, fmt.Errorf("copy into %s: %w", table, err)
	}
	return true, nil
}

func (postgres) lockMigrations(ctx context.Context, tx *Tx) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(7271937)`)
	return err
}

// isUniqueViolation reports whether err is a unique or primary-key violation,
// by the engine's error code.
func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505"
	}
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) {
		c := sqErr.Code()
		return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// IsUniqueViolation is isUniqueViolation for capability packages.
func IsUniqueViolation(err error) bool { return isUniqueViolation(err) }
