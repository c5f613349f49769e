package vulnstore

import (
	"context"
	"strings"
	"unicode"

	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/vuln"
)

// maxIDLen bounds what may be looked up as an advisory id: OSV ids are
// short; longer text is searched as text.
const maxIDLen = 128

// idShaped reports whether s could be an advisory id of some database:
// one word with a digit. Every OSV database's ids (ALSA-2022:0065,
// USN-5192-1, BIT-log4j-2021-44228, a vendor's own scheme) are.
func idShaped(s string) bool {
	return s != "" && len(s) <= maxIDLen && !strings.ContainsFunc(s, unicode.IsSpace) && strings.ContainsFunc(s, unicode.IsDigit)
}

// idSpellings are the spellings of a typed id to look for among the
// stored ones, preferred first: as typed, as vuln.CanonicalID gives it,
// upper case, lower case. Ids are stored as their database spells them;
// a case-insensitive match of every spelling would need an index on a
// folded column, and these cover how ids are typed.
func idSpellings(t string) []string {
	out := []string{t}
	if id, ok := vuln.CanonicalID(t); ok {
		out = append(out, id)
	}
	out = append(out, strings.ToUpper(t), strings.ToLower(t))
	var uniq []string
	for _, s := range out {
		uniq = appendNew(uniq, s)
	}
	return uniq
}

func appendNew(ss []string, s string) []string {
	for _, v := range ss {
		if v == s {
			return ss
		}
	}
	return append(ss, s)
}

// storedIDsQuery finds which of a list of ids are stored, as an advisory's
// own id or as an alias of one (both by index).
const storedIDsQuery = `SELECT adv_id FROM vuln_advisories WHERE adv_id IN (%s) UNION SELECT alias FROM vuln_advisory_aliases WHERE alias IN (%s)`

// resolveIDs returns, for each of terms (trimmed text a user typed), the
// advisory id it names as stored in the database, or "" when it names
// none: an id of any OSV database, known prefix or not, is an exact id
// once it is stored.
func (s *Store) resolveIDs(ctx context.Context, terms []string) ([]string, error) {
	var cands []string
	spell := make([][]string, len(terms))
	for i, t := range terms {
		if !idShaped(t) {
			continue
		}
		spell[i] = idSpellings(t)
		for _, c := range spell[i] {
			cands = appendNew(cands, c)
		}
	}
	out := make([]string, len(terms))
	if len(cands) == 0 {
		return out, nil
	}
	ph, args := store.Placeholders(len(cands)), strArgs(cands)
	var found []string
	if err := s.collect(ctx, &found, strings.ReplaceAll(storedIDsQuery, "%s", ph), append(args, args...)...); err != nil {
		return nil, err
	}
	stored := map[string]bool{}
	for _, f := range found {
		stored[f] = true
	}
	for i := range terms {
		for _, c := range spell[i] {
			if stored[c] {
				out[i] = c
				break
			}
		}
	}
	return out, nil
}

// resolveFeedIDs moves the terms of f that name a stored advisory id (or,
// unstored, have a known database's prefix) to its ids, spelt as stored:
// an id matches exactly, whatever its date, never as text.
func (s *Store) resolveFeedIDs(ctx context.Context, f VulnFilter) (VulnFilter, error) {
	if len(f.Terms) == 0 {
		return f, nil
	}
	ids, err := s.resolveIDs(ctx, f.Terms)
	if err != nil {
		return f, err
	}
	var terms []string
	f.IDs = append([]string(nil), f.IDs...)
	for i, t := range f.Terms {
		switch id, ok := vuln.CanonicalID(t); {
		case ids[i] != "":
			f.IDs = appendNew(f.IDs, ids[i])
		case ok:
			f.IDs = appendNew(f.IDs, id)
		default:
			terms = append(terms, t)
		}
	}
	f.Terms = terms
	return f, nil
}
