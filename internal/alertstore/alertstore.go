// Package alertstore holds the change ledger, the alerts of organizations'
// assets, webhook endpoints and the webhook outbox (migration 11).
package alertstore

import (
	"embed"
	"io/fs"

	"github.com/periscope-oss/periscope/internal/store"
)

//go:embed migrations
var migrations embed.FS

// Migrations is the alerts schema for both engines.
func Migrations() store.MigrationSet {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return store.MigrationSet{Name: "alerts", FS: sub}
}

// Store reads and writes the alerts tables through the core store.
type Store struct {
	db      *store.Store
	dl      dialect
	secrets *SecretsKey // seals webhook secrets; set by UnlockSecrets
	// EndpointLimit caps an organization's webhook endpoints, and so the
	// deliveries of one alert (0: DefaultEndpointLimit).
	EndpointLimit int
}

// DefaultEndpointLimit is the webhook endpoints an organization may have
// unless set (--webhook-limit).
const DefaultEndpointLimit = 10

func (s *Store) endpointLimit() int {
	if s.EndpointLimit > 0 {
		return s.EndpointLimit
	}
	return DefaultEndpointLimit
}

// New returns the alerts storage on s.
func New(s *store.Store) *Store { return &Store{db: s, dl: dialectOf(s.Dialect())} }

// skipLocked is the clause that lets several instances lease different
// rows at once (store.Dialect.SkipLocked).
func (s *Store) skipLocked() string { return s.db.Dialect().SkipLocked() }

// placeholders returns "(?, ?, ...)" with n marks.
func placeholders(n int) string { return "(" + store.Placeholders(n) + ")" }
