package typo

import (
	"slices"
	"strings"
)

// generator holds the state of one Generate call.
type generator struct {
	name   Name
	label  []rune
	prefix string // subdomain plus dot, or ""
	suffix string // dot plus public suffix
	opts   Options

	seen  map[string]struct{}
	cands []pending // Unicode domains, in generation order
}

// pending is a candidate before encoding; fuzzer indexes FuzzerNames.
type pending struct {
	fuzzer int
	domain string
}

func newGenerator(n Name, opts Options) *generator {
	g := &generator{
		name:   n,
		label:  []rune(n.Label),
		suffix: "." + n.Suffix,
		opts:   opts,
		seen:   make(map[string]struct{}, 4096),
		cands:  make([]pending, 0, 4096),
	}
	if n.Subdomain != "" {
		g.prefix = n.Subdomain + "."
	}
	return g
}

// addDomain records a full Unicode domain unless an earlier fuzzer made it.
func (g *generator) addDomain(fuzzer int, domain string) {
	if _, dup := g.seen[domain]; dup {
		return
	}
	g.seen[domain] = struct{}{}
	g.cands = append(g.cands, pending{fuzzer: fuzzer, domain: domain})
}

// add records a variant of the registrable label.
func (g *generator) add(fuzzer int, label string) {
	g.addDomain(fuzzer, g.prefix+label+g.suffix)
}

// fuzzerIndex returns the position of name in FuzzerNames.
func fuzzerIndex(name string) int {
	return slices.Index(FuzzerNames(), name)
}

func (g *generator) run(enabled map[string]bool) {
	if enabled[Original] {
		g.add(fuzzerIndex(Original), g.name.Label)
	}
	steps := []struct {
		name string
		fn   func(emit func(string))
	}{
		{Addition, g.addition},
		{Bitsquatting, g.bitsquatting},
		{Cyrillic, g.cyrillic},
		{Homoglyph, g.homoglyph},
		{Hyphenation, g.hyphenation},
		{Insertion, g.insertion},
		{Omission, g.omission},
		{Plural, g.plural},
		{Repetition, g.repetition},
		{Replacement, g.replacement},
		{Subdomain, g.subdomain},
		{Transposition, g.transposition},
		{VowelSwap, g.vowelSwap},
		{Dictionary, g.dictionary},
	}
	for _, s := range steps {
		if enabled[s.name] {
			f := fuzzerIndex(s.name)
			s.fn(func(l string) { g.add(f, l) })
		}
	}
	if enabled[TLDSwap] {
		g.tldSwap()
	}
	if enabled[Various] {
		g.various()
	}
}

// finish encodes, validates, removes names that collide once encoded and
// sorts the result by fuzzer name, then domain.
func (g *generator) finish() []Candidate {
	names := FuzzerNames()
	buckets := make([][]string, len(names))
	enc := newEncoder()
	var encoded map[string]struct{}
	total := 0
	for _, c := range g.cands {
		d, ok := enc.domainToASCII(c.domain)
		if !ok {
			continue
		}
		// Distinct Unicode names can only collide once encoded through an
		// A-label; track just those.
		if strings.Contains(d, "xn--") {
			if encoded == nil {
				encoded = make(map[string]struct{}, len(g.cands))
			}
			if _, dup := encoded[d]; dup {
				continue
			}
			encoded[d] = struct{}{}
		}
		buckets[c.fuzzer] = append(buckets[c.fuzzer], d)
		total++
	}
	order := make([]int, len(names))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(names[a], names[b]) })
	out := make([]Candidate, 0, total)
	for _, f := range order {
		slices.Sort(buckets[f])
		for _, d := range buckets[f] {
			out = append(out, Candidate{Fuzzer: names[f], Domain: d})
		}
	}
	return out
}

// splice returns l with the runes in [i, j) replaced by mid.
func splice(l []rune, i, j int, mid string) string {
	var b strings.Builder
	b.Grow(len(l)*2 + len(mid))
	for _, r := range l[:i] {
		b.WriteRune(r)
	}
	b.WriteString(mid)
	for _, r := range l[j:] {
		b.WriteRune(r)
	}
	return b.String()
}

// alnum reports whether r is one of the characters allowed in an ASCII label.
func ldh(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-'
}

