// Package brand matches observed host names against monitored brands and
// reports typosquatting and potential phishing.
//
// A Matcher is built once from the monitored brands. Each brand's
// typosquatting candidates (package typo) are precomputed into one hash
// index, and every brand label is folded to a look-alike skeleton and put
// into one Aho-Corasick automaton, so classifying a name costs one index
// lookup and one pass over the name whatever the number of brands.
//
// Ranking of potential phishing (score 0-100, highest first):
//
//	80  the exact brand label is a whole token, bounded by the start or end
//	    of a label or by a hyphen (acme.secure-login.xyz, paypal-secure.com)
//	70  the exact brand label is glued to a phishing keyword (acmelogin.xyz)
//	50  a look-alike of the brand label (homoglyph, digit for letter, rn for
//	    m, accented or Cyrillic letters) is bounded as above (paypa1-login.io)
//	30  the exact label appears inside a longer word (paypalsupportdesk);
//	    only for labels of at least MinLabelLen characters
//	20  a look-alike appears inside a longer word, same length rule
//
// Bonuses: +10 when the name embeds the brand's full base domain
// (acme.com.evil.io, acme-com.evil.io), +10 when another token is a phishing
// keyword (login, secure, account, verify, ...); the total is capped at 100.
// A registrable name in a brand's candidate set is reported as
// typosquatting instead, scored by fuzzer (see typoScore). The brand's own
// domain, its subdomains and its Owned domains are never reported.
//
// Short labels are noisy: a label shorter than MinLabelLen (default 5) only
// matches on token boundaries or glued to a keyword. So for brand "acme",
// "acmeinc.com" is deliberately not reported (it reads as another company's
// name), while "acme-inc.com" (whole token) and "acmelogin.com" (keyword) are.
package brand

import (
	"errors"
	"fmt"
	"hash/fnv"
	"hash/maphash"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/periscope-oss/periscope/internal/typo"
	"golang.org/x/net/idna"
)

// Kinds of match, as the API spells them.
const (
	TypoSquatting     = "TypoSquatting"
	PotentialPhishing = "PotentialPhishing"
)

// DefaultKeywords returns the words phishing names pair with a brand.
func DefaultKeywords() []string {
	return []string{
		"login", "logon", "signin", "secure", "security", "account", "accounts",
		"verify", "verification", "update", "support", "auth", "password",
		"billing", "payment", "wallet", "banking", "confirm", "service",
		"webmail", "online", "portal", "customer", "helpdesk", "recovery",
		"unlock", "sso", "alert", "invoice", "refund",
	}
}

// Brand is one monitored brand.
type Brand struct {
	// Domain is the organization's registrable base domain, e.g. acme.com.
	Domain string
	// Labels are the brand strings to look for; empty means the registrable
	// label of Domain (acme).
	Labels []string
	// Owned lists other domains of the organization, never reported.
	Owned []string
}

// Match is one brand a name was matched against.
type Match struct {
	Brand  string // the brand's base domain (ASCII)
	Domain string // the observed name (ASCII)
	Kind   string // TypoSquatting or PotentialPhishing
	Fuzzer string // for TypoSquatting: the fuzzer that generates Domain
	Score  int    // 0-100, higher is more convincing
	Reason string
}

// Options tunes New.
type Options struct {
	// Typo configures candidate generation (dictionary, suffix list).
	Typo typo.Options
	// MinLabelLen is the length under which a brand label must sit on token
	// boundaries to match; 0 means 5.
	MinLabelLen int
	// Keywords are phishing keywords; nil means DefaultKeywords().
	Keywords []string
	// Workers bounds the goroutines generating candidates for new brands;
	// 0 means GOMAXPROCS. A server sets fewer, so adding brands never takes
	// every core from the requests being served.
	Workers int
}

// ErrBrand reports an unusable brand definition.
var ErrBrand = errors.New("invalid brand")

// brandData is the precomputed, immutable state of one brand; matchers
// derived with With and Without share it.
type brandData struct {
	domain string   // ASCII base domain
	suffix string   // its public suffix
	labels []string // lower-case Unicode labels
	owned  []string // ASCII owned domains, including domain
	cands  []candidate
}

type candidate struct {
	key    uint64
	check  uint32
	fuzzer uint8
}

type entry struct {
	check  uint32
	brand  int32
	fuzzer uint8
}

// target is a brand label reachable from an automaton pattern.
type target struct {
	brand int32
	label string
}

// Matcher classifies observed names. It is immutable and safe for
// concurrent use.
type Matcher struct {
	opts     Options
	seed     maphash.Seed
	brands   []*brandData
	index    map[uint64]entry
	overflow map[uint64][]entry // keys shared by several brands
	auto     *automaton
	targets  [][]target // by pattern id
	keywords []string
}

// New precomputes the candidate sets of brands and builds a Matcher.
func New(brands []Brand, opts Options) (*Matcher, error) {
	if opts.MinLabelLen <= 0 {
		opts.MinLabelLen = 5
	}
	if opts.Keywords == nil {
		opts.Keywords = DefaultKeywords()
	}
	m := &Matcher{opts: opts, seed: maphash.MakeSeed()}
	data, err := m.prepare(brands)
	if err != nil {
		return nil, err
	}
	m.build(data)
	return m, nil
}

