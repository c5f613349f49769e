package hoststore

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/store"
)

// Expr is a boolean expression over host conditions: what a host query
// (package hostquery) plans to. Every node evaluates to an exact set of
// host ids, so counts, facets and exports agree with the pages.
type Expr struct {
	Op   Op
	Kids []*Expr // OpAnd, OpOr: two or more; OpNot: one
	Cond Cond    // OpCond
}

// Op is the kind of an Expr node.
type Op uint8

// The expression operators.
const (
	OpCond Op = iota // a leaf condition
	OpAnd
	OpOr
	OpNot // the complement over all indexed hosts
)

// CondKind is the kind of a leaf condition.
type CondKind uint8

// The leaf conditions. Each means what the global-search filter that
// plans to it means (HostQuery): CondTerm is a Terms entry, CondName is
// Name, CondUnder is Under, CondIPRange is IPRange, CondTitle is
// TitleContains.
const (
	// CondTerm: the hosts holding the index term Term ("field:value",
	// lower-cased), flag terms (FlagTerm) included.
	CondTerm CondKind = iota
	// CondName: the host named Text.
	CondName
	// CondUnder: the host named Text and every host below it.
	CondUnder
	// CondIPRange: the hosts whose address is in Prefix.
	CondIPRange
	// CondTitle: the hosts whose HTTP title contains Text, in any case.
	CondTitle
	// CondTermRange: the hosts holding a term of Field whose value is an
	// integer from Lo to Hi (inclusive): only hosts that have the field.
	CondTermRange
	// CondTermContains: the hosts holding a term of one of Fields whose
	// value contains Text (lower-cased).
	CondTermContains
	// CondLastSeen: the hosts last seen from Lo to Hi (Unix seconds,
	// inclusive).
	CondLastSeen
)

// Cond is a leaf condition; which fields count depends on Kind.
type Cond struct {
	Kind   CondKind
	Term   string
	Field  string
	Fields []string
	Text   string
	Prefix netip.Prefix
	Lo, Hi int64
}

// FlagTerm returns the index term of a flag's value (every host holds one
// per flag).
func FlagTerm(f HostFlag, set bool) string { return flagTerm(f, set) }

// Matches is the exact set of hosts an Expr selects, held as a bitmap of
// host ids (a bit per indexed host: 125 KB a million hosts), never as host
// objects.
type Matches struct {
	s   *Store
	set *idBitmap
	gen int64 // the index generation the set was evaluated at
	// cached says the posting cache may answer for gen (ids fit it).
	cached bool
	rb     *roaring.Bitmap // set as a roaring bitmap, made by the first facet counted in memory
}

// Count returns how many hosts matched.
func (m *Matches) Count() int { return m.set.count() }

// Page returns the matching hosts after the first offset, at most limit,
// in id order (the order hosts were first stored, as global search).
func (m *Matches) Page(ctx context.Context, offset, limit int) ([]host.Host, error) {
	if limit <= 0 {
		return []host.Host{}, nil
	}
	ids := m.set.page(offset, limit)
	if len(ids) == 0 {
		return []host.Host{}, nil
	}
	return m.s.hostsByID(ctx, ids)
}

// exportChunk is how many hosts Each reads at a time.
const exportChunk = 1000

