package hoststore

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
)

// The posting cache keeps decoded posting lists in memory as roaring
// bitmaps: whole fields (every term of a field a facet counted) and single
// terms a query read. A facet over a cached field is one AND-cardinality a
// value, and a query term held in memory reads nothing; reading the rows of
// a field from the database is where a facet's time went otherwise.
//
// The cache is exact, never stale. Every transaction that writes hosts adds
// one to the index generation (host_index_gen) before it commits, whoever
// writes (this process, another serve, the CLI). A request reads the
// generation and the largest host id in one statement and uses only entries
// of that generation; an entry is stored under a generation only when the
// generation read again after its rows reads the same (so no write
// committed between), and a newer generation drops every entry. Memory is
// bounded by the byte budget: the least recently used entries go first, and
// a field larger than the budget is never held.

// DefaultPostingCacheMiB is the posting cache's default budget.
const DefaultPostingCacheMiB = 256

const (
	// indexStateSQL reads the generation and the largest host id in one
	// statement, so they agree.
	indexStateSQL = `SELECT gen, (SELECT COALESCE(MAX(id), 0) FROM hosts) FROM host_index_gen`
	indexGenSQL   = `SELECT gen FROM host_index_gen`
)

// entryOverhead is what an entry costs beyond its bitmap's own bytes (the
// map entry, the bitmap's header); a value of a cached field costs
// rankOverhead more (its place in the field's ranked values).
const (
	entryOverhead = 96
	rankOverhead  = 32
)

// postingCache is the cache of one Store; safe for concurrent use. Its
// bitmaps are never changed once stored, so readers share them.
type postingCache struct {
	mu     sync.Mutex
	budget int64 // bytes; 0: nothing is cached
	gen    int64 // the generation every entry belongs to
	used   int64
	tick   uint64
	fields map[string]*cachedField
	terms  map[string]*cachedTerm
	big    map[string]bool // fields found larger than the budget, at gen
}

// cachedField is every term of one field: a value missing from values is
// held by no host.
type cachedField struct {
	values map[string]*roaring.Bitmap // by the term's value (after "field:")
	// ranked is every value, most hosts first (ties by value): a facet
	// visits them in this order and stops at the first value holding
	// fewer hosts than its n-th count so far (Matches.Facet).
	ranked []rankedValue
	size   int64
	last   uint64
}

// rankedValue is a value of a cached field and how many hosts hold it.
type rankedValue struct {
	value string
	ids   *roaring.Bitmap
	card  uint64
	// dense is ids as a word a 64 ids of the whole id range, for a value
	// held by at least a denseShare-th of the hosts (newCachedField): its
	// count against a match set is then an AND and a popcount a word, not
	// a bit test an id of its sparse containers.
	dense []uint64
}

// denseShare: a value held by at least one host in denseShare also keeps
// its dense words. Counting a sparse container against the match set
// tests a bit an id (about 1.5 ns), the dense words cost an AND and a
// popcount a 64 ids (about 0.3 ns a word): dense words are several times
// faster from one id in 32 on, for at most 32 times the memory of those
// values (at 10M hosts, 1.25 MB a value).
const denseShare = 32

// newCachedField returns the cached form of a field's values, read with
// size bytes of bitmaps while the largest host id was hi: its values
// ranked and, for those held by a denseShare-th of the ids or more, their
// dense words (whose bytes it adds to the size). A negative hi keeps no
// dense words.
func newCachedField(values map[string]*roaring.Bitmap, size, hi int64) *cachedField {
	f := &cachedField{values: values, ranked: rankValues(values), size: size}
	if hi < 0 {
		return f
	}
	for i := range f.ranked {
		r := &f.ranked[i]
		if r.card*denseShare < uint64(hi+1) {
			break // ranked most hosts first: none after holds more
		}
		r.dense = make([]uint64, hi/64+1)
		r.ids.WriteDenseTo(r.dense)
		f.size += int64(len(r.dense)) * 8
	}
	return f
}

// rankValues returns the values of a field, most hosts first, ties by
// value.
func rankValues(values map[string]*roaring.Bitmap) []rankedValue {
	out := make([]rankedValue, 0, len(values))
	for v, ids := range values {
		out = append(out, rankedValue{value: v, ids: ids, card: ids.GetCardinality()})
	}
	slices.SortFunc(out, func(a, b rankedValue) int {
		if a.card != b.card {
			return cmp.Compare(b.card, a.card)
		}
		return strings.Compare(a.value, b.value)
	})
	return out
}

type cachedTerm struct {
	ids  *roaring.Bitmap
	size int64
	last uint64
}

