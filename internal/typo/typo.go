// Package typo generates typosquatting candidates for a domain name: the
// look-alike registrable names an attacker could register to impersonate it.
//
// The fuzzers follow the published descriptions of dnstwist's algorithms
// (addition, bitsquatting, cyrillic, homoglyph, hyphenation, insertion,
// omission, plural, repetition, replacement, subdomain, transposition,
// vowel-swap, dictionary, tld-swap, various) and are applied to the
// registrable label, the one directly left of the public suffix, so that
// multi-label suffixes such as co.uk are kept whole. Every candidate is
// encoded to ASCII (punycode), invalid names are dropped and duplicates are
// removed, keeping the first fuzzer in the order of [FuzzerNames].
package typo

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// Fuzzer names, spelt as in dnstwist's CSV output.
const (
	Original      = "*original"
	Addition      = "addition"
	Bitsquatting  = "bitsquatting"
	Cyrillic      = "cyrillic"
	Homoglyph     = "homoglyph"
	Hyphenation   = "hyphenation"
	Insertion     = "insertion"
	Omission      = "omission"
	Plural        = "plural"
	Repetition    = "repetition"
	Replacement   = "replacement"
	Subdomain     = "subdomain"
	Transposition = "transposition"
	VowelSwap     = "vowel-swap"
	Dictionary    = "dictionary"
	TLDSwap       = "tld-swap"
	Various       = "various"
)

// FuzzerNames returns every fuzzer in generation order. When two fuzzers
// produce the same name, the candidate records the earlier one, as dnstwist
// does.
func FuzzerNames() []string {
	return []string{
		Original, Addition, Bitsquatting, Cyrillic, Homoglyph, Hyphenation,
		Insertion, Omission, Plural, Repetition, Replacement, Subdomain,
		Transposition, VowelSwap, Dictionary, TLDSwap, Various,
	}
}

// Candidate is one generated name and the fuzzer that produced it.
type Candidate struct {
	Fuzzer string
	Domain string // ASCII (punycode) form, lower case
}

// Options tunes Generate.
type Options struct {
	// Dictionary holds words the dictionary fuzzer prepends and appends.
	Dictionary []string
	// TLDs holds the public suffixes the tld-swap fuzzer substitutes.
	TLDs []string
	// Fuzzers restricts generation to the named fuzzers; empty means all.
	Fuzzers []string
}

// Errors returned by Parse and Generate; test with errors.Is.
var (
	ErrEmpty        = errors.New("empty domain name")
	ErrInvalid      = errors.New("invalid domain name")
	ErrPublicSuffix = errors.New("domain is a public suffix, not a registrable name")
	ErrMixedScript  = errors.New("domain label mixes scripts")
	ErrFuzzer       = errors.New("unknown fuzzer")
)

// Name is a domain split around its public suffix.
type Name struct {
	Subdomain string // ASCII labels left of the registrable label, may be empty
	Label     string // registrable label in Unicode (bücher for xn--bcher-kva)
	Suffix    string // public suffix in ASCII form (co.uk, de, xn--p1ai)
}

// Domain returns the name's full ASCII form.
func (n Name) Domain() string {
	label, err := idna.Registration.ToASCII(n.Label)
	if err != nil {
		label = n.Label
	}
	if n.Subdomain != "" {
		return n.Subdomain + "." + label + "." + n.Suffix
	}
	return label + "." + n.Suffix
}

// Registrable returns the registrable domain (label plus suffix) in ASCII.
func (n Name) Registrable() string {
	return Name{Label: n.Label, Suffix: n.Suffix}.Domain()
}

// lookupProfile maps input the way a browser would (case folding, width
// mapping) and then enforces IDNA2008 validity and DNS lengths.
var lookupProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.ValidateLabels(true),
	idna.StrictDomainName(true),
	idna.Transitional(false),
)

