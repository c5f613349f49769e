package vulnstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// A ranked text search is ranked the same way on both engines: each engine
// finds the matches (FTS5 on SQLite, a tsvector GIN index on PostgreSQL),
// the newest rankWindow of them in the same order (date, then id, newest
// first), and Periscope scores that window itself, so SQLite's bm25 and
// PostgreSQL's ts_rank, which order the same matches differently, never
// decide what comes first. Ties are broken by date, then by the record's
// own identifier (CVE id, advisory id, EDB id), never by a row id, which
// differs between engines.

// rankWindow is how many of the newest matches a text search ranks.
const rankWindow = 500

// rankSpec describes a searchable table.
type rankSpec struct {
	table, alias string
	date, key    string    // the date and identifier columns ties fall back to
	cols         []string  // the text columns scored
	weights      []float64 // each column's weight (a title counts ten times a description)
}

var (
	vulnRank     = rankSpec{"vulns", "v", "published", "cve_id", []string{"title", "description"}, []float64{10, 1}}
	advisoryRank = rankSpec{"vuln_advisories", "a", "published", "adv_id", []string{"summary", "details"}, []float64{10, 1}}
	exploitRank  = rankSpec{"vuln_exploits", "x", "date_added", "edb_id", []string{"title"}, []float64{1}}
)

// candidate is one match in the window.
type candidate struct {
	id    int64
	date  int64
	key   string
	text  []string
	score float64
}

// rankedKeys returns the identifiers (spec.key) of the best limit of the
// newest rankWindow rows of spec.table matching the engine's text query fq
// and the conditions of w (on alias spec.alias), best first.
func (s *Store) rankedKeys(ctx context.Context, spec rankSpec, fq, query string, w where, limit int) ([]string, error) {
	t := spec.alias
	cols := make([]string, len(spec.cols))
	for i, c := range spec.cols {
		cols[i] = t + "." + c
	}
	match, margs := s.d.windowMatch(spec.table, t, len(w.conds) == 0)
	q := `SELECT ` + t + `.id, ` + t + `.` + spec.date + `, CAST(` + t + `.` + spec.key + ` AS TEXT), ` + strings.Join(cols, ", ") +
		` FROM ` + spec.table + ` ` + t + ` WHERE ` + match
	args := append([]any{fq}, margs...)
	if len(w.conds) > 0 {
		q += ` AND ` + w.String()
		args = append(args, w.args...)
	}
	q += ` ORDER BY ` + t + `.` + spec.date + ` DESC, ` + t + `.id DESC LIMIT ` + strconv.Itoa(rankWindow)
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("text search %s: %w", spec.table, err)
	}
	defer rows.Close()
	var cs []candidate
	for rows.Next() {
		c := candidate{text: make([]string, len(spec.cols))}
		dst := []any{&c.id, &c.date, &c.key}
		for i := range c.text {
			dst = append(dst, &c.text[i])
		}
		if err := rows.Scan(dst...); err != nil {
			return nil, fmt.Errorf("text search %s: %w", spec.table, err)
		}
		cs = append(cs, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("text search %s: %w", spec.table, err)
	}
	rankCandidates(cs, ftsTerms(query), spec.weights)
	keys := make([]string, 0, min(limit, len(cs)))
	for _, c := range cs[:min(limit, len(cs))] {
		keys = append(keys, c.key)
	}
	return keys, nil
}

// rankCandidates scores each candidate with BM25 (k1 1.2, b 0.75) over
// its columns, weighted, a word counting where a token of the column
// starts with it (the engines match stems and the last word as a prefix),
// and sorts them best first: score, then date, then identifier, newest
// and highest first. The idf part is left out: every candidate matches.
func rankCandidates(cs []candidate, words []string, weights []float64) {
	const k1, b = 1.2, 0.75
	n := len(weights)
	tokens := make([][][]string, len(cs))
	avg := make([]float64, n)
	for i, c := range cs {
		tokens[i] = make([][]string, n)
		for f := range n {
			tokens[i][f] = strings.FieldsFunc(strings.ToLower(c.text[f]), func(r rune) bool {
				return !unicode.IsLetter(r) && !unicode.IsDigit(r)
			})
			avg[f] += float64(len(tokens[i][f]))
		}
	}
	for f := range avg {
		avg[f] = max(avg[f]/float64(max(len(cs), 1)), 1)
	}
	for i := range cs {
		var score float64
		for f := range n {
			l := float64(len(tokens[i][f]))
			for _, w := range words {
				tf := 0.0
				for _, tok := range tokens[i][f] {
					if strings.HasPrefix(tok, w) {
						tf++
					}
				}
				if tf > 0 {
					score += weights[f] * tf * (k1 + 1) / (tf + k1*(1-b+b*l/avg[f]))
				}
			}
		}
		// Rounded, so that sums in a different order never tip a tie.
		cs[i].score = float64(int64(score*1e9+0.5)) / 1e9
	}
	slices.SortStableFunc(cs, func(x, y candidate) int {
		switch {
		case x.score != y.score:
			if x.score > y.score {
				return -1
			}
			return 1
		case x.date != y.date:
			if x.date > y.date {
				return -1
			}
			return 1
		}
		return -compareKeys(x.key, y.key)
	})
}

// compareKeys orders identifiers: numerically when both are numbers (EDB
// ids), else CVE ids by year and number, else as strings.
func compareKeys(a, b string) int {
	if x, err := strconv.ParseInt(a, 10, 64); err == nil {
		if y, err := strconv.ParseInt(b, 10, 64); err == nil {
			return cmpInt(x, y)
		}
	}
	if ya, na, ok := cveParts(a); ok {
		if yb, nb, ok := cveParts(b); ok {
			if c := cmpInt(ya, yb); c != 0 {
				return c
			}
			return cmpInt(na, nb)
		}
	}
	return strings.Compare(a, b)
}

func cveParts(id string) (year, num int64, ok bool) {
	parts := strings.Split(id, "-")
	if len(parts) != 3 || parts[0] != "CVE" {
		return 0, 0, false
	}
	y, err1 := strconv.ParseInt(parts[1], 10, 64)
	n, err2 := strconv.ParseInt(parts[2], 10, 64)
	return y, n, err1 == nil && err2 == nil
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// orderByKeys reorders xs to the order of keys, by each element's key.
func orderByKeys[T any](xs []T, keys []string, key func(T) string) []T {
	pos := make(map[string]int, len(keys))
	for i, k := range keys {
		pos[k] = i
	}
	slices.SortStableFunc(xs, func(a, b T) int { return pos[key(a)] - pos[key(b)] })
	return xs
}

func anys(keys []string) []any {
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = k
	}
	return out
}
