// Package hoststore stores the host index: hosts with their documents
// (hostdoc.go), the posting lists of their search terms (postings.go), bulk
// loads (hostload.go, stage.go) and host search (hosts_search.go). It answers
// /api/v1/domain/*, /api/v1/host/* and the global search, and serves brand
// monitoring the host names it reads (names.go). Its tables are created by
// migrations 0003, 0005, 0006, 0007, 0043 and 0051 (migrations/); 0005 moves the terms
// of 0003 into posting lists with a Go step (moveHostTerms).
package hoststore

import (
	"context"
	"database/sql"
	"embed"
	"io/fs"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/ledger"
	"github.com/periscope-oss/periscope/internal/store"
)

//go:embed migrations
var migrations embed.FS

// Migrations is the schema of the host tables.
func Migrations() store.MigrationSet {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return store.MigrationSet{Name: "hosts", FS: sub, Steps: map[int]func(context.Context, *store.Tx) error{5: moveHostTerms}}
}

// Store is the host tables of a database. It is safe for concurrent use.
type Store struct {
	st      *store.Store
	d       dialect
	tracker ChangeTracker // nil: host writes keep no ledger
	cache   *postingCache
	lists   *listCache // the listing memo, within the posting cache's budget
}

// New returns the host tables of s (migrated with Migrations); its writes
// keep no ledger.
func New(s *store.Store) *Store {
	cache := newPostingCache(DefaultPostingCacheMiB << 20)
	return &Store{st: s, d: dialectOf(s.Dialect()), cache: cache, lists: newListCache(cache)}
}

// NewTracked is New with every host write recording its changes through t
// (the change ledger) in the write's own transaction.
func NewTracked(s *store.Store, t ChangeTracker) *Store {
	hs := New(s)
	hs.tracker = t
	return hs
}

// ChangeTracker records what host writes change (the change ledger,
// alertstore). It is declared here so the host store depends on no
// listener: serve injects one (NewTracked), and without one a bulk load
// writes hosts only.
type ChangeTracker interface {
	// Track begins tracking one batch written by src in tx; stored names
	// the batch's hosts that were already stored.
	Track(ctx context.Context, tx *store.Tx, src ledger.Source, stored []string) (BatchChanges, error)
	// Committed is called after a transaction that tracked changes
	// committed (to wake whoever reads them).
	Committed()
}

// BatchChanges tracks the changes of one batch (alertstore.Tracker).
type BatchChanges interface {
	// Diff returns the changes of merging observed into stored as merged
	// and prunes what they remove from merged.
	Diff(stored, merged, observed *host.Host) []ledger.Change
	// New records a host stored for the first time.
	New(h *host.Host) []ledger.Change
	// Flush writes what was tracked in tx.
	Flush(ctx context.Context, tx *store.Tx) error
}

func (s *Store) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return s.st.Exec(ctx, q, args...)
}

func (s *Store) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return s.st.Query(ctx, q, args...)
}

func (s *Store) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	return s.st.QueryRow(ctx, q, args...)
}