// Each calls fn with every matching host in id order, reading exportChunk
// hosts at a time, so memory stays flat however many match. An error from
// fn stops the walk and is returned.
func (m *Matches) Each(ctx context.Context, fn func(*host.Host) error) error {
	for offset := 0; ; offset += exportChunk {
		ids := m.set.page(offset, exportChunk)
		if len(ids) == 0 {
			return nil
		}
		hs, err := m.s.hostsByID(ctx, ids)
		if err != nil {
			return err
		}
		for i := range hs {
			if err := fn(&hs[i]); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// MatchHosts evaluates e over the host index.
func (s *Store) MatchHosts(ctx context.Context, e *Expr) (*Matches, error) {
	gen, maxID, err := s.indexState(ctx)
	if err != nil {
		return nil, fmt.Errorf("match hosts: %w", err)
	}
	return s.matchAt(ctx, e, gen, maxID)
}

// matchAt evaluates e over the host index at generation gen, whose largest
// host id is maxID (indexState), keeping the terms it read in the posting
// cache when no write committed since.
func (s *Store) matchAt(ctx context.Context, e *Expr, gen, maxID int64) (*Matches, error) {
	ev := &evaluator{s: s, hi: maxID, gen: gen, cached: cacheable(maxID) && s.cache.limit() > 0}
	set, err := ev.eval(ctx, e)
	if err != nil {
		return nil, err
	}
	if len(ev.read) > 0 {
		// The terms read from the database are kept only if no write
		// committed since gen was read: then they are gen's.
		same, err := s.sameGen(ctx, gen)
		if err != nil {
			return nil, err
		}
		for _, t := range ev.read {
			if same {
				s.cache.putTerm(gen, t.term, t.ids)
			}
		}
	}
	return &Matches{s: s, set: set, gen: gen, cached: ev.cached}, nil
}

// evaluator evaluates one Expr: every set is a bitmap of the ids 0 to hi.
type evaluator struct {
	s      *Store
	hi     int64
	gen    int64
	cached bool       // the posting cache may answer (Matches.cached)
	all    *idBitmap  // every indexed host, read once when a NOT needs it
	read   []readTerm // the terms read from the database, for the cache
}

type readTerm struct {
	term string
	ids  *roaring.Bitmap
}

func (ev *evaluator) empty() *idBitmap { return newIDBitmap(0, ev.hi) }

// universe returns the set of every indexed host: every host holds one of
// the two terms of each flag.
func (ev *evaluator) universe(ctx context.Context) (*idBitmap, error) {
	if ev.all == nil {
		yes, err := ev.term(ctx, flagTerm(FlagLive, true))
		if err != nil {
			return nil, err
		}
		no, err := ev.term(ctx, flagTerm(FlagLive, false))
		if err != nil {
			return nil, err
		}
		yes.or(no)
		ev.all = yes
	}
	return ev.all.clone(), nil
}

func (ev *evaluator) eval(ctx context.Context, e *Expr) (*idBitmap, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch e.Op {
	case OpCond:
		return ev.cond(ctx, e.Cond)
	case OpNot:
		if len(e.Kids) != 1 {
			return nil, fmt.Errorf("match hosts: NOT of %d operands", len(e.Kids))
		}
		in, err := ev.eval(ctx, e.Kids[0])
		if err != nil {
			return nil, err
		}
		all, err := ev.universe(ctx)
		if err != nil {
			return nil, err
		}
		all.andNot(in)
		return all, nil
	case OpAnd:
		// a AND NOT b is a minus b: a negated operand is subtracted, not
		// complemented, unless nothing positive is there to start from.
		var acc *idBitmap
		var negs []*Expr
		for _, k := range e.Kids {
			if k.Op == OpNot && len(k.Kids) == 1 {
				negs = append(negs, k.Kids[0])
				continue
			}
			set, err := ev.eval(ctx, k)
			if err != nil {
				return nil, err
			}
			if acc == nil {
				acc = set
			} else {
				acc.and(set)
			}
		}
		if acc == nil {
			var err error
			if acc, err = ev.universe(ctx); err != nil {
				return nil, err
			}
		}
		for _, k := range negs {
			set, err := ev.eval(ctx, k)
			if err != nil {
				return nil, err
			}
			acc.andNot(set)
		}
		return acc, nil
	case OpOr:
		acc := ev.empty()
		for _, k := range e.Kids {
			set, err := ev.eval(ctx, k)
			if err != nil {
				return nil, err
			}
			acc.or(set)
		}
		return acc, nil
	}
	return nil, fmt.Errorf("match hosts: unknown operator %d", e.Op)
}

// The statements of the leaf conditions on the hosts table.
const (
	matchNameSQL     = `SELECT id FROM hosts WHERE rkey = ? AND name = ?`
	matchIPRangeSQL  = `SELECT id FROM hosts WHERE ipkey >= ? AND ipkey <= ?`
	matchTitleSQL    = `SELECT id FROM hosts WHERE http_title LIKE ? ESCAPE '\'`
	matchLastSeenSQL = `SELECT id FROM hosts WHERE last_seen >= ? AND last_seen <= ?`
	// The distinct terms of one field: a range of the posting index.
	fieldTermsSQL         = `SELECT DISTINCT term FROM host_postings WHERE term >= ? AND term < ?`
	fieldTermsContainsSQL = `SELECT DISTINCT term FROM host_postings WHERE term >= ? AND term < ? AND term LIKE ? ESCAPE '\'`
)

func (ev *evaluator) cond(ctx context.Context, c Cond) (*idBitmap, error) {
	switch c.Kind {
	case CondTerm:
		return ev.term(ctx, c.Term)
	case CondName:
		name := strings.ToLower(c.Text)
		return ev.rows(ctx, matchNameSQL, host.ReverseKey(name), name)
	case CondUnder:
		cond, args := underKey("rkey", c.Text)
		return ev.rows(ctx, `SELECT id FROM hosts WHERE `+cond, args...)
	case CondIPRange:
		lo, hi := prefixKeys(c.Prefix)
		return ev.rows(ctx, matchIPRangeSQL, lo, hi)
	case CondTitle:
		return ev.rows(ctx, matchTitleSQL, "%"+store.LikeEscape(strings.ToLower(c.Text))+"%")
	case CondLastSeen:
		return ev.rows(ctx, matchLastSeenSQL, c.Lo, c.Hi)
	case CondTermRange:
		terms, err := ev.fieldTerms(ctx, c.Field, "")
		if err != nil {
			return nil, err
		}
		acc := ev.empty()
		for _, t := range terms {
			v, err := strconv.ParseInt(t[len(c.Field)+1:], 10, 64)
			if err != nil || v < c.Lo || v > c.Hi {
				continue
			}
			set, err := ev.term(ctx, t)
			if err != nil {
				return nil, err
			}
			acc.or(set)
		}
		return acc, nil
	case CondTermContains:
		acc := ev.empty()
		for _, f := range c.Fields {
			terms, err := ev.fieldTerms(ctx, f, strings.ToLower(c.Text))
			if err != nil {
				return nil, err
			}
			for _, t := range terms {
				set, err := ev.term(ctx, t)
				if err != nil {
					return nil, err
				}
				acc.or(set)
			}
		}
		return acc, nil
	}
	return nil, fmt.Errorf("match hosts: unknown condition %d", c.Kind)
}

// term returns the hosts holding an index term: from the posting cache
// when it holds the term, else from the database (noted for the cache).
func (ev *evaluator) term(ctx context.Context, t string) (*idBitmap, error) {
	if !selfAnswered(t) {
		if ev.cached {
			if ids, ok := ev.s.cache.term(ev.gen, t); ok {
				if set, ok := setOf(ids, ev.hi); ok {
					return set, nil
				}
			}
		}
		set, err := ev.s.termBitmap(ctx, t, 0, ev.hi)
		if err == nil && ev.cached {
			ev.read = append(ev.read, readTerm{t, roaringOf(set, false)})
		}
		return set, err
	}
	ids, err := ev.s.termList(ctx, t)
	if err != nil {
		return nil, err
	}
	set := ev.empty()
	for _, id := range ids {
		set.set(id)
	}
	return set, nil
}

// rows returns the ids a statement on the hosts table selects.
func (ev *evaluator) rows(ctx context.Context, q string, args ...any) (*idBitmap, error) {
	rows, err := ev.s.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("match hosts: %w", err)
	}
	defer rows.Close()
	set := ev.empty()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("match hosts: %w", err)
		}
		set.set(id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("match hosts: %w", err)
	}
	return set, nil
}

// fieldTerms returns the distinct index terms of a field, those whose value
// contains sub when it is not empty: the cached field's when the posting
// cache holds it.
func (ev *evaluator) fieldTerms(ctx context.Context, field, sub string) ([]string, error) {
	if ev.cached {
		if f, ok := ev.s.cache.field(ev.gen, field); ok {
			terms := sortedKeys(f.values, field+":")
			return slices.DeleteFunc(terms, func(t string) bool { return !strings.Contains(t[len(field)+1:], sub) }), nil
		}
	}
	return ev.s.fieldTerms(ctx, field, sub)
}

// fieldTerms returns the distinct index terms of a field, those whose value
// contains sub when it is not empty.
func (s *Store) fieldTerms(ctx context.Context, field, sub string) ([]string, error) {
	q, args := fieldTermsSQL, []any{field + ":", field + ";"}
	if sub != "" {
		q, args = fieldTermsContainsSQL, append(args, field+":%"+store.LikeEscape(sub)+"%")
	}
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list terms of %s: %w", field, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, fmt.Errorf("list terms of %s: %w", field, err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list terms of %s: %w", field, err)
	}
	slices.Sort(out)
	return out, nil
}

