// Package schema lists the migration sets of every capability: the whole
// application's schema in one place. A database is migrated with all of
// them (cmd/periscope, the API tests); a capability's own tests migrate its
// set alone.
package schema

import (
	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/darkwebstore"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/scanstore"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/torstore"
	"github.com/periscope-oss/periscope/internal/vulnstore"
	"github.com/periscope-oss/periscope/internal/whoisstore"
)

// Sets returns the migration sets of every capability besides the core
// (which store.Migrate always applies), in no particular order: the runner
// orders migrations by version across sets.
func Sets() []store.MigrationSet {
	return []store.MigrationSet{
		vulnstore.Migrations(),    // 0002
		hoststore.Migrations(),    // 0003, 0005, 0006, 0007, 0043
		brandstore.Migrations(),   // 0004
		whoisstore.Migrations(),   // 0010
		alertstore.Migrations(),   // 0011
		darkwebstore.Migrations(), // 0012
		scanstore.Migrations(),    // 0013
		torstore.Migrations(),     // 0031
	}
}
