package hoststore

import "github.com/periscope-oss/periscope/internal/store"

// Core is the core store, for tests that read the tables directly.
func (s *Store) Core() *store.Store { return s.st }

// SetFacetDocLimit changes the number of matches up to which facets are
// counted on documents, for tests of the posting-list path; it returns a
// function restoring it.
func SetFacetDocLimit(n int) func() {
	old := facetDocLimit
	facetDocLimit = n
	return func() { facetDocLimit = old }
}