// or adds the ids of o (of the same range).
func (m *idBitmap) or(o *idBitmap) {
	for i := range m.words {
		m.words[i] |= o.words[i]
	}
}

// andNot removes the ids of o (of the same range).
func (m *idBitmap) andNot(o *idBitmap) {
	for i := range m.words {
		m.words[i] &^= o.words[i]
	}
}

func (m *idBitmap) clone() *idBitmap {
	return &idBitmap{lo: m.lo, hi: m.hi, words: slices.Clone(m.words)}
}

// has reports whether id is in the set.
func (m *idBitmap) has(id int64) bool {
	if id < m.lo || id > m.hi {
		return false
	}
	d := id - m.lo
	return m.words[d>>6]&(1<<(d&63)) != 0
}

// byteAt returns the 8 members from id base (base-lo a multiple of 8 or
// not) as the bits of a byte, bit i standing for base+i.
func (m *idBitmap) byteAt(base int64) byte {
	d := base - m.lo
	if d < 0 || base > m.hi {
		var b byte
		for i := range int64(8) {
			if m.has(base + i) {
				b |= 1 << i
			}
		}
		return b
	}
	w, sh := d>>6, uint(d&63)
	v := m.words[w] >> sh
	if sh > 56 && int(w+1) < len(m.words) {
		v |= m.words[w+1] << (64 - sh)
	}
	return byte(v)
}

