package main

import (
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/whoisstore"
)

// migrationSets lists the capability schemas every command migrates with
// the core. Each capability with its own storage package adds one line.
func migrationSets() []store.MigrationSet {
	return []store.MigrationSet{
		whoisstore.Migrations(),
	}
}
