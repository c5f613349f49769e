package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A table of the main file moves to a set's file in chunks, in key order
// (a key whose columns are not in table order), resuming after rows an
// interrupted run copied; the file is where FilePath says, the main
// file's table is gone, and moving again does nothing.
func TestMoveToFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "periscope.db")
	set := MigrationSet{Name: "extra", File: "extra"}
	s, err := Open(ctx, path, Files(set))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.moveRows = 10
	const create = `CREATE TABLE IF NOT EXISTS extra.t (a INTEGER NOT NULL, b TEXT NOT NULL, c BLOB, PRIMARY KEY (b, a)) WITHOUT ROWID`
	if _, err := s.Exec(ctx, `CREATE TABLE t (a INTEGER NOT NULL, b TEXT NOT NULL, c BLOB, PRIMARY KEY (b, a)) WITHOUT ROWID`); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 25 {
		want = append(want, fmt.Sprintf("%d|k%d|%02X", 25-i, i%3, i))
		if _, err := s.Exec(ctx, `INSERT INTO t (a, b, c) VALUES (?, ?, ?)`, 25-i, fmt.Sprintf("k%d", i%3), []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	// An earlier run copied the first 7 rows in key order, then stopped.
	if _, err := s.Exec(ctx, create); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(ctx, `INSERT INTO extra.t SELECT * FROM main.t ORDER BY b, a LIMIT 7`); err != nil {
		t.Fatal(err)
	}
	if err := s.MoveToFile(ctx, "extra", create, "t", "gone"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.QueryRow(ctx, `SELECT COUNT(*) FROM main.sqlite_master WHERE name = 't'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("main.t left: %d %v", n, err)
	}
	got := rows(t, s, `SELECT a || '|' || b || '|' || hex(c) FROM t ORDER BY a DESC`)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("moved rows\n got %v\nwant %v", got, want)
	}
	if err := s.MoveToFile(ctx, "extra", create, "t"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), "periscope-extra.db")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Reopened, the file is attached again and holds the rows.
	s2, err := Open(ctx, path, Files(set))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got := rows(t, s2, `SELECT COUNT(*) FROM extra.t`); got[0] != "25" {
		t.Fatalf("after reopening: %v rows", got)
	}
}

// A store migrated with a set that keeps a file must be opened with it.
func TestMigrateRefusesAMissingFile(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Migrate(context.Background(), MigrationSet{Name: "extra", File: "extra"}); err == nil || !strings.Contains(err.Error(), "store.Files") {
		t.Fatalf("Migrate: %v", err)
	}
}

func TestFilePath(t *testing.T) {
	for in, want := range map[string]string{
		"periscope.db":           "periscope-darkweb.db",
		"/var/lib/p/data.sqlite": "/var/lib/p/data-darkweb.sqlite",
		"db/periscope":           "db/periscope-darkweb",
		"./a.b/periscope":        "./a.b/periscope-darkweb",
	} {
		if got := FilePath(in, "darkweb"); got != want {
			t.Errorf("FilePath(%q) = %q, want %q", in, got, want)
		}
	}
}

func rows(t *testing.T, s *Store, q string) []string {
	t.Helper()
	r, err := s.Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []string
	for r.Next() {
		var v string
		if err := r.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// A set's file gets the set's page cache on every connection, the main
// file the store's; PageCacheMiB, a bulk writer's setting, holds for both.
func TestFileCache(t *testing.T) {
	ctx := context.Background()
	set := MigrationSet{Name: "extra", File: "extra", FileCacheKiB: 2048}
	for _, c := range []struct {
		opts        []Option
		main, extra string
	}{
		{[]Option{Files(set)}, "-65536", "-2048"},
		{[]Option{Files(set), PageCacheMiB(256)}, "-262144", "-262144"},
		{[]Option{Files(MigrationSet{Name: "extra", File: "extra"})}, "-65536", "-65536"},
	} {
		s, err := Open(ctx, filepath.Join(t.TempDir(), "periscope.db"), c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		// Two connections at once: the pragmas are set on each.
		c1, err := s.DB().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := s.DB().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, conn := range []interface {
			QueryRowContext(context.Context, string, ...any) *sql.Row
		}{c1, c2} {
			var main, extra string
			if err := conn.QueryRowContext(ctx, `PRAGMA main.cache_size`).Scan(&main); err != nil {
				t.Fatal(err)
			}
			if err := conn.QueryRowContext(ctx, `PRAGMA extra.cache_size`).Scan(&extra); err != nil {
				t.Fatal(err)
			}
			if main != c.main || extra != c.extra {
				t.Errorf("cache_size main %s extra %s, want %s and %s", main, extra, c.main, c.extra)
			}
		}
		c1.Close()
		c2.Close()
		s.Close()
	}
}

// TestDatabaseFilesArePrivate: a new SQLite database, its attached files
// and their WAL files are created readable by their owner only.
func TestDatabaseFilesArePrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "periscope.db")
	set := MigrationSet{Name: "private", File: "private"}
	s, err := Open(context.Background(), path, Files(set))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.DB().Exec(`CREATE TABLE t (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().Exec(`CREATE TABLE private.u (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", FilePath(path, "private"), FilePath(path, "private") + "-wal"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", p, fi.Mode().Perm())
		}
	}
}

// TestNewDatabaseBesideLeftoverFile: an attached file left by an earlier
// database at the same path makes opening a new database there an error
// that names the file (not a half-applied migration), and changes nothing.
func TestNewDatabaseBesideLeftoverFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "periscope.db")
	set := MigrationSet{Name: "leftover", File: "leftover"}
	s, err := Open(context.Background(), path, Files(set))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().Exec(`CREATE TABLE leftover.u (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		os.Remove(p)
	}
	_, err = Open(context.Background(), path, Files(set))
	if err == nil || !strings.Contains(err.Error(), FilePath(path, "leftover")) || !strings.Contains(err.Error(), "move it away") {
		t.Fatalf("open beside a leftover file: %v", err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Errorf("%s was created", path)
	}
	// The file moved away, the new database opens.
	if err := os.Rename(FilePath(path, "leftover"), path+".old"); err != nil {
		t.Fatal(err)
	}
	s, err = Open(context.Background(), path, Files(set))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}