// word64At returns the 64 members from id base (lo <= base, base+63 <= hi)
// as the bits of a word, bit i standing for base+i.
func (m *idBitmap) word64At(base int64) uint64 {
	d := base - m.lo
	w, sh := d>>6, uint(d&63)
	v := m.words[w] >> sh
	if sh > 0 && int(w+1) < len(m.words) {
		v |= m.words[w+1] << (64 - sh)
	}
	return v
}

// countRow returns how many of the ids of a posting row are in the set: a
// bitmap row is ANDed a byte at a time, a list row tested id by id.
func (m *idBitmap) countRow(first int64, n int, b []byte) (int, error) {
	if n > 1 && len(b) > 1 && b[0] == postingBitmap && b[1]&1 != 0 {
		// Eight bytes of the row at a time against the 64 members from
		// the same id, then the bytes left.
		bm := b[1:]
		c, j := 0, 0
		for ; j+8 <= len(bm); j += 8 {
			v := binary.LittleEndian.Uint64(bm[j:])
			base := first + 8*int64(j)
			if v == 0 || base < m.lo {
				if v != 0 {
					for k := range 8 {
						c += bits.OnesCount8(bm[j+k] & m.byteAt(base+8*int64(k)))
					}
				}
				continue
			}
			if base+63 > m.hi {
				break
			}
			c += bits.OnesCount64(v & m.word64At(base))
		}
		for ; j < len(bm); j++ {
			base := first + 8*int64(j)
			if base > m.hi {
				break
			}
			if bm[j] != 0 {
				c += bits.OnesCount8(bm[j] & m.byteAt(base))
			}
		}
		return c, nil
	}
	if n > 1 && len(b) > 1 && b[0] == postingGaps {
		// The gaps decoded inline: this loop runs once per id of a facet's
		// field.
		c, id, rest := 0, first, b[1:]
		for i := 0; ; i++ {
			if id > m.hi {
				return c, nil
			}
			if d := id - m.lo; d >= 0 && m.words[d>>6]&(1<<(d&63)) != 0 {
				c++
			}
			if i == n-1 {
				break
			}
			var gap uint64
			if len(rest) > 0 && rest[0] < 0x80 {
				gap, rest = uint64(rest[0]), rest[1:]
			} else {
				var k int
				gap, k = binary.Uvarint(rest)
				if k <= 0 || gap == 0 || gap > 1<<62 {
					return 0, errCorruptPosting
				}
				rest = rest[k:]
			}
			if gap == 0 {
				return 0, errCorruptPosting
			}
			id += int64(gap)
		}
		if len(rest) != 0 {
			return 0, errCorruptPosting
		}
		return c, nil
	}
	c := 0
	err := eachPostingID(first, n, b, func(id int64) bool {
		if m.has(id) {
			c++
		}
		return id <= m.hi
	})
	return c, err
}