// addition appends one letter or digit to the label, and before each hyphen.
func (g *generator) addition(emit func(string)) {
	l := g.name.Label
	if strings.Contains(l, "-") {
		parts := strings.Split(l, "-")
		for p := 1; p < len(parts); p++ {
			head, tail := strings.Join(parts[:p], "-"), strings.Join(parts[p:], "-")
			for _, c := range additionChars {
				emit(head + string(c) + "-" + tail)
			}
		}
	}
	for _, c := range additionChars {
		emit(l + string(c))
	}
}

const additionChars = "0123456789abcdefghijklmnopqrstuvwxyz"

// bitsquatting flips each bit of each character, keeping results that are
// still host-name characters.
func (g *generator) bitsquatting(emit func(string)) {
	for i, c := range g.label {
		for mask := rune(1); mask <= 128; mask <<= 1 {
			if b := c ^ mask; ldh(b) {
				emit(splice(g.label, i, i+1, string(b)))
			}
		}
	}
}

// cyrillic replaces every letter by its Cyrillic look-alike, only when all
// of them have one.
func (g *generator) cyrillic(emit func(string)) {
	out := make([]rune, len(g.label))
	for i, c := range g.label {
		cy, ok := latinToCyrillic[c]
		if !ok {
			return
		}
		out[i] = cy
	}
	emit(string(out))
}

// glyphTable is a merged homoglyph repertoire indexed by one or two runes.
type glyphTable struct {
	one map[rune][]string
	two map[[2]rune][]string
}

func mergeGlyphs(sets ...glyphSet) glyphTable {
	t := glyphTable{one: map[rune][]string{}, two: map[[2]rune][]string{}}
	for _, set := range sets {
		for k, gs := range set {
			rs := []rune(k)
			for _, gl := range gs {
				switch len(rs) {
				case 1:
					if !slices.Contains(t.one[rs[0]], gl) {
						t.one[rs[0]] = append(t.one[rs[0]], gl)
					}
				case 2:
					key := [2]rune{rs[0], rs[1]}
					if !slices.Contains(t.two[key], gl) {
						t.two[key] = append(t.two[key], gl)
					}
				}
			}
		}
	}
	return t
}

// homoglyph substitutes look-alike characters (by the suffix's IDN
// repertoire plus ASCII look-alikes) once, then once more on every result.
func (g *generator) homoglyph(emit func(string)) {
	set, ok := glyphsBySuffix[g.name.Suffix]
	if !ok {
		set = glyphsUnicode
	}
	t := mergeGlyphs(glyphsASCII, set)
	first := make(map[string]struct{}, 256)
	var order []string
	t.mix(g.label, func(s string) {
		if _, dup := first[s]; !dup {
			first[s] = struct{}{}
			order = append(order, s)
		}
	})
	for _, s := range order {
		emit(s)
	}
	for _, s := range order {
		t.mix([]rune(s), emit)
	}
}

// mix yields every single substitution of d: one character, a doubled
// character replaced on both positions, or a two-character key.
func (t glyphTable) mix(d []rune, emit func(string)) {
	// Byte offsets let each result be built with one concatenation.
	s := string(d)
	off := make([]int, 0, len(d)+1)
	for i := range s {
		off = append(off, i)
	}
	off = append(off, len(s))
	for i, c := range d {
		for _, gl := range t.one[c] {
			emit(s[:off[i]] + gl + s[off[i+1]:])
		}
	}
	for i := 0; i+1 < len(d); i++ {
		a, b := d[i], d[i+1]
		if a == b {
			for _, gl := range t.one[a] {
				emit(s[:off[i]] + gl + gl + s[off[i+2]:])
			}
		}
		for _, gl := range t.two[[2]rune{a, b}] {
			emit(s[:off[i]] + gl + s[off[i+2]:])
		}
	}
}

// hyphenation inserts a hyphen between each pair of characters.
func (g *generator) hyphenation(emit func(string)) {
	for i := 1; i < len(g.label); i++ {
		emit(splice(g.label, i, i, "-"))
	}
}

// insertion inserts, before and after each character except the last, the
// keys next to it on each keyboard layout.
func (g *generator) insertion(emit func(string)) {
	for i := 0; i+1 < len(g.label); i++ {
		c := g.label[i]
		for _, kb := range keyboards {
			for _, k := range kb[c] {
				emit(splice(g.label, i, i+1, string(k)+string(c)))
				emit(splice(g.label, i, i+1, string(c)+string(k)))
			}
		}
	}
}