func newPostingCache(budget int64) *postingCache {
	return &postingCache{budget: budget, fields: map[string]*cachedField{}, terms: map[string]*cachedTerm{}, big: map[string]bool{}}
}

// SetPostingCacheMiB sets the posting cache's budget (0 turns it off),
// dropping what it holds.
func (s *Store) SetPostingCacheMiB(n int) {
	c := s.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	c.budget = int64(max(n, 0)) << 20
	c.dropLocked()
}

// PostingCacheStats is what the posting cache holds.
type PostingCacheStats struct {
	Budget int64 // bytes; 0: the cache is off
	Used   int64 // bytes held
	Fields int   // whole fields held
	Terms  int   // single terms held
}

// PostingCacheStats returns what the posting cache holds now.
func (s *Store) PostingCacheStats() PostingCacheStats {
	c := s.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	return PostingCacheStats{Budget: c.budget, Used: c.used, Fields: len(c.fields), Terms: len(c.terms)}
}

func (c *postingCache) dropLocked() {
	clear(c.fields)
	clear(c.terms)
	clear(c.big)
	c.used = 0
}

// tooBig reports whether field was found larger than the budget at gen.
func (c *postingCache) tooBig(gen int64, field string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at(gen) && c.big[field]
}

// markTooBig notes that field is larger than the budget at gen, so that
// it is not read for the cache again until the index changes.
func (c *postingCache) markTooBig(gen int64, field string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at(gen) {
		c.big[field] = true
	}
}

// at makes gen the cache's generation when it is newer, dropping every
// entry; it reports whether the cache holds gen.
func (c *postingCache) at(gen int64) bool {
	if gen > c.gen {
		c.dropLocked()
		c.gen = gen
	}
	return gen == c.gen && c.budget > 0
}

// field returns the cached terms of field at gen.
func (c *postingCache) field(gen int64, field string) (*cachedField, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at(gen) {
		return nil, false
	}
	f, ok := c.fields[field]
	if !ok {
		return nil, false
	}
	c.tick++
	f.last = c.tick
	return f, true
}

// term returns the hosts holding term at gen, from its field's entry or
// its own.
func (c *postingCache) term(gen int64, term string) (*roaring.Bitmap, bool) {
	field, value, _ := strings.Cut(term, ":")
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at(gen) {
		return nil, false
	}
	c.tick++
	if f, ok := c.fields[field]; ok {
		f.last = c.tick
		if ids, ok := f.values[value]; ok {
			return ids, true
		}
		return roaring.New(), true
	}
	if t, ok := c.terms[term]; ok {
		t.last = c.tick
		return t.ids, true
	}
	return nil, false
}

// holds reports whether the cache holds term's field or term itself, at
// whatever generation (a hint: term checks the generation).
func (c *postingCache) holds(term string) bool {
	field, _, _ := strings.Cut(term, ":")
	c.mu.Lock()
	defer c.mu.Unlock()
	_, f := c.fields[field]
	_, t := c.terms[term]
	return f || t
}

// limit returns the budget: no entry is larger.
func (c *postingCache) limit() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.budget
}

// putField stores the terms of field read at gen (size counts their
// ranking too) and returns them as cached.
func (c *postingCache) putField(gen int64, field string, values map[string]*roaring.Bitmap, size int64) *cachedField {
	return c.put(gen, field, newCachedField(values, size, -1))
}

// put stores the cached form of field read at gen (built by
// newCachedField outside the lock, once, not by every facet) and returns
// it, stored or not.
func (c *postingCache) put(gen int64, field string, f *cachedField) *cachedField {
	size := f.size
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at(gen) || !c.makeRoom(size) {
		return f
	}
	if old, ok := c.fields[field]; ok {
		c.used -= old.size
	}
	c.tick++
	f.last = c.tick
	c.fields[field] = f
	c.used += size
	// The field's own terms are now answered by it.
	for t, e := range c.terms {
		if f, _, _ := strings.Cut(t, ":"); f == field {
			c.used -= e.size
			delete(c.terms, t)
		}
	}
	return f
}

// putTerm stores the hosts holding term read at gen.
func (c *postingCache) putTerm(gen int64, term string, ids *roaring.Bitmap) {
	size := int64(ids.GetSizeInBytes()) + int64(len(term)) + entryOverhead
	c.mu.Lock()
	defer c.mu.Unlock()
	f, _, _ := strings.Cut(term, ":")
	if _, ok := c.fields[f]; ok || !c.at(gen) {
		return
	}
	if _, ok := c.terms[term]; ok || !c.makeRoom(size) {
		return
	}
	c.tick++
	c.terms[term] = &cachedTerm{ids: ids, size: size, last: c.tick}
	c.used += size
}

