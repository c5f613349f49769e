package brandwatch

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/periscope-oss/periscope/internal/brand"
	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/typo"
)

// maxQuery bounds an OEM search's query: the longest domain name.
const maxQuery = 253

// maxScan bounds the host names an on-demand phishing search classifies.
const maxScan = 100_000

// BaseDomain validates the query of an OEM search: a registrable domain
// (a name below one is reduced to it; a public suffix such as co.uk, an
// invalid name or a label mixing scripts is an invalid_parameter error).
func BaseDomain(query string) (string, error) {
	q := strings.TrimSpace(query)
	if q == "" {
		return "", periscope.Errorf(periscope.EMissing, "query is required: a base domain such as example.com.")
	}
	if utf8.RuneCountInString(q) > maxQuery {
		return "", periscope.Errorf(periscope.EInvalid, "query must be a base domain of at most %d characters (got %q).", maxQuery, periscope.Clip(q, 80))
	}
	n, err := typo.Parse(q)
	if err != nil {
		msg := periscope.Clip(err.Error(), 120)
		switch {
		case errors.Is(err, typo.ErrPublicSuffix):
			msg = "it is a public suffix, not a registrable domain"
		case errors.Is(err, typo.ErrMixedScript):
			msg = "a label mixes scripts"
		}
		return "", periscope.Errorf(periscope.EInvalid, "query must be a base domain such as example.com (%q: %s).", periscope.Clip(q, 80), msg)
	}
	return n.Registrable(), nil
}

// Search returns up to limit findings of one kind (brand.TypoSquatting or
// brand.PotentialPhishing) for base, a registrable domain (see BaseDomain).
// A monitored domain answers from its stored findings; any other is computed
// on demand: its candidates are looked up in the host index (typosquatting)
// or the index names holding its label are classified (phishing).
//
// Neither shows account a look-alike under another account's domain claim.
func (m *Watcher) Search(ctx context.Context, account, base, kind string, limit int) ([]brandstore.Finding, error) {
	if _, err := m.ensure(ctx); err != nil {
		return nil, err
	}
	if m.Monitored(base) {
		return m.brand.FindingsByBase(ctx, account, base, kind, limit)
	}
	mt, err := brand.New([]brand.Brand{{Domain: base}}, m.opts.Brand)
	if err != nil {
		return nil, periscope.Errorf(periscope.EInvalid, "query %q cannot be monitored: %v.", periscope.Clip(base, 80), err)
	}
	var names []string
	if kind == brand.TypoSquatting {
		cands, err := typo.Generate(base, m.opts.Brand.Typo)
		if err != nil {
			return nil, periscope.Errorf(periscope.EInvalid, "query %q: %v.", periscope.Clip(base, 80), err)
		}
		for _, c := range cands {
			if c.Fuzzer != typo.Original {
				names = append(names, c.Domain)
			}
		}
	} else {
		n, _ := typo.Parse(base)
		label, _, _ := strings.Cut(n.Registrable(), ".")
		if names, err = m.hosts.HostNamesContaining(ctx, label, maxScan); err != nil {
			return nil, err
		}
	}
	var hits []brand.Match
	for _, n := range names {
		ms, err := mt.Match(n)
		if err != nil || len(ms) == 0 || ms[0].Kind != kind {
			continue
		}
		hits = append(hits, ms[0])
	}
	hits, err = m.visible(ctx, account, hits)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(hits, func(a, b brand.Match) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.Domain, b.Domain))
	})
	if kind != brand.TypoSquatting {
		// Phishing names came from the index: only the page is read.
		hits = hits[:min(len(hits), limit)]
	}
	lookup := make([]string, len(hits))
	for i, h := range hits {
		lookup[i] = h.Domain
	}
	known, err := m.hosts.HostsNamed(ctx, lookup)
	if err != nil {
		return nil, err
	}
	hits = slices.DeleteFunc(hits, func(h brand.Match) bool { _, ok := known[h.Domain]; return !ok })
	hits = hits[:min(len(hits), limit)]
	out := []brandstore.Finding{}
	for _, h := range hits {
		kh := known[h.Domain]
		f := brandstore.Finding{Kind: h.Kind, Domain: h.Domain, BaseDomain: base, Fuzzer: h.Fuzzer, Score: h.Score,
			Reason: h.Reason, DNS: kh.DNS, DNSHistory: []brandstore.DNSRecord{}, DateAdded: kh.FirstSeen, LastSeen: kh.LastSeen}
		if !kh.DNS.Empty() {
			f.DNSHistory = append(f.DNSHistory, brandstore.DNSRecord{
				Date: time.Unix(kh.LastSeen, 0).UTC().Format("02-01-2006"), DNS: kh.DNS, Timestamp: kh.LastSeen})
		}
		out = append(out, f)
	}
	return out, nil
}

// visible keeps the matches whose names account may be shown.
func (m *Watcher) visible(ctx context.Context, account string, hits []brand.Match) ([]brand.Match, error) {
	names := make([]string, len(hits))
	for i, h := range hits {
		names[i] = h.Domain
	}
	keep, err := m.brand.VisibleNames(ctx, account, names)
	if err != nil {
		return nil, err
	}
	ok := make(map[string]bool, len(keep))
	for _, n := range keep {
		ok[n] = true
	}
	return slices.DeleteFunc(hits, func(h brand.Match) bool { return !ok[h.Domain] }), nil
}
