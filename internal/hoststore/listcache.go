package hoststore

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/periscope-oss/periscope/internal/host"
)

// The listing memo keeps, for a domain of many hosts, what a listing of it
// otherwise walks the domain's whole key range for: the number of its
// hosts (all and resolvable) and their latest last_seen (Listing), and its
// host ids most recently seen first (RecentUnder), so that a subdomain
// listing walks only the names it lists and a deep page of domain details
// is a slice of ids and a read of those documents.
//
// It is exact by the posting cache's rules (postcache.go): a request reads
// the index generation first and uses only entries of that generation; an
// entry is stored only when the generation read again after computing it
// is unchanged; a newer generation drops every entry. Any host write, by
// any writer, thus empties it.
//
// Its budget is its own (listCacheMiB), not a share of the posting
// cache's, and never more than the posting cache's, so a posting cache
// turned off (SetPostingCacheMiB(0)) turns the memo off too. With one
// shared budget, a facet over a large field (which can take most of the
// posting cache's 256 MiB) would evict the ids of a domain, which cost a
// walk and a sort of the whole domain to read again, and a domain's ids
// would evict posting lists; the memo needs little (8 bytes a host of a
// large domain: 4 MB for a domain of 500,000 hosts), so a small budget of
// its own holds the few large domains of an index.
//
// Only domains of at least listMemoMin hosts are memoised: a smaller one
// is walked as before (quick at that size), with a read of the generation
// more, and the memo stays a few large entries.

// listCacheMiB is the listing memo's budget (at most the posting cache's).
const listCacheMiB = 32

// listMemoMin is the number of hosts below a domain from which its
// listings are memoised (a variable for tests).
var listMemoMin int64 = 10_000

// listEntryOverhead is what an entry costs beyond its ids and key.
const listEntryOverhead = 128

// domainTotals is what a walk of a domain's key range counts.
type domainTotals struct {
	all, resolvable, lastSeen int64
}

func (t domainTotals) count(resolvableOnly bool) int64 {
	if resolvableOnly {
		return t.resolvable
	}
	return t.all
}

// recentKey names a domain's ids in RecentUnder's order.
type recentKey struct {
	rkey           string
	resolvableOnly bool
}

type totalsEntry struct {
	totals domainTotals
	size   int64
	last   uint64
}

type recentEntry struct {
	ids  []int64 // never changed once stored, so readers share it
	size int64
	last uint64
}

// listCache is the listing memo of one Store; safe for concurrent use.
type listCache struct {
	posts *postingCache // whose budget bounds this one

	mu     sync.Mutex
	gen    int64 // the generation every entry belongs to
	used   int64
	tick   uint64
	totals map[string]*totalsEntry // by the domain's reversed key
	recent map[recentKey]*recentEntry
}

func newListCache(posts *postingCache) *listCache {
	return &listCache{posts: posts, totals: map[string]*totalsEntry{}, recent: map[recentKey]*recentEntry{}}
}

// budget is the memo's budget in bytes: 0 while the posting cache is off.
func (c *listCache) budget() int64 {
	return min(int64(listCacheMiB)<<20, c.posts.limit())
}

// at makes gen the memo's generation when it is newer, dropping every
// entry, and evicts down to budget; it reports whether the memo holds gen.
func (c *listCache) at(gen, budget int64) bool {
	if gen > c.gen || budget <= 0 {
		c.dropLocked()
		c.gen = max(c.gen, gen)
	}
	c.makeRoom(0, budget)
	return gen == c.gen && budget > 0
}

// off drops every entry once the budget is 0 (the posting cache turned
// off), so that they are not held without being used.
func (c *listCache) off() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked()
}

func (c *listCache) dropLocked() {
	clear(c.totals)
	clear(c.recent)
	c.used = 0
}

// domainTotals returns the memoised totals of the domain of rkey at gen.
func (c *listCache) domainTotals(gen int64, rkey string) (domainTotals, bool) {
	budget := c.budget()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at(gen, budget) {
		return domainTotals{}, false
	}
	e, ok := c.totals[rkey]
	if !ok {
		return domainTotals{}, false
	}
	c.tick++
	e.last = c.tick
	return e.totals, true
}

// putTotals stores the totals of the domain of rkey read at gen.
func (c *listCache) putTotals(gen int64, rkey string, t domainTotals) {
	size := int64(len(rkey)) + listEntryOverhead
	budget := c.budget()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at(gen, budget) {
		return
	}
	if _, ok := c.totals[rkey]; ok || !c.makeRoom(size, budget) {
		return
	}
	c.tick++
	c.totals[rkey] = &totalsEntry{totals: t, size: size, last: c.tick}
	c.used += size
}