// FacetValue is one value of a facet and how many matching hosts hold it.
type FacetValue struct {
	Value string // the term's value, lower-cased as indexed
	Count int
}

// facetDocLimit is the number of matches up to which a facet the posting
// cache cannot hold is counted on the matching hosts' own terms (read from
// their documents) rather than on the posting lists of every value of the
// field.
var facetDocLimit = 2000

// fieldPostingsSQL reads every posting row of one field, term by term.
const fieldPostingsSQL = `SELECT term, first_id, n, ids FROM host_postings WHERE term >= ? AND term < ? ORDER BY term, first_id`

// Facet returns the n values of an index field (a Term* constant) held by
// the most matching hosts, most first (ties by value), with their counts:
// exactly how many matching hosts hold each term.
func (m *Matches) Facet(ctx context.Context, field string, n int) ([]FacetValue, error) {
	prefix := field + ":"
	total := m.Count()
	if total == 0 || n <= 0 {
		return []FacetValue{}, nil
	}
	var cf *cachedField
	if m.cached && !selfAnswered(prefix) {
		var err error
		if cf, err = m.cachedField(ctx, field); err != nil {
			return nil, err
		}
	}
	if cf != nil {
		if m.rb == nil {
			m.rb = roaringOf(m.set, true)
		}
		return topValues(cf.ranked, m.rb, m.set.words, n), nil
	}
	counts := map[string]int{}
	if total <= facetDocLimit {
		// Few matches: their documents hold their terms (hostTerms, what
		// the posting lists were written from).
		ids := m.set.page(0, total)
		for c := range slices.Chunk(ids, exportChunk) {
			hs, err := m.s.hostsByID(ctx, c)
			if err != nil {
				return nil, err
			}
			for _, h := range hs {
				for _, t := range hostTerms(h) {
					if v, ok := strings.CutPrefix(t, prefix); ok {
						counts[v]++
					}
				}
			}
		}
	} else if err := m.countRows(ctx, field, counts); err != nil {
		return nil, err
	}
	out := make([]FacetValue, 0, len(counts))
	for v, c := range counts {
		out = append(out, FacetValue{v, c})
	}
	slices.SortFunc(out, compareFacetValues)
	return out[:min(n, len(out))], nil
}

// topValues returns the n values of a cached field held by the most of
// matches, most first (ties by value), as Facet orders them. A value's
// count is at most its cardinality, so once the values (ranked, most hosts
// first) hold fewer hosts than the n-th count found so far, none left can
// enter: they are not counted. A value holding exactly as many is counted,
// since it may tie with the n-th and come before it by value.
//
// words are the matches as dense words from id 0 (nil when there are
// none): a value with dense words of its own is counted on them.
func topValues(ranked []rankedValue, matches *roaring.Bitmap, words []uint64, n int) []FacetValue {
	if n <= 0 {
		return []FacetValue{}
	}
	top := make([]FacetValue, 0, min(n, len(ranked)))
	for _, r := range ranked {
		if len(top) == n && r.card < uint64(top[n-1].Count) {
			break
		}
		var c int
		if r.dense != nil && words != nil {
			c = andCount(words, r.dense)
		} else {
			c = int(matches.AndCardinality(r.ids))
		}
		if c == 0 {
			continue
		}
		v := FacetValue{r.value, c}
		i, _ := slices.BinarySearchFunc(top, v, compareFacetValues)
		if i == n {
			continue
		}
		if len(top) == n {
			top = top[:n-1]
		}
		top = slices.Insert(top, i, v)
	}
	return top
}

// andCount returns how many bits a and b both set (over the shorter).
func andCount(a, b []uint64) int {
	n := min(len(a), len(b))
	a, b = a[:n], b[:n]
	c := 0
	for i := range a {
		c += bits.OnesCount64(a[i] & b[i])
	}
	return c
}

// compareFacetValues orders facet values most hosts first, ties by value.
func compareFacetValues(a, b FacetValue) int {
	if a.Count != b.Count {
		return b.Count - a.Count
	}
	return strings.Compare(a.Value, b.Value)
}

