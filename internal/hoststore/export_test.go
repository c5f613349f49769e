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

// SetListingMemoMin changes the number of hosts from which a domain's
// listings are memoised, for tests over small domains; it returns a
// function restoring it.
func SetListingMemoMin(n int64) func() {
	old := listMemoMin
	listMemoMin = n
	return func() { listMemoMin = old }
}

// ListingMemo returns the number of domains whose totals the listing memo
// holds and the number of id orders it holds.
func (s *Store) ListingMemo() (totals, recent int) {
	s.lists.mu.Lock()
	defer s.lists.mu.Unlock()
	return len(s.lists.totals), len(s.lists.recent)
}