// recentIDs returns the memoised ids of k at gen.
func (c *listCache) recentIDs(gen int64, k recentKey) ([]int64, bool) {
	budget := c.budget()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at(gen, budget) {
		return nil, false
	}
	e, ok := c.recent[k]
	if !ok {
		return nil, false
	}
	c.tick++
	e.last = c.tick
	return e.ids, true
}

// recentSize is what the ids of a domain cost in the memo.
func recentSize(k recentKey, n int64) int64 {
	return 8*n + int64(len(k.rkey)) + listEntryOverhead
}

// putRecent stores the ids of k read at gen.
func (c *listCache) putRecent(gen int64, k recentKey, ids []int64) {
	size := recentSize(k, int64(len(ids)))
	budget := c.budget()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at(gen, budget) {
		return
	}
	if _, ok := c.recent[k]; ok || !c.makeRoom(size, budget) {
		return
	}
	c.tick++
	c.recent[k] = &recentEntry{ids: ids, size: size, last: c.tick}
	c.used += size
}

// makeRoom evicts the least recently used entries until size more bytes
// fit the budget; it reports false, evicting nothing, when they never can.
func (c *listCache) makeRoom(size, budget int64) bool {
	if size > budget {
		return false
	}
	for c.used+size > budget {
		// A scan for the oldest entry: entries are few (domains of
		// listMemoMin hosts or more), and eviction rare.
		var oldT string
		var oldR recentKey
		isT, found := false, false
		oldest := uint64(math.MaxUint64)
		for k, e := range c.totals {
			if e.last < oldest {
				oldest, oldT, isT, found = e.last, k, true, true
			}
		}
		for k, e := range c.recent {
			if e.last < oldest {
				oldest, oldR, isT, found = e.last, k, false, true
			}
		}
		switch {
		case !found:
			return false
		case isT:
			c.used -= c.totals[oldT].size
			delete(c.totals, oldT)
		default:
			c.used -= c.recent[oldR].size
			delete(c.recent, oldR)
		}
	}
	return true
}

// readGen reads the host index's generation.
func (s *Store) readGen(ctx context.Context) (int64, error) {
	var gen int64
	if err := s.queryRow(ctx, indexGenSQL).Scan(&gen); err != nil {
		return 0, fmt.Errorf("read the host index generation: %w", err)
	}
	return gen, nil
}

// listingTotalsSQL is the aggregate of a listing without the memo: the
// count (of resolvable hosts, the %s) and the latest last_seen of every
// host below the domain, resolvable or not.
const listingTotalsSQL = `SELECT %s, COALESCE(MAX(last_seen), 0) FROM hosts WHERE %s`

// listingTotals returns the count of the hosts of domain and below it
// (the resolvable ones with resolvableOnly) and their latest last_seen,
// as one walk of the domain's key range answers them, or the memo.
func (s *Store) listingTotals(ctx context.Context, domain string, resolvableOnly bool) (n, lastSeen int64, err error) {
	if s.lists.budget() <= 0 {
		s.lists.off()
		cond, args := underKey("rkey", domain)
		count := "COUNT(*)"
		if resolvableOnly {
			count = "COALESCE(SUM(CASE WHEN is_resolvable = 1 THEN 1 ELSE 0 END), 0)"
		}
		err := s.queryRow(ctx, fmt.Sprintf(listingTotalsSQL, count, cond), args...).Scan(&n, &lastSeen)
		if err != nil {
			return 0, 0, fmt.Errorf("count subdomains of %q: %w", domain, err)
		}
		return n, lastSeen, nil
	}
	gen, err := s.readGen(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("count subdomains of %q: %w", domain, err)
	}
	t, err := s.domainTotals(ctx, gen, domain)
	if err != nil {
		return 0, 0, err
	}
	return t.count(resolvableOnly), t.lastSeen, nil
}

// domainTotalsSQL is the memo's aggregate: both counts and the latest
// last_seen in one walk of the range, so that one entry answers a listing
// with and without resolvable_only.
const domainTotalsSQL = `SELECT COUNT(*), COALESCE(SUM(CASE WHEN is_resolvable = 1 THEN 1 ELSE 0 END), 0), COALESCE(MAX(last_seen), 0) FROM hosts WHERE %s`

// domainTotals returns the totals of domain at gen from the memo, or from
// a walk of its key range, memoised when the domain is large enough.
func (s *Store) domainTotals(ctx context.Context, gen int64, domain string) (domainTotals, error) {
	rkey := host.ReverseKey(strings.ToLower(domain))
	if t, ok := s.lists.domainTotals(gen, rkey); ok {
		return t, nil
	}
	cond, args := underKey("rkey", domain)
	var t domainTotals
	if err := s.queryRow(ctx, fmt.Sprintf(domainTotalsSQL, cond), args...).Scan(&t.all, &t.resolvable, &t.lastSeen); err != nil {
		return domainTotals{}, fmt.Errorf("count subdomains of %q: %w", domain, err)
	}
	if t.all < listMemoMin {
		return t, nil
	}
	same, err := s.sameGen(ctx, gen)
	if err != nil {
		return domainTotals{}, fmt.Errorf("count subdomains of %q: %w", domain, err)
	}
	if same {
		s.lists.putTotals(gen, rkey, t)
	}
	return t, nil
}

