// Package zone reads DNS zone files (RFC 1035 §5 master files, plain or
// gzip-compressed) as a stream of records, and derives the registered
// domains of a zone (the owners of its delegations), as TLD zone files
// published through ICANN CZDS list them.
//
// Supported: $ORIGIN, $TTL, '@', relative and absolute names, a blank owner
// (the previous owner), parentheses spanning lines, comments, quoted strings
// with escapes, and TTL and class in either order (with BIND's 1h30m TTL
// units). $INCLUDE is never followed: it is reported as an error and the
// rest of the file is read.
package zone

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
)

const (
	// maxLine bounds one physical line; longer lines are skipped.
	maxLine = 64 << 10
	// maxRecord bounds one logical record (all lines of a parenthesised
	// group); a '(' never closed cannot swallow the rest of a large file.
	maxRecord = 64 << 10
)

// Record is one resource record with its owner and names made absolute.
type Record struct {
	// Name is the owner, lower case, without the trailing dot ("." for the
	// root).
	Name  string
	TTL   uint32
	Class string // upper case, such as "IN"
	Type  string // upper case, such as "NS" or "TYPE65"
	// RData holds the fields after the type. Quoted strings are unquoted;
	// the domain names of NS, CNAME, DNAME, PTR, MX, SOA and SRV records are
	// made absolute, lower case, without the trailing dot.
	RData []string
	// Line is the line the record starts on.
	Line int
}

// ParseError is a problem with one record or directive. The Reader skips it
// and can go on reading.
type ParseError struct {
	File string
	Line int
	Col  int // 1-based; 0 when the whole record is at fault
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Col > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// Options configure a Reader.
type Options struct {
	// Name labels the input in errors, such as the file name.
	Name string
	// Origin is the initial $ORIGIN, such as "com". Without it (and before
	// any $ORIGIN), relative names and '@' are errors.
	Origin string
}

// Reader reads records from a zone file.
type Reader struct {
	br   *bufio.Reader
	name string

	line int // physical lines read

	origin    string // lower case, no trailing dot, "" for the root
	hasOrigin bool

	defaultTTL, lastTTL       uint32
	hasDefaultTTL, hasLastTTL bool
	lastOwner                 string
	lastClass                 string

	toks []token
	buf  []byte
	eof  bool
}

type token struct {
	s      string
	quoted bool
	col    int
}

// NewReader returns a Reader for r, which may be gzip-compressed (detected
// by its magic number).
func NewReader(r io.Reader, opts Options) (*Reader, error) {
	name := opts.Name
	if name == "" {
		name = "zone"
	}
	br := bufio.NewReaderSize(r, maxLine)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("open gzip zone file %s: %w", name, err)
		}
		br = bufio.NewReaderSize(gz, maxLine)
	}
	z := &Reader{br: br, name: name, lastClass: "IN"}
	if opts.Origin != "" {
		o, err := z.absolute(canonicalOrigin(opts.Origin))
		if err != nil {
			return nil, fmt.Errorf("zone origin %q: %w", opts.Origin, err)
		}
		z.setOrigin(o)
	}
	return z, nil
}

func canonicalOrigin(s string) string {
	if !strings.HasSuffix(s, ".") {
		return s + "."
	}
	return s
}

func (z *Reader) setOrigin(o string) {
	if o == "." {
		o = ""
	}
	z.origin, z.hasOrigin = o, true
}

// Origin returns the current origin ("" for the root) and whether one is set.
func (z *Reader) Origin() (string, bool) { return z.origin, z.hasOrigin }

// Next returns the next record. At the end of the input it returns io.EOF.
// A *ParseError concerns one record or directive, which is skipped: call
// Next again to continue. Any other error (reading, decompressing) is fatal.
func (z *Reader) Next() (Record, error) {
	for {
		start, blankOwner, err := z.readLogical()
		if err != nil {
			return Record{}, err
		}
		if len(z.toks) == 0 {
			if z.eof {
				return Record{}, io.EOF
			}
			continue
		}
		if !blankOwner && strings.HasPrefix(z.toks[0].s, "$") && !z.toks[0].quoted {
			if err := z.directive(start); err != nil {
				return Record{}, err
			}
			continue
		}
		return z.record(start, blankOwner)
	}
}