// makeRoom evicts the least recently used entries until size more bytes
// fit; it reports false, evicting nothing, when they never can.
func (c *postingCache) makeRoom(size int64) bool {
	if size > c.budget {
		return false
	}
	for c.used+size > c.budget {
		// A scan for the oldest entry: entries are few (fields, and the
		// terms of recent queries), and eviction rare.
		var oldF, oldT string
		oldest := uint64(math.MaxUint64)
		for k, e := range c.fields {
			if e.last < oldest {
				oldest, oldF, oldT = e.last, k, ""
			}
		}
		for k, e := range c.terms {
			if e.last < oldest {
				oldest, oldF, oldT = e.last, "", k
			}
		}
		if oldF != "" {
			c.used -= c.fields[oldF].size
			delete(c.fields, oldF)
		} else if oldT != "" {
			c.used -= c.terms[oldT].size
			delete(c.terms, oldT)
		} else {
			return false
		}
	}
	return true
}

// indexState reads the index generation and the largest host id.
func (s *Store) indexState(ctx context.Context) (gen, maxID int64, err error) {
	if err := s.queryRow(ctx, indexStateSQL).Scan(&gen, &maxID); err != nil {
		return 0, 0, fmt.Errorf("read the host index generation: %w", err)
	}
	return gen, maxID, nil
}

// sameGen reports whether the index is still at gen: what was read since
// gen was read is that generation's.
func (s *Store) sameGen(ctx context.Context, gen int64) (bool, error) {
	now, err := s.readGen(ctx)
	return now == gen, err
}

// readGen reads the host index's generation.
func (s *Store) readGen(ctx context.Context) (int64, error) {
	var gen int64
	if err := s.queryRow(ctx, indexGenSQL).Scan(&gen); err != nil {
		return 0, fmt.Errorf("read the host index generation: %w", err)
	}
	return gen, nil
}

// cacheable says whether ids up to maxID fit the cache's 32-bit bitmaps.
func cacheable(maxID int64) bool { return maxID <= math.MaxUint32 }

// fieldBuilder builds the cached form of a field from its posting rows
// (in term order), giving up once it outgrows limit bytes.
type fieldBuilder struct {
	limit  int64
	values map[string]*roaring.Bitmap
	size   int64
	term   string // the term being built
	cur    *roaring.Bitmap
	buf    []uint32
	over   bool
}

func newFieldBuilder(limit int64) *fieldBuilder {
	return &fieldBuilder{limit: limit, values: map[string]*roaring.Bitmap{}, over: limit <= 0}
}

// add adds a posting row of value.
func (b *fieldBuilder) add(value string, first int64, n int, blob []byte) error {
	if b.over {
		return nil
	}
	if b.cur == nil || value != b.term {
		b.finish()
		if b.over {
			return nil
		}
		b.term, b.cur = value, roaring.New()
	}
	b.buf = b.buf[:0]
	err := eachPostingID(first, n, blob, func(id int64) bool {
		b.buf = append(b.buf, uint32(id))
		return true
	})
	b.cur.AddMany(b.buf)
	return err
}

// finish stores the term being built.
func (b *fieldBuilder) finish() {
	if b.cur == nil {
		return
	}
	b.cur.RunOptimize()
	b.values[b.term] = b.cur
	b.size += int64(b.cur.GetSizeInBytes()) + int64(len(b.term)) + entryOverhead + rankOverhead
	b.cur = nil
	if b.size > b.limit {
		b.over, b.values = true, nil
	}
}

// done returns the field's terms and their size; ok is false when they
// outgrew the limit.
func (b *fieldBuilder) done() (values map[string]*roaring.Bitmap, size int64, ok bool) {
	b.finish()
	return b.values, b.size, !b.over
}

// roaringOf returns the members of an id set as a roaring bitmap; the
// bitmap may share the set's words, so neither changes afterwards.
func roaringOf(m *idBitmap, share bool) *roaring.Bitmap {
	if m.lo != 0 {
		panic("roaringOf: a set not starting at id 0")
	}
	return roaring.FromDense(m.words, !share)
}

// setOf returns the members of ids as a set of the ids 0 to hi, false when
// some member is above hi.
func setOf(ids *roaring.Bitmap, hi int64) (*idBitmap, bool) {
	m := newIDBitmap(0, hi)
	if !ids.IsEmpty() {
		if int64(ids.Maximum()) > hi {
			return nil, false
		}
		ids.WriteDenseTo(m.words)
	}
	return m, true
}

// sortedKeys returns the values of a cached field in order, with prefix.
func sortedKeys(values map[string]*roaring.Bitmap, prefix string) []string {
	out := make([]string, 0, len(values))
	for v := range values {
		out = append(out, prefix+v)
	}
	slices.Sort(out)
	return out
}
