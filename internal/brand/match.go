package brand

import (
	"cmp"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"

	"github.com/periscope-oss/periscope/internal/typo"
	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// ErrName reports an observed name that cannot be matched.
var ErrName = errors.New("invalid observed name")

// typoScore ranks typosquatting hits by how convincing the fuzzer's output
// is: visually identical names first, then one-keystroke mistakes, then
// names that need the reader to overlook a structural change.
func typoScore(fuzzer string) int {
	switch fuzzer {
	case typo.Homoglyph, typo.Cyrillic:
		return 95
	case typo.Bitsquatting, typo.Omission, typo.Transposition, typo.Replacement,
		typo.Insertion, typo.Repetition, typo.VowelSwap, typo.Hyphenation, typo.Addition:
		return 90
	case typo.Plural, typo.Subdomain, typo.Various:
		return 85
	}
	return 80 // dictionary, tld-swap
}

// Match classifies one observed name against every monitored brand and
// returns the matches, most convincing first, at most one per brand (a
// typosquatting hit wins over a phishing hit for the same brand). A name
// that matches nothing returns no matches and no error.
func (m *Matcher) Match(name string) ([]Match, error) {
	ascii, uni, err := normalize(name)
	if err != nil {
		return nil, err
	}
	suffix, _ := publicsuffix.PublicSuffix(ascii)
	if suffix == ascii {
		return nil, nil
	}
	reg := ascii
	if r, err := publicsuffix.EffectiveTLDPlusOne(ascii); err == nil {
		reg = r
	}
	var out []Match
	best := map[int32]int{} // brand -> index in out

	// Typosquatting: the name itself (subdomain fuzzer) or its registrable
	// domain is a precomputed candidate.
	for _, key := range []string{ascii, reg} {
		m.lookup(key, func(e entry) {
			b := m.brands[e.brand]
			if _, dup := best[e.brand]; dup || b.owns(ascii) {
				return
			}
			f := typo.FuzzerNames()[e.fuzzer]
			best[e.brand] = len(out)
			out = append(out, Match{
				Brand: b.domain, Domain: ascii, Kind: TypoSquatting, Fuzzer: f,
				Score:  typoScore(f),
				Reason: fmt.Sprintf("%s is a typosquatting candidate of %s (%s)", key, b.domain, f),
			})
		})
		if key == reg {
			break
		}
	}

	// Potential phishing: scan the labels left of the public suffix.
	text := uni
	if n := strings.Count(suffix, ".") + 1; n > 0 {
		text = trimLabels(uni, n)
	}
	var sk skeleton
	makeSkeleton(text, &sk)
	m.auto.scan(sk.text, func(id int32, end int) {
		start := end - m.auto.lens[id]
		for _, t := range m.targets[id] {
			b := m.brands[t.brand]
			if b.owns(ascii) {
				continue
			}
			score, reason := m.judge(text, &sk, start, end, t.label, b)
			if score == 0 {
				continue
			}
			mt := Match{Brand: b.domain, Domain: ascii, Kind: PotentialPhishing, Score: score, Reason: reason}
			if i, ok := best[t.brand]; ok {
				if out[i].Kind == PotentialPhishing && out[i].Score < score {
					out[i] = mt
				}
				continue
			}
			best[t.brand] = len(out)
			out = append(out, mt)
		}
	})
	slices.SortFunc(out, func(a, b Match) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Brand, b.Brand))
	})
	return out, nil
}

// lookup calls fn with every index entry for name.
func (m *Matcher) lookup(name string, fn func(entry)) {
	key := maphash.String(m.seed, name)
	e, ok := m.index[key]
	if !ok {
		return
	}
	sum := checksum(name)
	if e.check == sum {
		fn(e)
	}
	for _, e := range m.overflow[key] {
		if e.check == sum {
			fn(e)
		}
	}
}

// owns reports whether name is the brand's domain, an owned domain or a
// subdomain of one.
func (b *brandData) owns(name string) bool {
	for _, d := range b.owned {
		if name == d || strings.HasSuffix(name, d) && name[len(name)-len(d)-1] == '.' {
			return true
		}
	}
	return false
}