// With returns a Matcher that also monitors brands. Only the new brands'
// candidates are generated; the rest is shared with m.
func (m *Matcher) With(brands ...Brand) (*Matcher, error) {
	data, err := m.prepare(brands)
	if err != nil {
		return nil, err
	}
	for _, d := range data {
		if slices.ContainsFunc(m.brands, func(o *brandData) bool { return o.domain == d.domain }) {
			return nil, fmt.Errorf("%w: %q is already monitored", ErrBrand, d.domain)
		}
	}
	n := &Matcher{opts: m.opts, seed: m.seed}
	n.build(append(slices.Clip(m.brands), data...))
	return n, nil
}

// Without returns a Matcher that no longer monitors the given base domains.
func (m *Matcher) Without(domains ...string) *Matcher {
	drop := map[string]bool{}
	for _, d := range domains {
		if a, err := idna.Lookup.ToASCII(strings.TrimSuffix(strings.ToLower(strings.TrimSpace(d)), ".")); err == nil {
			drop[a] = true
		}
	}
	var keep []*brandData
	for _, b := range m.brands {
		if !drop[b.domain] {
			keep = append(keep, b)
		}
	}
	n := &Matcher{opts: m.opts, seed: m.seed}
	n.build(keep)
	return n
}

// Brands returns the monitored base domains.
func (m *Matcher) Brands() []string {
	out := make([]string, len(m.brands))
	for i, b := range m.brands {
		out[i] = b.domain
	}
	return out
}

// prepare validates brands and generates their candidates in parallel.
func (m *Matcher) prepare(brands []Brand) ([]*brandData, error) {
	data := make([]*brandData, len(brands))
	seen := map[string]bool{}
	for i, b := range brands {
		n, err := typo.Parse(b.Domain)
		if err != nil {
			return nil, fmt.Errorf("%w %q: %w", ErrBrand, b.Domain, err)
		}
		if n.Subdomain != "" {
			return nil, fmt.Errorf("%w %q: use the registrable domain %q", ErrBrand, b.Domain, n.Registrable())
		}
		d := &brandData{domain: n.Domain(), suffix: n.Suffix}
		if seen[d.domain] {
			return nil, fmt.Errorf("%w: %q is listed twice", ErrBrand, d.domain)
		}
		seen[d.domain] = true
		labels := b.Labels
		if len(labels) == 0 {
			labels = []string{n.Label}
		}
		for _, l := range labels {
			l = strings.ToLower(strings.TrimSpace(l))
			if u, err := idna.ToUnicode(l); err == nil {
				l = u
			}
			if len([]rune(l)) < 3 || strings.ContainsAny(l, ". ") {
				return nil, fmt.Errorf("%w %q: label %q must be one word of at least 3 characters", ErrBrand, b.Domain, l)
			}
			d.labels = append(d.labels, l)
		}
		d.owned = []string{d.domain}
		for _, o := range b.Owned {
			a, err := idna.Lookup.ToASCII(strings.TrimSuffix(strings.ToLower(strings.TrimSpace(o)), "."))
			if err != nil {
				return nil, fmt.Errorf("%w %q: owned domain %q: %w", ErrBrand, b.Domain, o, err)
			}
			d.owned = append(d.owned, a)
		}
		data[i] = d
	}
	var wg sync.WaitGroup
	errs := make([]error, len(data))
	next := make(chan int)
	workers := m.opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	for range workers {
		wg.Go(func() {
			for i := range next {
				errs[i] = m.generate(data[i])
			}
		})
	}
	for i := range data {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return data, nil
}

func (m *Matcher) generate(d *brandData) error {
	cs, err := typo.Generate(d.domain, m.opts.Typo)
	if err != nil {
		return fmt.Errorf("%w %q: %w", ErrBrand, d.domain, err)
	}
	names := typo.FuzzerNames()
	d.cands = make([]candidate, 0, len(cs))
	for _, c := range cs {
		if c.Fuzzer == typo.Original {
			continue
		}
		d.cands = append(d.cands, candidate{
			key:    maphash.String(m.seed, c.Domain),
			check:  checksum(c.Domain),
			fuzzer: uint8(slices.Index(names, c.Fuzzer)),
		})
	}
	return nil
}

// checksum is a second, independent hash that makes a false hit in the
// index (a 64-bit collision that also collides here) practically impossible
// without storing every candidate string.
func checksum(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// build indexes the candidates and label skeletons of brands.
func (m *Matcher) build(brands []*brandData) {
	m.brands = brands
	m.keywords = m.opts.Keywords
	total := 0
	for _, b := range brands {
		total += len(b.cands)
	}
	m.index = make(map[uint64]entry, total)
	m.overflow = map[uint64][]entry{}
	patternID := map[string]int{}
	var patterns []string
	for bi, b := range brands {
		for _, c := range b.cands {
			e := entry{check: c.check, brand: int32(bi), fuzzer: c.fuzzer}
			if _, dup := m.index[c.key]; dup {
				m.overflow[c.key] = append(m.overflow[c.key], e)
				continue
			}
			m.index[c.key] = e
		}
		for _, l := range b.labels {
			sk := skeletonString(l)
			id, ok := patternID[sk]
			if !ok {
				id = len(patterns)
				patternID[sk] = id
				patterns = append(patterns, sk)
				m.targets = append(m.targets, nil)
			}
			m.targets[id] = append(m.targets[id], target{brand: int32(bi), label: l})
		}
	}
	m.auto = newAutomaton(patterns)
}
