// Package vulnstore stores vulnerability intelligence: CVEs (NVD) with
// their CPEs, CISA KEV entries, EPSS scores, exploits (Exploit-DB),
// advisories (OSV) and the feeds' sync state, and answers the
// vulnerability queries of /api/v1/vuln/*. Its tables are created by
// migration 0002 (migrations/).
package vulnstore

import (
	"context"
	"database/sql"
	"embed"
	"io/fs"

	"github.com/periscope-oss/periscope/internal/store"
)

//go:embed migrations
var migrations embed.FS

// Migrations is the schema of the vulnerability tables.
func Migrations() store.MigrationSet {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return store.MigrationSet{Name: "vuln", FS: sub}
}

// Store is the vulnerability tables of a database. It is safe for
// concurrent use.
type Store struct {
	st *store.Store
	d  dialect
}

// New returns the vulnerability tables of s (migrated with Migrations).
func New(s *store.Store) *Store { return &Store{st: s, d: dialectOf(s.Dialect())} }

func (s *Store) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return s.st.Exec(ctx, q, args...)
}

func (s *Store) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return s.st.Query(ctx, q, args...)
}

func (s *Store) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	return s.st.QueryRow(ctx, q, args...)
}