func (z *Reader) errorf(line int, col int, format string, args ...any) *ParseError {
	return &ParseError{File: z.name, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// readLogical reads physical lines until parentheses balance, leaving the
// tokens in z.toks. It returns the first line's number and whether the
// record's owner field is blank (the line starts with white space).
func (z *Reader) readLogical() (start int, blankOwner bool, err error) {
	z.toks = z.toks[:0]
	depth := 0
	size := 0
	first := true
	openLine := 0
	for {
		line, rerr := z.readLine()
		if rerr != nil && rerr != io.EOF {
			if pe, ok := rerr.(*ParseError); ok {
				z.toks = z.toks[:0]
				return pe.Line, false, pe
			}
			return z.line, false, fmt.Errorf("read zone file %s: %w", z.name, rerr)
		}
		if rerr == io.EOF && line == nil {
			z.eof = true
			if depth > 0 {
				z.toks = z.toks[:0]
				return openLine, false, z.errorf(openLine, 0, "'(' is never closed")
			}
			return start, blankOwner, nil
		}
		if first {
			start = z.line
			blankOwner = len(line) > 0 && (line[0] == ' ' || line[0] == '\t')
			first = false
		}
		size += len(line)
		if size > maxRecord {
			z.toks = z.toks[:0]
			return start, false, z.errorf(start, 0, "record longer than %d bytes (unclosed '('?)", maxRecord)
		}
		if depth == 0 {
			openLine = z.line
		}
		depth, err = z.tokenize(line, depth)
		if err != nil {
			// Skip the rest of the record: drop the tokens and resume at the
			// next line with balanced parentheses.
			z.toks = z.toks[:0]
			return start, false, err
		}
		if depth == 0 {
			if len(z.toks) == 0 && rerr != io.EOF {
				first = true // blank line or comment: keep looking
				continue
			}
			if rerr == io.EOF {
				z.eof = true
			}
			return start, blankOwner, nil
		}
		if rerr == io.EOF {
			z.eof = true
			z.toks = z.toks[:0]
			return openLine, false, z.errorf(openLine, 0, "'(' is never closed")
		}
	}
}

// readLine returns the next physical line without its line ending; nil at
// the end of input.
func (z *Reader) readLine() ([]byte, error) {
	b, err := z.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		z.line++
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = z.br.ReadSlice('\n')
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		return nil, z.errorf(z.line, 0, "line longer than %d bytes", maxLine)
	}
	if len(b) == 0 {
		return nil, err
	}
	z.line++
	b = bytes.TrimRight(b, "\r\n")
	return b, err
}

// tokenize appends the fields of one line to z.toks.
func (z *Reader) tokenize(line []byte, depth int) (int, error) {
	i := 0
	for i < len(line) {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == ';':
			return depth, nil
		case c == '(':
			depth++
			i++
		case c == ')':
			if depth == 0 {
				return 0, z.errorf(z.line, i+1, "')' without '('")
			}
			depth--
			i++
		case c == '"':
			col := i + 1
			z.buf = z.buf[:0]
			i++
			closed := false
			for i < len(line) {
				c := line[i]
				if c == '"' {
					closed = true
					i++
					break
				}
				if c == '\\' && i+1 < len(line) {
					n, adv := unescape(line[i+1:])
					z.buf = append(z.buf, n)
					i += 1 + adv
					continue
				}
				z.buf = append(z.buf, c)
				i++
			}
			if !closed {
				return 0, z.errorf(z.line, col, "quoted string is not closed")
			}
			z.toks = append(z.toks, token{s: string(z.buf), quoted: true, col: col})
		default:
			col := i + 1
			j := i
			for j < len(line) {
				c := line[j]
				if c == ' ' || c == '\t' || c == '\r' || c == ';' || c == '(' || c == ')' || c == '"' {
					break
				}
				if c == '\\' && j+1 < len(line) {
					j++ // an escaped character never ends the field
				}
				j++
			}
			z.toks = append(z.toks, token{s: string(line[i:j]), col: col})
			i = j
		}
	}
	return depth, nil
}