// judge scores one occurrence of a brand label's skeleton at [start, end)
// of sk; see the package documentation for the rules.
func (m *Matcher) judge(text string, sk *skeleton, start, end int, label string, b *brandData) (int, string) {
	s, e := int(sk.start[start]), int(sk.end[end-1])
	raw := text[s:e]
	exact := raw == label
	leftB := s == 0 || text[s-1] == '.' || text[s-1] == '-'
	rightB := e == len(text) || text[e] == '.' || text[e] == '-'
	leftKW, rightKW := "", ""
	if !leftB {
		leftKW = m.keywordEnding(text[:s])
	}
	if !rightB {
		rightKW = m.keywordStarting(text[e:])
	}
	bounded := (leftB || leftKW != "") && (rightB || rightKW != "")
	long := len([]rune(label)) >= m.opts.MinLabelLen

	var score int
	var reason string
	switch {
	case exact && leftB && rightB:
		score, reason = 80, fmt.Sprintf("brand label %q is a whole token", label)
	case exact && bounded:
		score, reason = 70, fmt.Sprintf("brand label %q is joined to the keyword %q", label, leftKW+rightKW)
	case bounded:
		score, reason = 50, fmt.Sprintf("%q looks like the brand label %q", raw, label)
	case exact && long:
		score, reason = 30, fmt.Sprintf("brand label %q appears inside a longer word", label)
	case long:
		score, reason = 20, fmt.Sprintf("%q, inside a longer word, looks like the brand label %q", raw, label)
	default:
		return 0, ""
	}
	if rest := text[e:]; rightB && embedsBase(rest, b.suffix) {
		score += 10
		reason += fmt.Sprintf(", followed by its suffix %q as in %s", b.suffix, b.domain)
	}
	if kw := m.keywordToken(text, s, e); kw != "" {
		score += 10
		reason += fmt.Sprintf(", with the keyword %q", kw)
	}
	return min(score, 100), reason
}

// embedsBase reports whether rest (the text after the label) starts with
// the brand's suffix as a label sequence: ".com." or "-com-" after "acme".
func embedsBase(rest, suffix string) bool {
	for _, sep := range []string{".", "-"} {
		s := sep + strings.ReplaceAll(suffix, ".", sep)
		if strings.HasPrefix(rest, s) && (len(rest) == len(s) || rest[len(s)] == '.' || rest[len(s)] == '-') {
			return true
		}
	}
	return false
}

func (m *Matcher) keywordEnding(s string) string {
	for _, k := range m.keywords {
		if strings.HasSuffix(s, k) {
			return k
		}
	}
	return ""
}

func (m *Matcher) keywordStarting(s string) string {
	for _, k := range m.keywords {
		if strings.HasPrefix(s, k) {
			return k
		}
	}
	return ""
}

// keywordToken returns a keyword that is a whole token of text outside the
// brand occurrence [s, e).
func (m *Matcher) keywordToken(text string, s, e int) string {
	pos := 0
	for _, tok := range strings.FieldsFunc(text, func(r rune) bool { return r == '.' || r == '-' }) {
		i := strings.Index(text[pos:], tok) + pos
		pos = i + len(tok)
		if i < e && pos > s {
			continue
		}
		if slices.Contains(m.keywords, tok) {
			return tok
		}
	}
	return ""
}

// trimLabels drops the last n labels of s.
func trimLabels(s string, n int) string {
	for ; n > 0; n-- {
		i := strings.LastIndexByte(s, '.')
		if i < 0 {
			return ""
		}
		s = s[:i]
	}
	return s
}

// normalize returns the ASCII and Unicode forms of an observed name.
func normalize(name string) (ascii, uni string, err error) {
	s := strings.TrimSuffix(strings.TrimSpace(name), ".")
	if s == "" {
		return "", "", fmt.Errorf("%w: empty", ErrName)
	}
	if len(s) > 253*4 {
		return "", "", fmt.Errorf("%w: %d bytes long", ErrName, len(s))
	}
	simple := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' || c >= 0x80 {
			simple = false
			break
		}
	}
	if simple && !strings.Contains(s, "xn--") && validHost(s) {
		return s, s, nil
	}
	ascii, err = idna.Lookup.ToASCII(s)
	if err != nil {
		return "", "", fmt.Errorf("%w %q: %w", ErrName, s, err)
	}
	if !validHost(ascii) {
		return "", "", fmt.Errorf("%w %q: not a host name", ErrName, s)
	}
	uni, err = idna.ToUnicode(ascii)
	if err != nil {
		uni = ascii
	}
	return ascii, strings.ToLower(uni), nil
}

// validHost checks lengths and characters of an ASCII host name; "_" is
// allowed because observed names include service labels (_dmarc).
func validHost(s string) bool {
	if len(s) > 253 {
		return false
	}
	for _, l := range strings.Split(s, ".") {
		if l == "" || len(l) > 63 {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}
