package vulnstore

import "github.com/periscope-oss/periscope/internal/store"

// Core is the core store, for tests that read the tables directly.
func (s *Store) Core() *store.Store { return s.st }

// SyncsTextIndex reports whether the engine keeps FTS5 tables in step.
func (s *Store) SyncsTextIndex() bool { return s.d.syncsTextIndex() }

// RankVulnWindow ranks a window of vulnerability matches (id, published,
// cve_id, title, description) for query as the text search does and
// returns the first limit CVE ids.
func RankVulnWindow(rows [][5]any, query string, limit int) []string {
	cs := make([]candidate, len(rows))
	for i, r := range rows {
		cs[i] = candidate{id: r[0].(int64), date: r[1].(int64), key: r[2].(string), text: []string{r[3].(string), r[4].(string)}}
	}
	rankCandidates(cs, ftsTerms(query), vulnRank.weights)
	var out []string
	for _, c := range cs[:min(limit, len(cs))] {
		out = append(out, c.key)
	}
	return out
}