// unescape decodes the character after a backslash: \DDD (decimal) or \X.
func unescape(b []byte) (byte, int) {
	if len(b) >= 3 && isDigit(b[0]) && isDigit(b[1]) && isDigit(b[2]) {
		if v := int(b[0]-'0')*100 + int(b[1]-'0')*10 + int(b[2]-'0'); v <= 255 {
			return byte(v), 3
		}
	}
	return b[0], 1
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (z *Reader) directive(line int) error {
	d := strings.ToUpper(z.toks[0].s)
	args := z.toks[1:]
	switch d {
	case "$ORIGIN":
		if len(args) != 1 {
			return z.errorf(line, z.toks[0].col, "$ORIGIN takes one name, got %d fields", len(args))
		}
		o, err := z.absolute(args[0].s)
		if err != nil {
			return z.errorf(line, args[0].col, "$ORIGIN: %v", err)
		}
		z.setOrigin(o)
		return nil
	case "$TTL":
		if len(args) != 1 {
			return z.errorf(line, z.toks[0].col, "$TTL takes one value, got %d fields", len(args))
		}
		ttl, ok := parseTTL(args[0].s)
		if !ok {
			return z.errorf(line, args[0].col, "$TTL: bad TTL %q", args[0].s)
		}
		z.defaultTTL, z.hasDefaultTTL = ttl, true
		return nil
	case "$INCLUDE":
		return z.errorf(line, z.toks[0].col, "$INCLUDE is not supported: the included file is not read")
	}
	return z.errorf(line, z.toks[0].col, "unsupported directive %s", z.toks[0].s)
}

func (z *Reader) record(line int, blankOwner bool) (Record, error) {
	toks := z.toks
	rec := Record{Line: line}
	if blankOwner {
		if z.lastOwner == "" {
			return Record{}, z.errorf(line, 0, "record has no owner and no previous record")
		}
		rec.Name = z.lastOwner
	} else {
		if toks[0].quoted {
			return Record{}, z.errorf(line, toks[0].col, "owner name is a quoted string")
		}
		name, err := z.absolute(toks[0].s)
		if err != nil {
			return Record{}, z.errorf(line, toks[0].col, "owner: %v", err)
		}
		rec.Name = name
		toks = toks[1:]
	}
	haveTTL, haveClass := false, false
	for len(toks) > 0 && !toks[0].quoted && (!haveTTL || !haveClass) {
		if !haveClass && isClass(toks[0].s) {
			rec.Class, haveClass = strings.ToUpper(toks[0].s), true
		} else if ttl, ok := parseTTL(toks[0].s); ok && !haveTTL {
			rec.TTL, haveTTL = ttl, true
		} else {
			break
		}
		toks = toks[1:]
	}
	if len(toks) == 0 {
		return Record{}, z.errorf(line, 0, "record has no type")
	}
	typ := strings.ToUpper(toks[0].s)
	if toks[0].quoted || !validType(typ) {
		return Record{}, z.errorf(line, toks[0].col, "bad record type %q", toks[0].s)
	}
	rec.Type = typ
	rec.RData = make([]string, len(toks)-1)
	for i, t := range toks[1:] {
		rec.RData[i] = t.s
	}
	if err := z.checkRData(&rec, toks[1:]); err != nil {
		return Record{}, err
	}

	if !haveClass {
		rec.Class = z.lastClass
	}
	// RFC 2308: an omitted TTL is $TTL when set; before it, RFC 1035 §5.1
	// says the last TTL given explicitly.
	switch {
	case haveTTL:
		z.lastTTL, z.hasLastTTL = rec.TTL, true
	case z.hasDefaultTTL:
		rec.TTL = z.defaultTTL
	case z.hasLastTTL:
		rec.TTL = z.lastTTL
	}
	z.lastOwner, z.lastClass = rec.Name, rec.Class
	return rec, nil
}

// nameFields lists, per type, which RData fields are domain names.
var nameFields = map[string][]int{
	"NS": {0}, "CNAME": {0}, "DNAME": {0}, "PTR": {0}, "MX": {1}, "SOA": {0, 1}, "SRV": {3},
}

// minFields is the RData field count of types whose shape is checked.
var minFields = map[string]int{"A": 1, "AAAA": 1, "NS": 1, "CNAME": 1, "DNAME": 1, "PTR": 1, "MX": 2, "SOA": 7, "SRV": 4}

func (z *Reader) checkRData(rec *Record, toks []token) error {
	if n, ok := minFields[rec.Type]; ok && len(toks) != n {
		return z.errorf(rec.Line, 0, "%s record needs %d data fields, got %d", rec.Type, n, len(toks))
	}
	switch rec.Type {
	case "A", "AAAA":
		a, err := netip.ParseAddr(toks[0].s)
		if err != nil || a.Is4() != (rec.Type == "A") {
			return z.errorf(rec.Line, toks[0].col, "bad %s address %q", rec.Type, toks[0].s)
		}
	case "MX":
		if _, err := strconv.ParseUint(toks[0].s, 10, 16); err != nil {
			return z.errorf(rec.Line, toks[0].col, "bad MX preference %q", toks[0].s)
		}
	}
	for _, i := range nameFields[rec.Type] {
		n, err := z.absolute(toks[i].s)
		if err != nil {
			return z.errorf(rec.Line, toks[i].col, "%s data: %v", rec.Type, err)
		}
		rec.RData[i] = n
	}
	return nil
}

// absolute resolves a (possibly relative) name against the origin and
// returns it lower case without the trailing dot, "." for the root.
func (z *Reader) absolute(s string) (string, error) {
	var name string
	switch {
	case s == "@":
		if !z.hasOrigin {
			return "", errors.New("'@' used with no $ORIGIN")
		}
		name = z.origin
	case s == ".":
		name = ""
	case strings.HasSuffix(s, ".") && !strings.HasSuffix(s, `\.`):
		name = strings.ToLower(s[:len(s)-1])
	default:
		if !z.hasOrigin {
			return "", fmt.Errorf("relative name %q with no $ORIGIN", s)
		}
		name = strings.ToLower(s)
		if z.origin != "" {
			name += "." + z.origin
		}
	}
	if err := checkName(name); err != nil {
		return "", fmt.Errorf("name %q: %w", s, err)
	}
	if name == "" {
		return ".", nil
	}
	return name, nil
}

func checkName(name string) error {
	if name == "" || name == "." {
		return nil
	}
	if len(name) > 253 {
		return errors.New("longer than 253 characters")
	}
	for label := range strings.SplitSeq(name, ".") {
		if label == "" {
			return errors.New("empty label")
		}
		if len(label) > 63 {
			return errors.New("label longer than 63 characters")
		}
	}
	return nil
}

func isClass(s string) bool {
	switch strings.ToUpper(s) {
	case "IN", "CH", "CS", "HS":
		return true
	}
	u := strings.ToUpper(s)
	if rest, ok := strings.CutPrefix(u, "CLASS"); ok && rest != "" {
		_, err := strconv.ParseUint(rest, 10, 16)
		return err == nil
	}
	return false
}

func validType(s string) bool {
	if s == "" || s[0] < 'A' || s[0] > 'Z' || len(s) > 16 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	if rest, ok := strings.CutPrefix(s, "TYPE"); ok && rest != "" {
		_, err := strconv.ParseUint(rest, 10, 16)
		return err == nil
	}
	return true
}

// parseTTL reads a TTL in seconds or with BIND units (1w2d3h4m5s).
func parseTTL(s string) (uint32, bool) {
	if s == "" || !isDigit(s[0]) {
		return 0, false
	}
	var total, cur uint64
	digits := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isDigit(c) {
			cur = cur*10 + uint64(c-'0')
			digits = true
			if cur > 1<<32 {
				return 0, false
			}
			continue
		}
		if !digits {
			return 0, false
		}
		var mult uint64
		switch c | 0x20 {
		case 's':
			mult = 1
		case 'm':
			mult = 60
		case 'h':
			mult = 3600
		case 'd':
			mult = 86400
		case 'w':
			mult = 604800
		default:
			return 0, false
		}
		total += cur * mult
		cur, digits = 0, false
	}
	total += cur
	if total > 1<<31-1 {
		return 0, false
	}
	return uint32(total), true
}
