package darkwebstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/periscope-oss/periscope/internal/store"
)

// dialect is how the dark-web tables' SQL differs by engine.
type dialect interface {
	// sortsInGo reports whether a build sorts the index rows in Go, a
	// Loader keeping its records' rows in memory for it (SQLite: the
	// engine's sorter over json_each was more than half of a build in the
	// cgo-free driver), rather than inserting them with set-based
	// statements (PostgreSQL).
	sortsInGo() bool
	// lockWriter makes tx hold the dark-web writer lock until it ends
	// (PostgreSQL; SQLite's writers take turns from BEGIN).
	lockWriter(ctx context.Context, tx *sql.Tx) error
	// beginBuild prepares tx for an index build: the writer lock, and
	// whatever the engine's sorts need.
	beginBuild(ctx context.Context, tx *sql.Tx) error
	// stagedKeys is the FROM clause of the staged keys as rows, one per
	// key of darkweb_stage s, and the expression of one key.
	stagedKeys() (from, key string)
	// emptyStage is the statement that empties darkweb_stage.
	emptyStage() string
	// keysIn is the query of the index rows whose key is in a chunk of
	// at most emailChunkKeys keys, with its arguments: cols are the
	// columns selected after i.k, from darkweb_index i joined to
	// darkweb_records r.
	keysIn(cols string, chunk []int64) (string, []any)
	// seqsIn is the query of the records numbered by a chunk of at most
	// seqChunk seqs (cols from darkweb_records r), and seqArgs its
	// arguments for one chunk: one prepared statement serves every chunk.
	seqsIn(cols string) string
	seqArgs(chunk []int64) []any
	// repeatsIn is the query of the emails of a chunk of at most
	// emailChunkKeys email keys that darkweb_repeats holds under the
	// listing key k, with its arguments.
	repeatsIn(k int64, chunk []int64) (string, []any)
}

func dialectOf(d store.Dialect) dialect {
	if d.Name() == "postgres" {
		return pgDialect{}
	}
	return sqliteDialect{}
}

type sqliteDialect struct{}

func (sqliteDialect) sortsInGo() bool                           { return true }
func (sqliteDialect) lockWriter(context.Context, *sql.Tx) error { return nil }
func (sqliteDialect) beginBuild(context.Context, *sql.Tx) error { return nil }
func (sqliteDialect) stagedKeys() (string, string) {
	return `darkweb_stage s, json_each(s.keys) j`, `j.value`
}
func (sqliteDialect) emptyStage() string { return `DELETE FROM darkweb_stage` }
func (sqliteDialect) seqsIn(cols string) string {
	return `SELECT ` + cols + ` FROM darkweb_records r WHERE r.seq IN (` + marks(seqChunk) + `)`
}

// keysIn takes always emailChunkKeys parameters (the first key repeated),
// so one prepared statement serves every chunk.
func (sqliteDialect) keysIn(cols string, chunk []int64) (string, []any) {
	args := make([]any, emailChunkKeys)
	for i := range args {
		args[i] = chunk[0]
		if i < len(chunk) {
			args[i] = chunk[i]
		}
	}
	return `SELECT i.k, ` + cols + `
		FROM darkweb_index i JOIN darkweb_records r ON r.seq = i.rec WHERE i.k IN (` + marks(len(args)) + `)`, args
}

// repeatsIn takes always emailChunkKeys emails (the first repeated), so
// one prepared statement serves every chunk.
func (sqliteDialect) repeatsIn(k int64, chunk []int64) (string, []any) {
	args := make([]any, 1+emailChunkKeys)
	args[0] = k
	for i := range emailChunkKeys {
		args[1+i] = chunk[min(i, len(chunk)-1)]
	}
	return `SELECT x FROM darkweb_repeats WHERE k = ? AND x IN (` + marks(emailChunkKeys) + `)`, args
}

// seqArgs pads the chunk to seqChunk parameters with a seq no record has
// (seq counts from 1).
func (sqliteDialect) seqArgs(chunk []int64) []any {
	args := make([]any, seqChunk)
	for j := range args {
		args[j] = int64(-1)
		if j < len(chunk) {
			args[j] = chunk[j]
		}
	}
	return args
}

type pgDialect struct{}

func (pgDialect) sortsInGo() bool { return false }

func (pgDialect) lockWriter(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, lockDarkweb); err != nil {
		return fmt.Errorf("dark-web writer lock: %w", err)
	}
	return nil
}

func (p pgDialect) beginBuild(ctx context.Context, tx *sql.Tx) error {
	if err := p.lockWriter(ctx, tx); err != nil {
		return err
	}
	// The build sorts every staged key (12 a record): with the default
	// 4 MB of work memory each sort spills to disk in small runs.
	if _, err := tx.ExecContext(ctx, `SET LOCAL work_mem = '256MB'`); err != nil {
		return fmt.Errorf("index build work memory: %w", err)
	}
	return nil
}

func (pgDialect) stagedKeys() (string, string) {
	return `darkweb_stage s, LATERAL json_array_elements_text(s.keys::json) j(v)`, `(j.v)::bigint`
}

// emptyStage empties the stage at once, not row by row: a DELETE leaves
// every staged row dead (10 million after a 10-million-record load) for
// the vacuum after the build to read and free.
func (pgDialect) emptyStage() string { return `TRUNCATE darkweb_stage` }

// keysIn takes one array parameter: a prepared statement's generic plan
// for 500 scalar parameters hash-joined the whole records table (200 ms a
// page at a million records).
func (pgDialect) keysIn(cols string, chunk []int64) (string, []any) {
	return `SELECT i.k, ` + cols + `
		FROM unnest(?::bigint[]) u(k) JOIN darkweb_index i ON i.k = u.k JOIN darkweb_records r ON r.seq = i.rec`, []any{chunk}
}

// seqsIn takes one array parameter (a generic plan for hundreds of scalar
// parameters can scan the whole table).
func (pgDialect) seqsIn(cols string) string {
	return `SELECT ` + cols + ` FROM darkweb_records r WHERE r.seq = ANY(?::bigint[])`
}

func (pgDialect) seqArgs(chunk []int64) []any { return []any{chunk} }

func (pgDialect) repeatsIn(k int64, chunk []int64) (string, []any) {
	return `SELECT x FROM darkweb_repeats WHERE k = ? AND x = ANY(?::bigint[])`, []any{k, chunk}
}
