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

// The listing memo keeps, for the listings of a domain of many hosts, what
// they otherwise walk the domain's whole key range for: the count of a
// listing (every host, or the resolvable ones) and the latest last_seen
// (Listing), and the listing's host ids most recently seen first
// (RecentUnder), so that a subdomain listing walks only the names it lists
// and a deep page of domain details is a slice of ids and a read of those
// documents.
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
// Only listings of at least listMemoMin hosts are memoised: a smaller one
// is walked as before (quick at that size) after a read of the
// generation, and the memo stays a few large entries.

// listCacheMiB is the listing memo's budget (at most the posting cache's).
const listCacheMiB = 32

// listMemoMin is the number of hosts from which a listing is memoised (a
// variable for tests).
var listMemoMin int64 = 10_000

// listEntryOverhead is what an entry costs beyond its ids and key.
const listEntryOverhead = 128

// listKey names a listing of a domain: the domain's reversed key, and
// whether only resolvable hosts are listed.
type listKey struct {
	rkey           string
	resolvableOnly bool
}

// listTotals is what a listing counts: its hosts and the latest last_seen
// of every host of the domain (resolvable or not).
type listTotals struct {
	n, lastSeen int64
}

type totalsEntry struct {
	totals listTotals
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
	totals map[listKey]*totalsEntry
	recent map[listKey]*recentEntry
}

