package brandstore

import "github.com/periscope-oss/periscope/internal/store"

// Core is the core store, for tests that set up accounts.
func (s *Store) Core() *store.Store { return s.st }

// WithoutTrigrams makes Findings filter substrings with the LIKE alone and
// count unfiltered listings by walking the findings, as before migrations
// 14 and 15, for the side-by-side benchmark.
func (s *Store) WithoutTrigrams() *Store { return &Store{st: s.st, noGrams: true, noCounts: true} }