// countRows adds to counts how many matches each term of field holds,
// reading every posting row of the field.
func (m *Matches) countRows(ctx context.Context, field string, counts map[string]int) error {
	prefix := field + ":"
	return m.s.eachFieldRow(ctx, field, func(t string, first int64, k int, blob []byte) error {
		c, err := m.set.countRow(first, k, blob)
		if c > 0 {
			counts[t[len(prefix):]] += c
		}
		return err
	})
}

// cachedField returns the terms of field from the posting cache at the
// matches' generation, reading the field into it first when it is not
// there; nil when the field does not fit the cache or a write committed
// while it was read (the caller counts without the cache).
func (m *Matches) cachedField(ctx context.Context, field string) (*cachedField, error) {
	c := m.s.cache
	if f, ok := c.field(m.gen, field); ok {
		return f, nil
	}
	if c.tooBig(m.gen, field) {
		return nil, nil
	}
	b := newFieldBuilder(c.limit())
	prefix := field + ":"
	err := m.s.eachFieldRow(ctx, field, func(t string, first int64, k int, blob []byte) error {
		return b.add(t[len(prefix):], first, k, blob)
	})
	if err != nil {
		return nil, err
	}
	values, size, ok := b.done()
	if !ok {
		c.markTooBig(m.gen, field)
		return nil, nil
	}
	if same, err := m.s.sameGen(ctx, m.gen); err != nil || !same {
		return nil, err
	}
	return c.put(m.gen, field, newCachedField(values, size, m.set.hi)), nil
}

// eachFieldRow calls fn with every posting row of field, in term order,
// until fn returns an error, which it returns with the term named.
func (s *Store) eachFieldRow(ctx context.Context, field string, fn func(term string, first int64, n int, blob []byte) error) error {
	rows, err := s.query(ctx, fieldPostingsSQL, field+":", field+";")
	if err != nil {
		return fmt.Errorf("facet %s: %w", field, err)
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		var first int64
		var k int
		var blob []byte
		if err := rows.Scan(&t, &first, &k, &blob); err != nil {
			return fmt.Errorf("facet %s: %w", field, err)
		}
		if err := fn(t, first, k, blob); err != nil {
			return fmt.Errorf("facet %s: postings of %q: %w", field, t, err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("facet %s: %w", field, err)
	}
	return nil
}

// EachJSON calls fn with the host object of every match, as the canonical
// JSON /host/{host} answers (without raw), in id order, a chunk at a time.
// Documents in the current stored form are only decompressed, never
// decoded: an NDJSON export costs a read and an S2 decompression a host.
// The bytes fn receives are reused after it returns.
func (m *Matches) EachJSON(ctx context.Context, fn func([]byte) error) error {
	var buf []byte
	for offset := 0; ; offset += exportChunk {
		ids := m.set.page(offset, exportChunk)
		if len(ids) == 0 {
			return nil
		}
		docs, err := m.s.docsByID(ctx, ids)
		if err != nil {
			return err
		}
		for i, doc := range docs {
			if buf, err = docJSON(buf[:0], doc); err != nil {
				return fmt.Errorf("host %d: %w", ids[i], err)
			}
			if err := fn(buf); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// docsByID returns the stored documents of ids, in that order.
func (s *Store) docsByID(ctx context.Context, ids []int64) ([][]byte, error) {
	in, arg := s.inIDs("id", ids)
	rows, err := s.query(ctx, "SELECT id, doc FROM hosts WHERE "+in, arg)
	if err != nil {
		return nil, fmt.Errorf("read hosts: %w", err)
	}
	defer rows.Close()
	docs := make(map[int64][]byte, len(ids))
	for rows.Next() {
		var id int64
		var doc []byte
		if err := rows.Scan(&id, &doc); err != nil {
			return nil, fmt.Errorf("read hosts: %w", err)
		}
		docs[id] = doc
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read hosts: %w", err)
	}
	out := make([][]byte, len(ids))
	for i, id := range ids {
		doc, ok := docs[id]
		if !ok {
			return nil, fmt.Errorf("read hosts: host %d is indexed but not stored", id)
		}
		out[i] = doc
	}
	return out, nil
}
