package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

func TestPageCacheMiBSetsEveryConnection(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		opts []Option
		want int
	}{
		{nil, -64 * 1024},
		{[]Option{PageCacheMiB(256)}, -256 * 1024},
	} {
		s, err := Open(ctx, filepath.Join(t.TempDir(), "p.db"), tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		// Two connections held at once: the setting is each one's.
		c1, err := s.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := s.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range []*sql.Conn{c1, c2} {
			var got int
			if err := c.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("connection %d: cache_size %d, want %d", i, got, tc.want)
			}
		}
		c1.Close()
		c2.Close()
		s.Close()
	}
}

func TestMmapMiBSetsEveryConnection(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		opts []Option
		want int64
	}{
		{nil, 0},
		{[]Option{MmapMiB(64)}, 64 << 20},
	} {
		s, err := Open(ctx, filepath.Join(t.TempDir(), "m.db"), tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		c1, err := s.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := s.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range []*sql.Conn{c1, c2} {
			var got int64
			if err := c.QueryRowContext(ctx, `PRAGMA mmap_size`).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("connection %d: mmap_size %d, want %d", i, got, tc.want)
			}
		}
		c1.Close()
		c2.Close()
		s.Close()
	}
}