// recentPage returns the ids of a page of RecentUnder from the memo, or
// from the domain's ids read whole in RecentUnder's order and memoised;
// ok is false when the memo does not answer (off, a small domain, or ids
// that would not fit it), and RecentUnder reads the page alone.
func (s *Store) recentPage(ctx context.Context, domain string, resolvableOnly bool, limit, offset int) (page []int64, ok bool, err error) {
	budget := s.lists.budget()
	if budget <= 0 {
		s.lists.off()
	}
	if budget <= 0 || offset < 0 {
		return nil, false, nil
	}
	gen, err := s.readGen(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("hosts of %q: %w", domain, err)
	}
	k := recentKey{rkey: host.ReverseKey(strings.ToLower(domain)), resolvableOnly: resolvableOnly}
	ids, ok := s.lists.recentIDs(gen, k)
	if !ok {
		if ids, ok, err = s.recentMemo(ctx, gen, domain, k, budget); err != nil || !ok {
			return nil, false, err
		}
	}
	if offset >= len(ids) {
		return []int64{}, true, nil
	}
	end := offset + min(limit, len(ids)-offset)
	return ids[offset:end:end], true, nil
}

const (
	// countUnderSQL counts the hosts of a domain up to a bound.
	countUnderSQL = `SELECT COUNT(*) FROM (SELECT 1 FROM hosts WHERE %s LIMIT ?) c`
	// walkUnderSQL reads what a domain's memo is made of, in one walk of
	// its key range (the index alone, on SQLite), in name order.
	walkUnderSQL = `SELECT id, is_resolvable, last_seen FROM hosts WHERE %s ORDER BY rkey`
)

// recentMemo reads the ids of k in RecentUnder's order and memoises them
// at gen with the domain's totals; ok is false, reading no more, for a
// domain of fewer than listMemoMin hosts or one whose ids would not fit
// the budget.
func (s *Store) recentMemo(ctx context.Context, gen int64, domain string, k recentKey, budget int64) (ids []int64, ok bool, err error) {
	cond, args := underKey("rkey", domain)
	t, known := s.lists.domainTotals(gen, k.rkey)
	if !known {
		// A small domain is counted to its end, as quick as the page
		// RecentUnder reads then; a large one to the bound only.
		if err := s.queryRow(ctx, fmt.Sprintf(countUnderSQL, cond), append(slices.Clone(args), listMemoMin)...).Scan(&t.all); err != nil {
			return nil, false, fmt.Errorf("hosts of %q: %w", domain, err)
		}
	}
	if t.all < listMemoMin || known && recentSize(k, t.count(k.resolvableOnly)) > budget {
		return nil, false, nil
	}
	rows, err := s.query(ctx, fmt.Sprintf(walkUnderSQL, cond), args...)
	if err != nil {
		return nil, false, fmt.Errorf("hosts of %q: %w", domain, err)
	}
	defer rows.Close()
	// Rows in name order (pos) sorted by last_seen, latest first, then
	// by pos: RecentUnder's order, ties in name order.
	type seen struct{ id, last, pos int64 }
	var hs []seen
	t = domainTotals{}
	for rows.Next() {
		var h seen
		var res int
		if err := rows.Scan(&h.id, &res, &h.last); err != nil {
			return nil, false, fmt.Errorf("hosts of %q: %w", domain, err)
		}
		t.all++
		if t.all == 1 || h.last > t.lastSeen {
			t.lastSeen = h.last
		}
		if res == 1 {
			t.resolvable++
		}
		if res == 1 || !k.resolvableOnly {
			h.pos = int64(len(hs))
			hs = append(hs, h)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("hosts of %q: %w", domain, err)
	}
	rows.Close()
	slices.SortFunc(hs, func(a, b seen) int {
		if c := cmp.Compare(b.last, a.last); c != 0 {
			return c
		}
		return cmp.Compare(a.pos, b.pos)
	})
	ids = make([]int64, len(hs))
	for i, h := range hs {
		ids[i] = h.id
	}
	same, err := s.sameGen(ctx, gen)
	if err != nil {
		return nil, false, fmt.Errorf("hosts of %q: %w", domain, err)
	}
	if same {
		s.lists.putTotals(gen, k.rkey, t)
		s.lists.putRecent(gen, k, ids)
	}
	return ids, true, nil
}
