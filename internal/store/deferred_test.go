package store_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// A deferred index is dropped with its definition kept, and built again
// exactly as it was: by RestoreIndexes, or by RestoreAbandonedIndexes once
// the load that deferred it is gone (a dead process of this machine, or a
// silent heartbeat of another), never while it lives.
func TestDeferIndexes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		for _, q := range []string{
			`CREATE TABLE d (id INTEGER PRIMARY KEY, a TEXT NOT NULL, b BIGINT NOT NULL)`,
			`CREATE INDEX d_a ON d (a)`,
			`CREATE INDEX d_ab ON d (a, b DESC)`,
			`INSERT INTO d (id, a, b) VALUES (1, 'x', 2), (2, 'y', 3)`,
		} {
			if _, err := s.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		before := indexes(t, s)
		if len(before) != 2 {
			t.Fatalf("indexes before: %v", before)
		}
		got, err := s.DeferIndexes(ctx, "d_a", "d_ab", "no_such_index")
		if err != nil || !slices.Equal(got, []string{"d_a", "d_ab"}) {
			t.Fatalf("DeferIndexes = %v, %v", got, err)
		}
		if ix := indexes(t, s); len(ix) != 0 {
			t.Fatalf("indexes after DeferIndexes: %v", ix)
		}
		// Deferred already: not dropped twice, not forgotten.
		if got, err := s.DeferIndexes(ctx, "d_a"); err != nil || len(got) != 0 {
			t.Fatalf("DeferIndexes again = %v, %v", got, err)
		}
		// This process owns them and lives: nothing is abandoned.
		if got, err := s.RestoreAbandonedIndexes(ctx); err != nil || len(got) != 0 {
			t.Fatalf("RestoreAbandonedIndexes of a live load = %v, %v", got, err)
		}
		if got, err := s.RestoreIndexes(ctx, "d_a"); err != nil || !slices.Equal(got, []string{"d_a"}) {
			t.Fatalf("RestoreIndexes = %v, %v", got, err)
		}
		host, _ := os.Hostname()
		cases := []struct {
			owner     string
			touched   time.Duration // before now
			abandoned bool
		}{
			{host + ":" + strconv.Itoa(os.Getpid()), time.Hour, false}, // alive here, however old its beat
			{host + ":" + strconv.Itoa(deadPID(t)), 0, true},           // gone from here
			{"elsewhere.invalid:42", time.Minute, false},               // another machine, beating
			{"elsewhere.invalid:42", store.StaleDeferral + time.Minute, true},
		}
		for _, c := range cases {
			if _, err := s.DeferIndexes(ctx, "d_ab"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Exec(ctx, `UPDATE deferred_indexes SET owner = ?, touched = ? WHERE name = 'd_ab'`,
				c.owner, time.Now().Add(-c.touched).Unix()); err != nil {
				t.Fatal(err)
			}
			got, err := s.RestoreAbandonedIndexes(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if (len(got) == 1) != c.abandoned {
				t.Fatalf("owner %s, beat %s ago: built %v, want abandoned %v", c.owner, c.touched, got, c.abandoned)
			}
			if !c.abandoned {
				if _, err := s.RestoreIndexes(ctx, "d_ab"); err != nil {
					t.Fatal(err)
				}
			}
		}
		if after := indexes(t, s); !slices.Equal(after, before) {
			t.Fatalf("indexes after the round trips: %v, want %v", after, before)
		}
		var n int
		if err := s.QueryRow(ctx, `SELECT COUNT(*) FROM deferred_indexes`).Scan(&n); err != nil || n != 0 {
			t.Fatalf("deferred_indexes holds %d rows (%v)", n, err)
		}
		// The rebuilt indexes answer as before.
		var b int
		if err := s.QueryRow(ctx, `SELECT b FROM d WHERE a = 'y'`).Scan(&b); err != nil || b != 3 {
			t.Fatalf("b = %d, %v", b, err)
		}
	})
}

// indexes lists the index definitions on table d, normalised by the
// engine's catalog.
func indexes(t *testing.T, s *store.Store) []string {
	t.Helper()
	q := `SELECT name || ' ' || sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'd' AND sql IS NOT NULL ORDER BY name`
	if s.Engine() == "postgres" {
		q = `SELECT indexname || ' ' || indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'd' AND indexname <> 'd_pkey' ORDER BY indexname`
	}
	rows, err := s.Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// deadPID returns the id of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Skipf("start a process: %v", err)
	}
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	return p.Pid
}