// omission drops each character.
func (g *generator) omission(emit func(string)) {
	for i := range g.label {
		emit(splice(g.label, i, i+1, ""))
	}
}

// plural inserts "s" (or "es" after s, x, z) after each inner character.
func (g *generator) plural(emit func(string)) {
	for i := 2; i < len(g.label)-2; i++ {
		c := g.label[i]
		ins := "s"
		if c == 's' || c == 'x' || c == 'z' {
			ins = "es"
		}
		emit(splice(g.label, i+1, i+1, ins))
	}
}

// repetition doubles each character.
func (g *generator) repetition(emit func(string)) {
	for i, c := range g.label {
		emit(splice(g.label, i, i, string(c)))
	}
}

// replacement replaces each character by the keys next to it.
func (g *generator) replacement(emit func(string)) {
	for i, c := range g.label {
		for _, kb := range keyboards {
			for _, k := range kb[c] {
				emit(splice(g.label, i, i+1, string(k)))
			}
		}
	}
}

// subdomain splits the label with a dot between two non-hyphen characters.
func (g *generator) subdomain(emit func(string)) {
	for i := 1; i+1 < len(g.label); i++ {
		if g.label[i] != '-' && g.label[i] != '.' && g.label[i-1] != '-' && g.label[i-1] != '.' {
			emit(splice(g.label, i, i, "."))
		}
	}
}

// transposition swaps each pair of neighbouring characters.
func (g *generator) transposition(emit func(string)) {
	for i := 0; i+1 < len(g.label); i++ {
		emit(splice(g.label, i, i+2, string(g.label[i+1])+string(g.label[i])))
	}
}

// vowelSwap replaces each vowel by every vowel.
func (g *generator) vowelSwap(emit func(string)) {
	const vowels = "aeiou"
	for i, c := range g.label {
		if !strings.ContainsRune(vowels, c) {
			continue
		}
		for _, v := range vowels {
			emit(splice(g.label, i, i+1, string(v)))
		}
	}
}

// dictionary joins each word to the label, with and without a hyphen, and
// replaces the first or last hyphen-separated part by each word.
func (g *generator) dictionary(emit func(string)) {
	l := g.name.Label
	for _, w := range g.opts.Dictionary {
		if strings.HasPrefix(l, w) && strings.HasSuffix(l, w) {
			continue
		}
		emit(l + "-" + w)
		emit(l + w)
		emit(w + "-" + l)
		emit(w + l)
	}
	if strings.Contains(l, "-") {
		parts := strings.Split(l, "-")
		head, tail := strings.Join(parts[:len(parts)-1], "-"), strings.Join(parts[1:], "-")
		for _, w := range g.opts.Dictionary {
			emit(head + "-" + w)
			emit(w + "-" + tail)
		}
	}
}

// tldSwap puts the label under each other suffix of the list.
func (g *generator) tldSwap() {
	for _, t := range g.opts.TLDs {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" || t == g.name.Suffix {
			continue
		}
		g.addDomain(fuzzerIndex(TLDSwap), g.prefix+g.name.Label+"."+t)
	}
}

// various covers suffix games: the suffix glued to the label, a multi-label
// suffix cut to its last label, and the subdomain glued to the label.
func (g *generator) various() {
	l, t, sub := g.name.Label, g.name.Suffix, g.name.Subdomain
	v := fuzzerIndex(Various)
	if strings.Contains(t, ".") {
		g.addDomain(v, g.prefix+l+"."+t[strings.LastIndexByte(t, '.')+1:])
		g.addDomain(v, g.prefix+l+t)
	} else {
		g.addDomain(v, g.prefix+l+t+"."+t)
		if t != "com" {
			g.addDomain(v, g.prefix+l+"-"+t+".com")
			g.addDomain(v, g.prefix+l+t+".com")
		}
	}
	if sub != "" {
		g.addDomain(v, sub+l+"."+t)
		g.addDomain(v, strings.ReplaceAll(sub, ".", "")+l+"."+t)
		g.addDomain(v, sub+"-"+l+"."+t)
		g.addDomain(v, strings.ReplaceAll(sub, ".", "-")+"-"+l+"."+t)
	}
}
