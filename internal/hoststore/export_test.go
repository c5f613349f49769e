package hoststore

import (
	"context"
	"slices"

	"github.com/periscope-oss/periscope/internal/store"
)

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

// PostingSets reads every term's ids from host_postings, rows merged, for
// tests that compare two indexes.
func (s *Store) PostingSets(ctx context.Context) (map[string][]int64, error) {
	rows, err := s.st.DB().QueryContext(ctx, `SELECT term, first_id, n, ids FROM host_postings ORDER BY term, first_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]int64{}
	for rows.Next() {
		var term string
		var first int64
		var n int
		var blob []byte
		if err := rows.Scan(&term, &first, &n, &blob); err != nil {
			return nil, err
		}
		ids, err := decodePostingIDs(nil, first, n, blob)
		if err != nil {
			return nil, err
		}
		out[term] = append(out[term], ids...)
	}
	for t, ids := range out {
		out[t] = slices.Compact(sortIDs(ids))
	}
	return out, rows.Err()
}

// SetStageSteps changes how many rows of a run the stage's merge reads at
// a time and how many it takes between deletes of the rows taken, for
// tests of runs read in several parts; it returns a function restoring
// them.
func SetStageSteps(read int, recycle int64) func() {
	oldRead, oldRecycle := stageRead, recycleEvery
	stageRead, recycleEvery = read, recycle
	return func() { stageRead, recycleEvery = oldRead, oldRecycle }
}
