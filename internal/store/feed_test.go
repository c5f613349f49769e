package store_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// sliceRows is rows from a slice, optionally failing after fail rows.
type sliceRows struct {
	rows [][]any
	i    int
	fail int
	err  error
}

func (r *sliceRows) Next() bool {
	if r.fail > 0 && r.i == r.fail {
		r.err = errors.New("source broke")
		return false
	}
	r.i++
	return r.i <= len(r.rows)
}

func (r *sliceRows) Column(i int) any { return r.rows[r.i-1][i] }
func (r *sliceRows) Err() error       { return r.err }

func TestFeed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		tx, err := s.DB().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		src := &sliceRows{}
		if s.Dialect().Name() != "sqlite" {
			if _, _, err := s.Feed(ctx, tx, []string{"a"}, src); !errors.Is(err, store.ErrNoFeed) {
				t.Fatalf("Feed on %s: %v, want ErrNoFeed", s.Dialect().Name(), err)
			}
			return
		}
		if _, err := tx.ExecContext(ctx, `CREATE TABLE feed_test (a INTEGER PRIMARY KEY, b BLOB, c INTEGER)`); err != nil {
			t.Fatal(err)
		}
		for i := range 10_000 {
			var c any
			if i%3 == 0 {
				c = int64(-i)
			}
			src.rows = append(src.rows, []any{int64(i), []byte{byte(i), byte(i >> 8)}, c})
		}
		name, done, err := s.Feed(ctx, tx, []string{"a", "b", "c"}, src)
		if err != nil {
			t.Fatal(err)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO feed_test (a, b, c) SELECT a, b, c FROM `+name)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := res.RowsAffected(); n != int64(len(src.rows)) {
			t.Fatalf("inserted %d rows, want %d", n, len(src.rows))
		}
		if err := done(); err != nil {
			t.Fatal(err)
		}
		rows, err := tx.QueryContext(ctx, `SELECT a, b, c FROM feed_test ORDER BY a`)
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		for rows.Next() {
			var a int64
			var b []byte
			var c *int64
			if err := rows.Scan(&a, &b, &c); err != nil {
				t.Fatal(err)
			}
			want := src.rows[i]
			if a != want[0] || !bytes.Equal(b, want[1].([]byte)) || (c == nil) != (want[2] == nil) || c != nil && *c != want[2] {
				t.Fatalf("row %d read back as %d %x %v, want %v", i, a, b, c, want)
			}
			i++
		}
		if err := rows.Err(); err != nil || i != len(src.rows) {
			t.Fatalf("read %d rows back, %v", i, err)
		}
		var left int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM temp.sqlite_schema WHERE name LIKE 'periscope_feed%'`).Scan(&left); err != nil || left != 0 {
			t.Fatalf("%d feed tables left after done, %v", left, err)
		}

		// A source that fails fails the statement.
		broken := &sliceRows{rows: src.rows, fail: 100}
		name, done, err = s.Feed(ctx, tx, []string{"a", "b", "c"}, broken)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO feed_test (a, b, c) SELECT a + 100000, b, c FROM `+name); err == nil {
			t.Fatal("insert from a broken feed succeeded")
		}
		if err := done(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.Feed(ctx, tx, []string{"a; DROP TABLE feed_test"}, src); err == nil {
			t.Fatal("Feed took a column name that is not a name")
		}
	})
}
