// Package hostquery is the host query language of /hosts/search,
// /hosts/count, /hosts/export, the "query" of POST /global/search and
// `periscope search` (docs/search.md): Parse reads a query into a tree,
// Plan maps it to a hoststore.Expr in which every field means exactly what
// the global-search filter of that name means (Leaf, shared with POST
// /global/search's filters).
package hostquery

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/periscope-oss/periscope/internal/periscope"
)

// The limits of a query (docs/search.md "Limits").
const (
	// MaxLength is the longest query, in bytes.
	MaxLength = 2048
	// MaxTerms bounds the values of a query: each value of a comma list,
	// each range and each bare word counts one.
	MaxTerms = 32
	// MaxTextTerms bounds the bare words and http_title values: each is a
	// substring test over every host's title.
	MaxTextTerms = 8
	// MaxDepth bounds the nesting of parentheses and negations.
	MaxDepth = 8
)

// NodeOp is the kind of a parsed node.
type NodeOp int

// The node kinds.
const (
	NodeTerm NodeOp = iota // field:value(s), or a bare word (Field "")
	NodeAnd
	NodeOr
	NodeNot
)

// Node is one node of a parsed query.
type Node struct {
	Op    NodeOp
	Kids  []*Node
	Field string  // NodeTerm: the field as written, "" for a bare word or phrase
	Vals  []Value // NodeTerm: a comma list (any one matches), or one range
	Pos   int     // byte offset of the node in the query
}

// Value is one value of a term.
type Value struct {
	Text string
	// Range: Text is empty and Lo/Hi are the bounds as written ("" for
	// open); LoIncl/HiIncl tell whether each bound is included.
	Range          bool
	Lo, Hi         string
	LoIncl, HiIncl bool
	Pos            int
}

// Query is a parsed query.
type Query struct {
	Text string
	Root *Node
}

// Parse reads a query. Its errors are query_invalid errors naming the
// position (line:column, from 1) and the token.
func Parse(text string) (*Query, error) {
	if len(text) > MaxLength {
		return nil, invalid("the query is %d bytes long; the limit is %d", len(text), MaxLength)
	}
	if !utf8.ValidString(text) {
		return nil, invalid("the query is not valid UTF-8")
	}
	for i, r := range text {
		if unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' {
			return nil, invalid("control character %U at %s", r, at(text, i))
		}
	}
	p := &parser{src: text}
	p.skip()
	if p.i == len(p.src) {
		return nil, invalid("the query is empty: give at least one term, for example country:US or port:443")
	}
	root, err := p.or(0)
	if err != nil {
		return nil, err
	}
	p.skip()
	if p.i < len(p.src) {
		return nil, p.errAt(p.i, "unexpected %s", quoteTok(p.token(p.i)))
	}
	return &Query{Text: text, Root: root}, nil
}

// invalid returns a query_invalid error.
func invalid(format string, args ...any) error {
	return periscope.Errorf(periscope.EQueryInvalid, format, args...)
}

// at names a byte offset of s as line:column (both from 1, columns in
// characters).
func at(s string, off int) string {
	line, col := 1, 1
	for i, r := range s {
		if i >= off {
			break
		}
		if r == '\n' {
			line, col = line+1, 1
			continue
		}
		col++
	}
	return fmt.Sprintf("%d:%d", line, col)
}

func quoteTok(t string) string {
	if t == "" {
		return "end of query"
	}
	return "'" + t + "'"
}

type parser struct {
	src   string
	i     int
	terms int // values read so far
	text  int // bare words and title values read so far
}

func (p *parser) errAt(off int, format string, args ...any) error {
	return invalid("%s at %s", fmt.Sprintf(format, args...), at(p.src, off))
}

