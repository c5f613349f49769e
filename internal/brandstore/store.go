// Package brandstore stores brand protection: certificates seen in
// Certificate Transparency logs and the names they cover, the certificates
// of each organization, typosquatting and phishing findings, CT log
// checkpoints and which organization domains are monitored. It answers the
// brand listings of /api/v1/org/*. Its tables are created by migration 0004
// (migrations/); it reads hosts only through internal/hoststore.
package brandstore

import (
	"context"
	"database/sql"
	"embed"
	"io/fs"

	"github.com/periscope-oss/periscope/internal/store"
)

//go:embed migrations
var migrations embed.FS

// Migrations is the schema of the brand tables.
func Migrations() store.MigrationSet {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return store.MigrationSet{Name: "brand", FS: sub}
}

// Store is the brand tables of a database. It is safe for concurrent use.
type Store struct {
	st *store.Store
	dl dialect
	// noGrams filters substrings without the SQLite trigram index (the
	// benchmark's "before").
	noGrams bool
	// noCounts counts unfiltered listings by walking the findings (the
	// benchmark's "before").
	noCounts bool
}

// New returns the brand tables of s (migrated with Migrations).
func New(s *store.Store) *Store { return &Store{st: s, dl: dialectOf(s.Dialect())} }

func (s *Store) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return s.st.Exec(ctx, q, args...)
}

func (s *Store) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return s.st.Query(ctx, q, args...)
}

func (s *Store) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	return s.st.QueryRow(ctx, q, args...)
}