// Parse validates a domain name given in ASCII or Unicode form and splits it
// around its public suffix. It rejects empty names, names that are
// themselves public suffixes (co.uk), labels over 63 octets, names over 253
// octets and labels that mix scripts (a Cyrillic "а" in a Latin word).
func Parse(domain string) (Name, error) {
	s := strings.TrimSpace(domain)
	s = strings.TrimSuffix(s, ".")
	if s == "" {
		return Name{}, ErrEmpty
	}
	if !utf8.ValidString(s) {
		return Name{}, fmt.Errorf("%w: %q is not valid UTF-8", ErrInvalid, s)
	}
	for i, l := range strings.Split(s, ".") {
		if l == "" {
			return Name{}, fmt.Errorf("%w: %q has an empty label at position %d", ErrInvalid, s, i+1)
		}
		if n := len(l); n > 63 && isASCII(l) {
			return Name{}, fmt.Errorf("%w: label %d is %d characters long, the limit is 63", ErrInvalid, i+1, n)
		}
	}
	ascii, err := lookupProfile.ToASCII(s)
	if err != nil {
		return Name{}, fmt.Errorf("%w: %q: %w", ErrInvalid, s, err)
	}
	if len(ascii) > 253 {
		return Name{}, fmt.Errorf("%w: %q is %d characters long, the limit is 253", ErrInvalid, s, len(ascii))
	}
	labels := strings.Split(ascii, ".")
	for i, l := range labels {
		if len(l) > 63 {
			return Name{}, fmt.Errorf("%w: label %d is %d characters long in ASCII form, the limit is 63", ErrInvalid, i+1, len(l))
		}
		if !validASCIILabel(l, false) {
			return Name{}, fmt.Errorf("%w: label %q", ErrInvalid, l)
		}
		u, err := idna.ToUnicode(l)
		if err != nil {
			return Name{}, fmt.Errorf("%w: label %q: %w", ErrInvalid, l, err)
		}
		if err := checkScripts(u); err != nil {
			return Name{}, err
		}
	}
	suffix, _ := publicsuffix.PublicSuffix(ascii)
	if suffix == ascii {
		return Name{}, fmt.Errorf("%w: %q", ErrPublicSuffix, ascii)
	}
	reg, err := publicsuffix.EffectiveTLDPlusOne(ascii)
	if err != nil {
		return Name{}, fmt.Errorf("%w: %q: %w", ErrInvalid, ascii, err)
	}
	n := Name{Suffix: suffix}
	if len(reg) < len(ascii) {
		n.Subdomain = ascii[:len(ascii)-len(reg)-1]
	}
	n.Label, err = idna.ToUnicode(reg[:len(reg)-len(suffix)-1])
	if err != nil {
		return Name{}, fmt.Errorf("%w: %q: %w", ErrInvalid, reg, err)
	}
	return n, nil
}

// checkScripts rejects a label whose letters come from more than one script,
// allowing the combinations registries accept for Chinese, Japanese and
// Korean names written alongside Latin.
func checkScripts(label string) error {
	var seen []string
	for _, r := range label {
		if r < utf8.RuneSelf {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
				seen = addScript(seen, "Latin")
			}
			continue
		}
		if name := scriptOf(r); name != "" {
			seen = addScript(seen, name)
		}
	}
	if len(seen) <= 1 {
		return nil
	}
	for _, allowed := range [][]string{
		{"Latin", "Han", "Hiragana", "Katakana"},
		{"Latin", "Han", "Bopomofo"},
		{"Latin", "Han", "Hangul"},
	} {
		if allSubset(seen, allowed) {
			return nil
		}
	}
	return fmt.Errorf("%w: %q uses %s", ErrMixedScript, label, strings.Join(seen, " and "))
}

func addScript(seen []string, s string) []string {
	if slices.Contains(seen, s) {
		return seen
	}
	return append(seen, s)
}

func allSubset(xs, set []string) bool {
	for _, x := range xs {
		if !slices.Contains(set, x) {
			return false
		}
	}
	return true
}

// scriptOf names the script of r, or "" for Common and Inherited runes.
func scriptOf(r rune) string {
	for name, table := range unicode.Scripts {
		if name == "Common" || name == "Inherited" {
			continue
		}
		if unicode.Is(table, r) {
			return name
		}
	}
	return ""
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Generate returns the typosquatting candidates of domain, the input itself
// first under the fuzzer "*original", then the rest sorted by fuzzer and
// domain (the order of dnstwist's CSV output). Names that are not valid
// host names once encoded are dropped; a name produced by several fuzzers
// appears once, under the earliest fuzzer of FuzzerNames.
func Generate(domain string, opts Options) ([]Candidate, error) {
	n, err := Parse(domain)
	if err != nil {
		return nil, err
	}
	enabled, err := enabledFuzzers(opts.Fuzzers)
	if err != nil {
		return nil, err
	}
	g := newGenerator(n, opts)
	g.run(enabled)
	return g.finish(), nil
}

func enabledFuzzers(names []string) (map[string]bool, error) {
	all := FuzzerNames()
	enabled := make(map[string]bool, len(all))
	if len(names) == 0 {
		for _, f := range all {
			enabled[f] = true
		}
		return enabled, nil
	}
	for _, f := range names {
		f = strings.ToLower(strings.TrimSpace(f))
		if !slices.Contains(all, f) {
			return nil, fmt.Errorf("%w %q (known: %s)", ErrFuzzer, f, strings.Join(all, ", "))
		}
		enabled[f] = true
	}
	return enabled, nil
}