func (p *parser) skip() {
	for p.i < len(p.src) && isSpace(p.src[p.i]) {
		p.i++
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// isDelim reports whether c ends a word.
func isDelim(c byte) bool { return isSpace(c) || c == '(' || c == ')' || c == '"' }

// token returns the word starting at off (one character for a delimiter),
// clipped for messages.
func (p *parser) token(off int) string {
	if off >= len(p.src) {
		return ""
	}
	if c := p.src[off]; c == '(' || c == ')' || c == '"' {
		return string(c)
	}
	j := off
	for j < len(p.src) && !isDelim(p.src[j]) {
		j++
	}
	return periscope.Clip(p.src[off:j], 64)
}

// keyword reports whether the word at the cursor is kw (upper case, as
// Shodan's and Lucene's operators) followed by a delimiter or the end.
func (p *parser) keyword(kw string) bool {
	if !strings.HasPrefix(p.src[p.i:], kw) {
		return false
	}
	j := p.i + len(kw)
	return j == len(p.src) || isDelim(p.src[j])
}

// or := and ("OR" and)*
func (p *parser) or(depth int) (*Node, error) {
	start := p.i
	first, err := p.and(depth)
	if err != nil {
		return nil, err
	}
	kids := []*Node{first}
	for {
		p.skip()
		if !p.keyword("OR") {
			break
		}
		at := p.i
		p.i += 2
		p.skip()
		if p.i == len(p.src) || p.src[p.i] == ')' || p.keyword("OR") || p.keyword("AND") {
			return nil, p.errAt(at, "'OR' needs a term on each side, found %s", quoteTok(p.token(p.i)))
		}
		k, err := p.and(depth)
		if err != nil {
			return nil, err
		}
		kids = append(kids, k)
	}
	if len(kids) == 1 {
		return first, nil
	}
	return &Node{Op: NodeOr, Kids: kids, Pos: start}, nil
}

// and := unary (["AND"] unary)*
func (p *parser) and(depth int) (*Node, error) {
	start := p.i
	var kids []*Node
	for {
		p.skip()
		if p.i == len(p.src) || p.src[p.i] == ')' || p.keyword("OR") {
			break
		}
		if p.keyword("AND") {
			at := p.i
			if len(kids) == 0 {
				return nil, p.errAt(at, "'AND' needs a term on each side")
			}
			p.i += 3
			p.skip()
			if p.i == len(p.src) || p.src[p.i] == ')' || p.keyword("OR") || p.keyword("AND") {
				return nil, p.errAt(at, "'AND' needs a term on each side, found %s", quoteTok(p.token(p.i)))
			}
		}
		k, err := p.unary(depth)
		if err != nil {
			return nil, err
		}
		kids = append(kids, k)
	}
	switch len(kids) {
	case 0:
		return nil, p.errAt(p.i, "expected a term, found %s", quoteTok(p.token(p.i)))
	case 1:
		return kids[0], nil
	}
	return &Node{Op: NodeAnd, Kids: kids, Pos: start}, nil
}

// unary := ("-" | "NOT") unary | "(" or ")" | term
func (p *parser) unary(depth int) (*Node, error) {
	p.skip()
	start := p.i
	neg := false
	switch {
	case p.keyword("NOT"):
		p.i += 3
		neg = true
	case p.i < len(p.src) && p.src[p.i] == '-':
		if p.i+1 == len(p.src) || isSpace(p.src[p.i+1]) {
			return nil, p.errAt(start, "'-' must be written against the term it negates (as in -port:22)")
		}
		p.i++
		neg = true
	}
	if neg {
		if depth+1 > MaxDepth {
			return nil, p.errAt(start, "the query nests deeper than %d levels", MaxDepth)
		}
		p.skip()
		if p.i == len(p.src) || p.src[p.i] == ')' || p.keyword("OR") || p.keyword("AND") {
			return nil, p.errAt(start, "%s needs a term after it, found %s", quoteTok(p.token(start)), quoteTok(p.token(p.i)))
		}
		k, err := p.unary(depth + 1)
		if err != nil {
			return nil, err
		}
		return &Node{Op: NodeNot, Kids: []*Node{k}, Pos: start}, nil
	}
	if p.i < len(p.src) && p.src[p.i] == '(' {
		if depth+1 > MaxDepth {
			return nil, p.errAt(start, "the query nests deeper than %d levels", MaxDepth)
		}
		p.i++
		n, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		p.skip()
		if p.i == len(p.src) || p.src[p.i] != ')' {
			return nil, p.errAt(start, "'(' is not closed, found %s", quoteTok(p.token(p.i)))
		}
		p.i++
		return n, nil
	}
	return p.term()
}

// term := field ":" values | word | phrase
func (p *parser) term() (*Node, error) {
	start := p.i
	if p.src[p.i] == '"' {
		s, err := p.quoted()
		if err != nil {
			return nil, err
		}
		return p.bare(start, s)
	}
	if p.src[p.i] == ')' {
		return nil, p.errAt(p.i, "unexpected ')'")
	}
	j := p.i
	for j < len(p.src) && !isDelim(p.src[j]) && p.src[j] != ':' {
		j++
	}
	if j < len(p.src) && p.src[j] == ':' {
		name := p.src[p.i:j]
		if name == "" {
			return nil, p.errAt(start, "%s has no field name before ':'", quoteTok(p.token(start)))
		}
		if _, ok := Fields[name]; !ok {
			msg := fmt.Sprintf("unknown field '%s'", periscope.Clip(name, 64))
			if s := suggest(name); s != "" {
				return nil, invalid("%s at %s (did you mean '%s'?)", msg, at(p.src, start), s)
			}
			return nil, invalid("%s at %s (the fields are listed in docs/search.md)", msg, at(p.src, start))
		}
		p.i = j + 1
		vals, err := p.values(name, start)
		if err != nil {
			return nil, err
		}
		return &Node{Op: NodeTerm, Field: name, Vals: vals, Pos: start}, nil
	}
	for j < len(p.src) && !isDelim(p.src[j]) {
		j++
	}
	word := p.src[p.i:j]
	p.i = j
	return p.bare(start, word)
}

// bare returns the node of a bare word or phrase.
func (p *parser) bare(start int, s string) (*Node, error) {
	if strings.TrimSpace(s) == "" {
		return nil, p.errAt(start, "an empty phrase matches nothing")
	}
	if err := p.count(start, true); err != nil {
		return nil, err
	}
	return &Node{Op: NodeTerm, Vals: []Value{{Text: s, Pos: start}}, Pos: start}, nil
}

// count notes one more value, a text search when text is set.
func (p *parser) count(off int, text bool) error {
	p.terms++
	if p.terms > MaxTerms {
		return p.errAt(off, "the query has more than %d terms", MaxTerms)
	}
	if text {
		p.text++
		if p.text > MaxTextTerms {
			return p.errAt(off, "the query has more than %d bare words and http_title values", MaxTextTerms)
		}
	}
	return nil
}

// quoted reads a quoted string at the cursor ('"' … '"', with \" and \\
// escapes).
func (p *parser) quoted() (string, error) {
	start := p.i
	p.i++
	var b strings.Builder
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch {
		case c == '\\' && p.i+1 < len(p.src) && (p.src[p.i+1] == '"' || p.src[p.i+1] == '\\'):
			b.WriteByte(p.src[p.i+1])
			p.i += 2
		case c == '"':
			p.i++
			return b.String(), nil
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return "", p.errAt(start, "the quote is not closed")
}

// values := range | value ("," value)*
func (p *parser) values(field string, start int) ([]Value, error) {
	text := Fields[field].Canonical == "http_title"
	if p.i == len(p.src) || isSpace(p.src[p.i]) || p.src[p.i] == ')' || p.src[p.i] == '(' {
		return nil, p.errAt(start, "field '%s' has no value", field)
	}
	if p.src[p.i] == '[' {
		v, err := p.bracket(field)
		if err != nil {
			return nil, err
		}
		return []Value{v}, p.count(v.Pos, false)
	}
	if c := p.src[p.i]; c == '>' || c == '<' {
		off := p.i
		p.i++
		incl := p.i < len(p.src) && p.src[p.i] == '='
		if incl {
			p.i++
		}
		bound, err := p.item(field, start)
		if err != nil {
			return nil, err
		}
		v := Value{Range: true, Pos: off}
		if c == '>' {
			v.Lo, v.LoIncl = bound, incl
		} else {
			v.Hi, v.HiIncl = bound, incl
		}
		return []Value{v}, p.count(off, false)
	}
	var out []Value
	for {
		off := p.i
		var s string
		var err error
		if p.i < len(p.src) && p.src[p.i] == '"' {
			s, err = p.quoted()
		} else {
			s, err = p.item(field, start)
		}
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(s) == "" {
			return nil, p.errAt(off, "field '%s' has an empty value", field)
		}
		if err := p.count(off, text); err != nil {
			return nil, err
		}
		out = append(out, Value{Text: s, Pos: off})
		if p.i < len(p.src) && p.src[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.src) && !isDelim(p.src[p.i]) || p.i < len(p.src) && p.src[p.i] == '"' {
			return nil, p.errAt(p.i, "unexpected %s in the value of '%s'", quoteTok(p.token(p.i)), field)
		}
		return out, nil
	}
}

// item reads one unquoted value: up to a delimiter or a comma.
func (p *parser) item(field string, start int) (string, error) {
	j := p.i
	for j < len(p.src) && !isDelim(p.src[j]) && p.src[j] != ',' {
		j++
	}
	if j == p.i {
		return "", p.errAt(p.i, "field '%s' has an empty value", field)
	}
	s := p.src[p.i:j]
	p.i = j
	return s, nil
}

// bracket reads "[lo TO hi]" (either bound may be *).
func (p *parser) bracket(field string) (Value, error) {
	start := p.i
	end := strings.IndexByte(p.src[p.i:], ']')
	if end < 0 {
		return Value{}, p.errAt(start, "'[' is not closed: write a range as [low TO high]")
	}
	inner := p.src[p.i+1 : p.i+end]
	parts := strings.Fields(inner)
	if len(parts) != 3 || parts[1] != "TO" {
		return Value{}, p.errAt(start, "bad range '%s': write it as [low TO high]", periscope.Clip(p.src[start:p.i+end+1], 64))
	}
	p.i += end + 1
	if p.i < len(p.src) && !isDelim(p.src[p.i]) {
		return Value{}, p.errAt(p.i, "unexpected %s after the range of '%s'", quoteTok(p.token(p.i)), field)
	}
	v := Value{Range: true, Pos: start, LoIncl: true, HiIncl: true}
	if parts[0] != "*" {
		v.Lo = parts[0]
	}
	if parts[2] != "*" {
		v.Hi = parts[2]
	}
	return v, nil
}

// suggest returns the field name nearest to name, when one is near enough
// to be a typo: at most two edits away (one for names of up to four
// letters), a swap of two neighbours counting one; ties go to the first
// name in alphabetical order.
func suggest(name string) string {
	lower := strings.ToLower(name)
	if _, ok := Fields[lower]; ok {
		return lower
	}
	best, bestD := "", 2
	if len(name) <= 4 {
		bestD = 1
	}
	for f := range Fields {
		d := editDistance(lower, f, bestD+1)
		if d < bestD || d == bestD && (best == "" || f < best) {
			best, bestD = f, d
		}
	}
	return best
}

// editDistance is the optimal-string-alignment distance of a and b (bytes:
// insertions, deletions, substitutions and swaps of neighbours), or limit
// when it is at least that.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return min(d[len(a)][len(b)], limit)
}
