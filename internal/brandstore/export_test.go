package brandstore

import "github.com/periscope-oss/periscope/internal/store"

// Core is the core store, for tests that set up accounts.
func (s *Store) Core() *store.Store { return s.st }

// WithoutTrigrams makes Findings filter substrings with the LIKE alone, as
// before migration 14, for the side-by-side benchmark.
func (s *Store) WithoutTrigrams() *Store { return &Store{st: s.st, noGrams: true} }
