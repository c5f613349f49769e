package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// pragmaOnTwoConnections opens a SQLite store with opts and reads pragma on
// two connections held at once: a setting must be each connection's.
func pragmaOnTwoConnections(t *testing.T, pragma string, opts ...Option) [2]int64 {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "p.db"), opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got [2]int64
	var conns []*sql.Conn
	for i := range got {
		c, err := s.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if err := c.QueryRowContext(ctx, `PRAGMA `+pragma).Scan(&got[i]); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range conns {
		c.Close()
	}
	return got
}

func TestPageCacheMiBSetsEveryConnection(t *testing.T) {
	for _, tc := range []struct {
		opts []Option
		want int64
	}{
		{nil, -64 * 1024},
		{[]Option{PageCacheMiB(256)}, -256 * 1024},
	} {
		for i, got := range pragmaOnTwoConnections(t, "cache_size", tc.opts...) {
			if got != tc.want {
				t.Errorf("connection %d: cache_size %d, want %d", i, got, tc.want)
			}
		}
	}
}

func TestMmapMiBSetsEveryConnection(t *testing.T) {
	for _, tc := range []struct {
		opts []Option
		want int64
	}{
		{nil, 0},
		{[]Option{MmapMiB(64)}, 64 << 20},
	} {
		for i, got := range pragmaOnTwoConnections(t, "mmap_size", tc.opts...) {
			if got != tc.want {
				t.Errorf("connection %d: mmap_size %d, want %d", i, got, tc.want)
			}
		}
	}
}
