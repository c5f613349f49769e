package brandstore

import "github.com/periscope-oss/periscope/internal/store"

// Core is the core store, for tests that set up accounts.
func (s *Store) Core() *store.Store { return s.st }
