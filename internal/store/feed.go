package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"modernc.org/sqlite/vtab"
)

// Rows is a stream of rows computed in Go that a SQLite statement reads
// through Feed. Next moves to the next row and reports false at the end
// (Err then says whether the stream stopped on an error); Column returns
// column i of the current row as nil (NULL), int64 or []byte, valid until
// the next call to Next.
type Rows interface {
	Next() bool
	Column(i int) any
	Err() error
}

// ErrNoFeed is returned by Feed on PostgreSQL, whose bulk path is COPY
// (Dialect.CopyFrom).
var ErrNoFeed = errors.New("row feeds are a SQLite feature")

// feedModuleName is the virtual table module that Feed's tables use,
// registered on every SQLite connection of the store.
const feedModuleName = "periscope_feed"

// feedModule is the virtual table module behind Feed: one SQLite
// statement (INSERT ... SELECT ... FROM the feed) reads a stream of rows
// from Go, instead of many multi-row statements whose every value
// database/sql converts and the driver binds. At a hundred million index
// rows the binding was a third of an insert's cost.
type feedModule struct {
	mu    sync.Mutex
	next  int64
	feeds map[int64]Rows
}

// Feed makes rows readable, once, on tx's connection as the table whose
// name it returns, with the columns cols (names made of letters, digits
// and _), until done is called; done drops the table, in tx, and must be
// called before tx ends. SQLite only (ErrNoFeed on PostgreSQL).
func (s *Store) Feed(ctx context.Context, tx *sql.Tx, cols []string, rows Rows) (name string, done func() error, err error) {
	if s.feeds == nil {
		return "", nil, ErrNoFeed
	}
	for _, c := range cols {
		if !plainName(c) {
			return "", nil, fmt.Errorf("feed column %q: want letters, digits and _", c)
		}
	}
	id := s.feeds.add(rows)
	name = "temp.periscope_feed_" + strconv.FormatInt(id, 10)
	q := "CREATE VIRTUAL TABLE " + name + " USING " + feedModuleName + "(" + strconv.FormatInt(id, 10) + ", " + strings.Join(cols, ", ") + ")"
	if _, err := tx.ExecContext(ctx, q); err != nil {
		s.feeds.remove(id)
		return "", nil, fmt.Errorf("create row feed: %w", err)
	}
	done = func() error {
		defer s.feeds.remove(id)
		if _, err := tx.ExecContext(context.WithoutCancel(ctx), "DROP TABLE "+name); err != nil {
			return fmt.Errorf("drop row feed: %w", err)
		}
		return nil
	}
	return name, done, nil
}

func plainName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func (m *feedModule) add(rows Rows) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.feeds == nil {
		m.feeds = map[int64]Rows{}
	}
	m.next++
	m.feeds[m.next] = rows
	return m.next
}

func (m *feedModule) remove(id int64) {
	m.mu.Lock()
	delete(m.feeds, id)
	m.mu.Unlock()
}

// Create is xCreate: args are the module, database and table names, then
// the feed's id and its columns.
func (m *feedModule) Create(ctx vtab.Context, args []string) (vtab.Table, error) {
	if len(args) < 5 {
		return nil, errors.New("row feed: want an id and columns")
	}
	id, err := strconv.ParseInt(strings.TrimSpace(args[3]), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("row feed id: %w", err)
	}
	cols := make([]string, 0, len(args)-4)
	for _, c := range args[4:] {
		if c = strings.TrimSpace(c); !plainName(c) {
			return nil, fmt.Errorf("row feed column %q", c)
		}
		cols = append(cols, c)
	}
	if err := ctx.Declare("CREATE TABLE x(" + strings.Join(cols, ", ") + ")"); err != nil {
		return nil, err
	}
	m.mu.Lock()
	rows := m.feeds[id]
	m.mu.Unlock()
	return &feedTable{rows: rows}, nil
}

// Connect is xConnect (a connection re-reading its schema): the same table.
func (m *feedModule) Connect(ctx vtab.Context, args []string) (vtab.Table, error) {
	return m.Create(ctx, args)
}

// feedTable is a feed's table; rows is nil once the feed is gone (it then
// reads as empty).
type feedTable struct{ rows Rows }

func (t *feedTable) BestIndex(info *vtab.IndexInfo) error {
	info.EstimatedCost = 1e9
	return nil
}

func (t *feedTable) Open() (vtab.Cursor, error) { return &feedCursor{rows: t.rows}, nil }
func (t *feedTable) Disconnect() error          { return nil }
func (t *feedTable) Destroy() error             { return nil }

// feedCursor reads a feed's rows; a second scan finds none left.
type feedCursor struct {
	rows Rows
	eof  bool
	n    int64
}

func (c *feedCursor) Filter(int, string, []vtab.Value) error { return c.Next() }

func (c *feedCursor) Next() error {
	if c.rows == nil || !c.rows.Next() {
		c.eof = true
		if c.rows != nil {
			return c.rows.Err()
		}
		return nil
	}
	c.n++
	return nil
}

func (c *feedCursor) Eof() bool { return c.eof }

func (c *feedCursor) Column(i int) (vtab.Value, error) { return c.rows.Column(i), nil }

func (c *feedCursor) Rowid() (int64, error) { return c.n, nil }

func (c *feedCursor) Close() error { return nil }
