// Package storetest opens real, empty, migrated databases for tests: a
// temporary SQLite file always, and a fresh PostgreSQL schema when
// PERISCOPE_TEST_POSTGRES holds a postgres:// URL.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/periscope-oss/periscope/internal/store"
)

// Engines lists the engines the tests run on: "sqlite", and "postgres" when
// PERISCOPE_TEST_POSTGRES is set.
func Engines() []string {
	if os.Getenv("PERISCOPE_TEST_POSTGRES") != "" {
		return []string{"sqlite", "postgres"}
	}
	return []string{"sqlite"}
}

// DSN returns the address of a new, empty database of the engine, removed
// when the test ends.
func DSN(t testing.TB, engine string) string {
	t.Helper()
	switch engine {
	case "sqlite":
		return filepath.Join(t.TempDir(), "periscope.db")
	case "postgres":
		base := os.Getenv("PERISCOPE_TEST_POSTGRES")
		if base == "" {
			t.Skip("PERISCOPE_TEST_POSTGRES is not set")
		}
		var b [6]byte
		rand.Read(b[:])
		schema := "t_" + hex.EncodeToString(b[:])
		admin, err := sql.Open("pgx", base)
		if err != nil {
			t.Fatalf("open postgres: %v", err)
		}
		if _, err := admin.Exec(`CREATE SCHEMA ` + schema); err != nil {
			admin.Close()
			t.Fatalf("create schema (is PostgreSQL running at %s?): %v", base, err)
		}
		t.Cleanup(func() {
			admin.Exec(`DROP SCHEMA ` + schema + ` CASCADE`)
			admin.Close()
		})
		u, err := url.Parse(base)
		if err != nil {
			t.Fatalf("parse PERISCOPE_TEST_POSTGRES: %v", err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	t.Fatalf("unknown engine %q", engine)
	return ""
}

// Unmigrated returns a store on a new, empty database of the engine, for
// tests that write an older release's schema themselves and then migrate
// with sets (whose files it attaches: store.Files).
func Unmigrated(t testing.TB, engine string, sets ...store.MigrationSet) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), DSN(t, engine), store.Files(sets...))
	if err != nil {
		t.Fatalf("open %s store: %v", engine, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Open returns a store on a new database of the engine, migrated with the
// core schema and sets.
func Open(t testing.TB, engine string, sets ...store.MigrationSet) *store.Store {
	t.Helper()
	s := Unmigrated(t, engine, sets...)
	if _, err := s.Migrate(context.Background(), sets...); err != nil {
		t.Fatalf("migrate %s store: %v", engine, err)
	}
	return s
}

// Each runs fn as a subtest on a fresh store of every engine, migrated
// with the core schema and sets.
func Each(t *testing.T, fn func(t *testing.T, s *store.Store), sets ...store.MigrationSet) {
	for _, e := range Engines() {
		t.Run(e, func(t *testing.T) { fn(t, Open(t, e, sets...)) })
	}
}

// EachOf runs fn as a subtest on a fresh database of every engine,
// migrated with the core schema and sets, handing it the capability store
// open returns (hoststore.New, say).
func EachOf[T any](t *testing.T, sets []store.MigrationSet, open func(*store.Store) T, fn func(t *testing.T, s T)) {
	for _, e := range Engines() {
		t.Run(e, func(t *testing.T) { fn(t, open(Open(t, e, sets...))) })
	}
}
