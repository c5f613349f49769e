package hoststore

import "github.com/periscope-oss/periscope/internal/store"

// Core is the core store, for tests that read the tables directly.
func (s *Store) Core() *store.Store { return s.st }