func newListCache(posts *postingCache) *listCache {
	return &listCache{posts: posts, totals: map[listKey]*totalsEntry{}, recent: map[listKey]*recentEntry{}}
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

// listTotals returns the memoised totals of k at gen.
func (c *listCache) listTotals(gen int64, k listKey) (listTotals, bool) {
	budget := c.budget()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at(gen, budget) {
		return listTotals{}, false
	}
	e, ok := c.totals[k]
	if !ok {
		return listTotals{}, false
	}
	c.tick++
	e.last = c.tick
	return e.totals, true
}

// putTotals stores the totals of k read at gen.
func (c *listCache) putTotals(gen int64, k listKey, t listTotals) {
	size := int64(len(k.rkey)) + listEntryOverhead
	budget := c.budget()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at(gen, budget) {
		return
	}
	if _, ok := c.totals[k]; ok || !c.makeRoom(size, budget) {
		return
	}
	c.tick++
	c.totals[k] = &totalsEntry{totals: t, size: size, last: c.tick}
	c.used += size
}

// recentIDs returns the memoised ids of k at gen.
func (c *listCache) recentIDs(gen int64, k listKey) ([]int64, bool) {
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

// recentSize is what the ids of a listing of n hosts cost in the memo.
func recentSize(k listKey, n int64) int64 {
	return 8*n + int64(len(k.rkey)) + listEntryOverhead
}

// putRecent stores the ids of k read at gen.
func (c *listCache) putRecent(gen int64, k listKey, ids []int64) {
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
		// A scan for the oldest entry: entries are few (listings of
		// listMemoMin hosts or more), and eviction rare.
		var oldT, oldR listKey
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

// keyOf names the listing of domain.
func keyOf(domain string, resolvableOnly bool) listKey {
	return listKey{rkey: host.ReverseKey(strings.ToLower(domain)), resolvableOnly: resolvableOnly}
}

// listingTotals returns the count of the hosts of domain and below it
// (the resolvable ones with resolvableOnly) and the latest last_seen of
// all of them, from the memo or from a walk of the domain's key range,
// memoised when it counted listMemoMin hosts or more.
func (s *Store) listingTotals(ctx context.Context, domain string, resolvableOnly bool) (listTotals, error) {
	if s.lists.budget() <= 0 {
		s.lists.off()
		return s.walkTotals(ctx, domain, resolvableOnly)
	}
	gen, err := s.readGen(ctx)
	if err != nil {
		return listTotals{}, fmt.Errorf("count subdomains of %q: %w", domain, err)
	}
	k := keyOf(domain, resolvableOnly)
	if t, ok := s.lists.listTotals(gen, k); ok {
		return t, nil
	}
	t, err := s.walkTotals(ctx, domain, resolvableOnly)
	if err != nil || t.n < listMemoMin {
		return t, err
	}
	same, err := s.sameGen(ctx, gen)
	if err != nil {
		return listTotals{}, fmt.Errorf("count subdomains of %q: %w", domain, err)
	}
	if same {
		s.lists.putTotals(gen, k, t)
	}
	return t, nil
}

// listingTotalsSQL counts a listing (its %s: all hosts, or the resolvable
// ones) and finds the latest last_seen of every host of the domain.
const listingTotalsSQL = `SELECT %s, COALESCE(MAX(last_seen), 0) FROM hosts WHERE %s`

// walkTotals reads a listing's totals in one walk of the domain's range.
func (s *Store) walkTotals(ctx context.Context, domain string, resolvableOnly bool) (listTotals, error) {
	cond, args := underKey("rkey", domain)
	count := "COUNT(*)"
	if resolvableOnly {
		count = "COALESCE(SUM(CASE WHEN is_resolvable = 1 THEN 1 ELSE 0 END), 0)"
	}
	var t listTotals
	if err := s.queryRow(ctx, fmt.Sprintf(listingTotalsSQL, count, cond), args...).Scan(&t.n, &t.lastSeen); err != nil {
		return listTotals{}, fmt.Errorf("count subdomains of %q: %w", domain, err)
	}
	return t, nil
}

// recentPage returns the ids of a page of RecentUnder from the memo, or
// from the domain's ids read whole in RecentUnder's order and memoised;
// ok is false when the memo does not answer (see recentMemo), and
// RecentUnder reads the page alone.
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
	k := keyOf(domain, resolvableOnly)
	ids, ok := s.lists.recentIDs(gen, k)
	if !ok {
		if ids, ok, err = s.recentMemo(ctx, gen, domain, k, offset, budget); err != nil || !ok {
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
	// countUnderSQL counts the hosts of a listing up to a bound.
	countUnderSQL = `SELECT COUNT(*) FROM (SELECT 1 FROM hosts WHERE %s%s LIMIT ?) c`
	// walkUnderSQL reads what a domain's memo is made of, in one walk of
	// its key range (the index alone, on SQLite), in name order.
	walkUnderSQL = `SELECT id, is_resolvable, last_seen FROM hosts WHERE %s ORDER BY rkey`
)

// recentMemo reads the ids of k in RecentUnder's order and memoises them
// at gen with the domain's totals; ok is false, reading no more, for a
// listing of fewer than listMemoMin hosts, one whose ids would not fit the
// budget, or a first page (offset 0) of a listing not counted yet at gen.
//
// Reading every id costs a few times what the first page alone costs
// (which keeps only the latest hosts of the walk), and the memo lasts
// until the next host write: a first page asked once between two writes
// is cheaper alone. A listing counted at gen (its totals memoised: the
// details route counts it after each page) or paged beyond its first page
// is read whole.
func (s *Store) recentMemo(ctx context.Context, gen int64, domain string, k listKey, offset int, budget int64) (ids []int64, ok bool, err error) {
	cond, args := underKey("rkey", domain)
	extra := ""
	if k.resolvableOnly {
		extra = ` AND is_resolvable = 1`
	}
	t, known := s.lists.listTotals(gen, k)
	if !known {
		if offset == 0 {
			return nil, false, nil
		}
		// A small listing is counted to its end, as quick as the page
		// RecentUnder reads then; a large one to the bound only.
		q := fmt.Sprintf(countUnderSQL, cond, extra)
		if err := s.queryRow(ctx, q, append(slices.Clone(args), listMemoMin)...).Scan(&t.n); err != nil {
			return nil, false, fmt.Errorf("hosts of %q: %w", domain, err)
		}
	}
	if t.n < listMemoMin || known && recentSize(k, t.n) > budget {
		return nil, false, nil
	}
	all, res, ids, err := s.walkRecent(ctx, domain, k.resolvableOnly)
	if err != nil {
		return nil, false, err
	}
	same, err := s.sameGen(ctx, gen)
	if err != nil {
		return nil, false, fmt.Errorf("hosts of %q: %w", domain, err)
	}
	if same {
		for _, t := range []struct {
			k listKey
			t listTotals
		}{{listKey{k.rkey, false}, all}, {listKey{k.rkey, true}, res}} {
			if t.t.n >= listMemoMin {
				s.lists.putTotals(gen, t.k, t.t)
			}
		}
		s.lists.putRecent(gen, k, ids)
	}
	return ids, true, nil
}

// walkRecent walks the key range of domain once for the totals of both
// its listings and the ids of one (the resolvable hosts' with
// resolvableOnly) in RecentUnder's order.
func (s *Store) walkRecent(ctx context.Context, domain string, resolvableOnly bool) (all, res listTotals, ids []int64, err error) {
	cond, args := underKey("rkey", domain)
	rows, err := s.query(ctx, fmt.Sprintf(walkUnderSQL, cond), args...)
	if err != nil {
		return all, res, nil, fmt.Errorf("hosts of %q: %w", domain, err)
	}
	defer rows.Close()
	// Rows in name order (pos) sorted by last_seen, latest first, then
	// by pos: RecentUnder's order, ties in name order.
	type seen struct{ id, last, pos int64 }
	var hs []seen
	for rows.Next() {
		var h seen
		var resolvable int
		if err := rows.Scan(&h.id, &resolvable, &h.last); err != nil {
			return all, res, nil, fmt.Errorf("hosts of %q: %w", domain, err)
		}
		if all.n == 0 || h.last > all.lastSeen {
			all.lastSeen = h.last
		}
		all.n++
		if resolvable == 1 {
			res.n++
		}
		if resolvable == 1 || !resolvableOnly {
			h.pos = int64(len(hs))
			hs = append(hs, h)
		}
	}
	if err := rows.Err(); err != nil {
		return all, res, nil, fmt.Errorf("hosts of %q: %w", domain, err)
	}
	res.lastSeen = all.lastSeen
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
	return all, res, ids, nil
}
