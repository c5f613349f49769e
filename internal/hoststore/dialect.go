package hoststore

import (
	"context"
	"database/sql"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/periscope-oss/periscope/internal/store"
)

// dialect is how the host tables' SQL differs by engine.
type dialect interface {
	// storedNames calls collect on the name of every host whose reversed-
	// label key is among keys.
	storedNames(ctx context.Context, tx *store.Tx, keys []string, collect func(*sql.Rows) error) error
	// explicitIDs says whether inserts give new hosts their ids (PostgreSQL)
	// rather than leaving them to the table (SQLite: an explicit id would
	// make the insert a statement that can abort, and so journalled).
	explicitIDs() bool
	// syncIDs keeps the id sequence past the ids taken, for any other
	// writer (PostgreSQL; SQLite's ids follow the table).
	syncIDs(ctx context.Context, tx *store.Tx) error
	// inIDs is the condition "col is one of ids", with its one argument.
	inIDs(col string, ids []int64) (string, any)
	// analyze refreshes the planner statistics of the host index after a
	// bulk load ("" for nothing).
	analyze() string
}

func dialectOf(d store.Dialect) dialect {
	if d.Name() == "postgres" {
		return pgDialect{}
	}
	return sqliteDialect{}
}

type sqliteDialect struct{}

// storedNames binds one JSON argument rather than hundreds one by one.
func (sqliteDialect) storedNames(ctx context.Context, tx *store.Tx, keys []string, collect func(*sql.Rows) error) error {
	js, err := json.Marshal(keys)
	if err != nil {
		return err
	}
	rows, err := tx.Query(ctx, `SELECT name FROM hosts WHERE rkey IN (SELECT value FROM json_each(?))`, string(js))
	if err != nil {
		return err
	}
	for rows.Next() && err == nil {
		err = collect(rows)
	}
	rows.Close()
	if err == nil {
		err = rows.Err()
	}
	return err
}

func (sqliteDialect) explicitIDs() bool                        { return false }
func (sqliteDialect) syncIDs(context.Context, *store.Tx) error { return nil }

// inIDs takes the ids as a JSON array.
func (sqliteDialect) inIDs(col string, ids []int64) (string, any) {
	return col + " IN (SELECT value FROM json_each(?))", "[" + joinIDs(ids) + "]"
}

// analyze: SQLite needs nothing, its host queries fix their join order.
func (sqliteDialect) analyze() string { return "" }

type pgDialect struct{}

func (pgDialect) storedNames(ctx context.Context, tx *store.Tx, keys []string, collect func(*sql.Rows) error) error {
	return store.QueryIn(ctx, tx, `SELECT name FROM hosts WHERE rkey IN (%s)`, keys, collect)
}

func (pgDialect) explicitIDs() bool { return true }

func (pgDialect) syncIDs(ctx context.Context, tx *store.Tx) error {
	_, err := tx.Exec(ctx, `SELECT setval(pg_get_serial_sequence('hosts', 'id'), (SELECT COALESCE(MAX(id), 1) FROM hosts))`)
	return err
}

// inIDs takes the ids as an array literal.
func (pgDialect) inIDs(col string, ids []int64) (string, any) {
	return col + " = ANY(?::bigint[])", "{" + joinIDs(ids) + "}"
}

func (pgDialect) analyze() string { return `ANALYZE hosts, host_postings` }

func joinIDs(ids []int64) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	return b.String()
}
