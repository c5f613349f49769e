package hoststore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/store"
)

// CountCap is where host counts stop when a query tests the host rows
// (names, address ranges, titles) over many hosts: such a query matching
// more hosts reports a count of at least CountCap with Exact false. Queries
// of filters alone (terms and flags) are counted exactly, on the posting
// lists.
const CountCap = 10000

// HostFlag names a boolean column of hosts a query can test.
type HostFlag string

// The host flags.
const (
	FlagLive       HostFlag = "is_live"
	FlagResolvable HostFlag = "is_resolvable"
	FlagCloud      HostFlag = "is_cloud"
	FlagCDN        HostFlag = "is_cdn"
	FlagCloudflare HostFlag = "is_cloudflare"
	FlagIPv6       HostFlag = "has_ipv6"
	FlagPrivateIP  HostFlag = "has_private_ip"
)

// HostQuery selects hosts; all its conditions are ANDed.
type HostQuery struct {
	// Terms are index terms ("field:value", see the Term* constants); the
	// value is lower-cased by SearchHosts.
	Terms []string
	// Name is an exact host name.
	Name string
	// Under selects the host named Under and every host below it.
	Under string
	// IPRange selects hosts whose ip_address is in the block.
	IPRange netip.Prefix
	// Flags test boolean fields.
	Flags map[HostFlag]bool
	// TitleContains selects hosts whose HTTP title contains it (any case).
	TitleContains string
	Limit, Offset int
}

// HostPage is one page of a host query.
type HostPage struct {
	Hosts []host.Host
	// Total counts the matching hosts; Exact is false when the count
	// stopped at CountCap.
	Total int
	Exact bool
}

// Term returns the index term of a field and value, as stored.
func Term(field, value string) string {
	return field + ":" + strings.ToLower(strings.TrimSpace(value))
}

// rowCond is a condition on the hosts table (h).
type rowCond struct {
	sql     string
	args    []any
	indexed bool // an index range: its hosts can be listed cheaply
}

// SearchHosts returns a page of the hosts matching q, in the order they were
// first stored (id order), and their count. Terms and flags are posting
// lists, intersected (through the posting cache when it is on and the query
// has nothing else: searchCached); names, address ranges and titles are
// conditions on the host rows, applied to the posting lists' hosts (or,
// without terms, walked in id order).
func (s *Store) SearchHosts(ctx context.Context, q HostQuery) (HostPage, error) {
	terms := make([]string, 0, len(q.Terms)+len(q.Flags))
	for _, t := range q.Terms {
		f, v, _ := strings.Cut(t, ":")
		terms = append(terms, Term(f, v))
	}
	for f, v := range q.Flags {
		switch f {
		case FlagLive, FlagResolvable, FlagCloud, FlagCDN, FlagCloudflare, FlagIPv6, FlagPrivateIP:
		default:
			return HostPage{}, fmt.Errorf("search hosts: unknown flag %q", f)
		}
		terms = append(terms, flagTerm(f, v))
	}
	slices.Sort(terms)
	terms = slices.Compact(terms)

	var conds []rowCond
	if q.Name != "" {
		name := strings.ToLower(q.Name)
		conds = append(conds, rowCond{"h.rkey = ? AND h.name = ?", []any{host.ReverseKey(name), name}, true})
	}
	if q.Under != "" {
		cond, a := underKey("h.rkey", q.Under)
		conds = append(conds, rowCond{cond, a, true})
	}
	if q.IPRange.IsValid() {
		lo, hi := prefixKeys(q.IPRange)
		conds = append(conds, rowCond{"h.ipkey >= ? AND h.ipkey <= ?", []any{lo, hi}, true})
	}
	if q.TitleContains != "" {
		conds = append(conds, rowCond{`h.http_title LIKE ? ESCAPE '\'`,
			[]any{"%" + store.LikeEscape(strings.ToLower(q.TitleContains)) + "%"}, false})
	}
	if len(terms) == 0 {
		return s.searchRows(ctx, conds, q.Limit, q.Offset)
	}
	if len(conds) == 0 && s.cache.limit() > 0 {
		page, ok, err := s.searchCached(ctx, terms, q.Limit, q.Offset)
		if err != nil || ok {
			return page, err
		}
	}

	want := q.Offset + q.Limit
	// window returns the page of an ascending list of all matches.
	window := func(ids []int64) []int64 {
		if q.Limit <= 0 || q.Offset >= len(ids) {
			return nil
		}
		return ids[q.Offset:min(want, len(ids))]
	}
	var pageIDs []int64
	page := HostPage{Exact: true}
	switch matched, m, err := s.matchTerms(ctx, terms, len(conds) == 0, want); {
	case err != nil:
		return HostPage{}, err
	case m != nil && len(conds) == 0:
		// Counted and paged on the bitmap: the matches of common terms
		// are never listed whole.
		page.Total = m.count()
		if q.Limit > 0 {
			pageIDs = m.page(q.Offset, q.Limit)
		}
	case matched.count >= 0:
		// One term: counted on its rows, its first ids read.
		page.Total, pageIDs = matched.count, window(matched.ids)
	default:
		ids := matched.ids
		if m != nil {
			ids = m.ids()
		}
		if len(conds) > 0 && len(ids) > 0 {
			if ids, page.Exact, err = s.filterRows(ctx, ids, conds, want); err != nil {
				return HostPage{}, err
			}
		}
		page.Total, pageIDs = len(ids), window(ids)
	}
	if len(pageIDs) == 0 {
		page.Hosts = []host.Host{}
		return page, nil
	}
	hs, err := s.hostsByID(ctx, pageIDs)
	if err != nil {
		return HostPage{}, err
	}
	page.Hosts = hs
	return page, nil
}

// searchCached answers a query of terms alone (flags included) through the
// posting cache, ok false when it leaves the query to the posting rows:
//
//   - One term the cache holds is counted and paged on its cached bitmap.
//   - One term it does not hold is left to the rows: counted on them (a sum
//     of their id counts) with only its first ids read, which costs the
//     same however many hosts hold the term. Reading it whole for the cache
//     decodes every id: 2.1 against 1.2 ms of CPU a search at 1M hosts on
//     SQLite (BenchmarkSearchHostsDB, "cold"), a cost growing with the
//     index and paid again after every host write. A term that counts,
//     facets and searches of several terms use is cached by them, and then
//     answered here (0.6 ms).
//   - Several terms are ANDed as MatchHosts ANDs them (cached terms copied
//     from memory, the others read and cached when no write committed
//     meanwhile), then counted and paged on the result. Self-answered terms
//     (addresses, certificate names) are never cached: a query of those
//     alone is left to the rows, which list their few hosts.
//   - Ids beyond the cache's 32-bit bitmaps are left to the rows.
func (s *Store) searchCached(ctx context.Context, terms []string, limit, offset int) (HostPage, bool, error) {
	if !slices.ContainsFunc(terms, func(t string) bool { return !selfAnswered(t) }) {
		return HostPage{}, false, nil
	}
	if len(terms) == 1 && !s.cache.holds(terms[0]) {
		// Left to the rows whatever the generation: not worth a read of it.
		return HostPage{}, false, nil
	}
	gen, maxID, err := s.indexState(ctx)
	if err != nil {
		return HostPage{}, false, fmt.Errorf("search hosts: %w", err)
	}
	if !cacheable(maxID) {
		return HostPage{}, false, nil
	}
	page := HostPage{Hosts: []host.Host{}, Exact: true}
	var ids []int64
	if len(terms) == 1 {
		cached, ok := s.cache.term(gen, terms[0])
		if !ok {
			return HostPage{}, false, nil
		}
		page.Total, ids = int(cached.GetCardinality()), roaringPage(cached, offset, limit)
	} else {
		e := &Expr{Op: OpAnd}
		for _, t := range terms {
			e.Kids = append(e.Kids, &Expr{Op: OpCond, Cond: Cond{Kind: CondTerm, Term: t}})
		}
		m, err := s.matchAt(ctx, e, gen, maxID)
		if err != nil {
			return HostPage{}, false, err
		}
		page.Total = m.Count()
		if limit > 0 {
			ids = m.set.page(max(offset, 0), limit)
		}
	}
	if len(ids) > 0 {
		if page.Hosts, err = s.hostsByID(ctx, ids); err != nil {
			return HostPage{}, false, err
		}
	}
	return page, true, nil
}

// roaringPage returns at most limit members of ids after the first offset,
// ascending.
func roaringPage(ids *roaring.Bitmap, offset, limit int) []int64 {
	n := ids.GetCardinality()
	if limit <= 0 || offset < 0 || uint64(offset) >= n {
		return nil
	}
	first, err := ids.Select(uint32(offset))
	if err != nil {
		return nil
	}
	out := make([]int64, 0, min(uint64(limit), n-uint64(offset)))
	it := ids.Iterator()
	it.AdvanceIfNeeded(first)
	for it.HasNext() && len(out) < limit {
		out = append(out, int64(it.Next()))
	}
	return out
}

// termMatches is what matchTerms found as a list: the ids, and the count
// when it is known without the whole list (-1 otherwise).
type termMatches struct {
	ids   []int64
	count int
}

// matchTerms returns the hosts holding every term: a single plain term
// alone is counted on its rows and only its first want ids are read (when
// alone is set: nothing else filters them); otherwise intersectTerms.
func (s *Store) matchTerms(ctx context.Context, terms []string, alone bool, want int) (termMatches, *idBitmap, error) {
	if len(terms) == 1 && alone && !selfAnswered(terms[0]) {
		n, err := s.termCount(ctx, terms[0])
		if err != nil || n == 0 || want <= 0 {
			return termMatches{count: n}, nil, err
		}
		ids, err := s.termIDs(ctx, terms[0], want)
		return termMatches{ids: ids, count: n}, nil, err
	}
	ids, m, err := s.intersectTerms(ctx, terms)
	return termMatches{ids: ids, count: -1}, m, err
}

// intersectTerms returns the hosts holding every term: as a list (ids
// ascending), or, when the rarest term is common, as a bitmap of the id
// range (one of the two is nil). Terms are taken rarest first, so lists
// shrink fast; common terms are read as bitmaps of the range and ANDed word
// by word.
func (s *Store) intersectTerms(ctx context.Context, terms []string) ([]int64, *idBitmap, error) {
	counts := make(map[string]int, len(terms))
	lists := make(map[string][]int64)
	for _, t := range terms {
		var n int
		if selfAnswered(t) {
			// Rare values: listed whole to be counted.
			ids, err := s.termList(ctx, t)
			if err != nil {
				return nil, nil, err
			}
			lists[t], n = ids, len(ids)
		} else {
			var err error
			if n, err = s.termCount(ctx, t); err != nil {
				return nil, nil, err
			}
		}
		if n == 0 {
			return nil, nil, nil
		}
		counts[t] = n
	}
	slices.SortStableFunc(terms, func(a, b string) int { return counts[a] - counts[b] })

	if _, listed := lists[terms[0]]; !listed {
		var maxID int64
		if err := s.queryRow(ctx, `SELECT COALESCE(MAX(id), 0) FROM hosts`).Scan(&maxID); err != nil {
			return nil, nil, fmt.Errorf("search hosts: %w", err)
		}
		if int64(counts[terms[0]])*64 >= maxID {
			// Even the rarest term is common: bitmaps of every id.
			cur, err := s.termBitmap(ctx, terms[0], 1, max(maxID, 1))
			if err != nil {
				return nil, nil, err
			}
			for _, t := range terms[1:] {
				m, err := s.termBitmap(ctx, t, cur.lo, cur.hi)
				if ids, listed := lists[t]; listed {
					m, err = newIDBitmap(cur.lo, cur.hi), nil
					for _, id := range ids {
						m.set(id)
					}
				}
				if err != nil {
					return nil, nil, err
				}
				cur.and(m)
			}
			return nil, cur, nil
		}
	}

	out, listed := lists[terms[0]]
	if !listed {
		var err error
		if out, err = s.termIDs(ctx, terms[0], 0); err != nil {
			return nil, nil, err
		}
	}
	for _, t := range terms[1:] {
		if len(out) == 0 {
			return nil, nil, nil
		}
		if ids, listed := lists[t]; listed {
			out = intersectIDs(out, ids)
			continue
		}
		lo, hi := out[0], out[len(out)-1]
		if hi-lo+1 > 64*int64(len(out)) {
			ids, err := s.termIDs(ctx, t, 0)
			if err != nil {
				return nil, nil, err
			}
			out = intersectIDs(out, ids)
			continue
		}
		cur := newIDBitmap(lo, hi)
		for _, id := range out {
			cur.set(id)
		}
		m, err := s.termBitmap(ctx, t, lo, hi)
		if err != nil {
			return nil, nil, err
		}
		cur.and(m)
		out = cur.ids()
	}
	return out, nil, nil
}

// selfAnswered reports whether a term's hosts are partly found through the
// hosts table rather than the posting lists: an address is not indexed as
// a term for the host whose address it is (the ipkey index finds it), nor
// a certificate name for the host of that name (the reversed-label index
// does).
func selfAnswered(term string) bool {
	f, _, _ := strings.Cut(term, ":")
	return f == TermIP || f == TermCertSubjectCN || f == TermCertDNSName
}

// termList returns the ids of the hosts holding a term, ascending: its
// posting lists and, for a self-answered term, the hosts the hosts table
// finds.
func (s *Store) termList(ctx context.Context, term string) ([]int64, error) {
	ids, err := s.termIDs(ctx, term, 0)
	if err != nil || !selfAnswered(term) {
		return ids, err
	}
	f, v, _ := strings.Cut(term, ":")
	var self []int64
	if f == TermIP {
		key := IPKey(v)
		if key == "" {
			return ids, nil
		}
		rows, err := s.query(ctx, `SELECT id FROM hosts WHERE ipkey = ?`, key)
		if err != nil {
			return nil, fmt.Errorf("search hosts: %w", err)
		}
		if self, err = scanIDs(rows); err != nil {
			return nil, fmt.Errorf("search hosts: %w", err)
		}
	} else {
		// The host named v, when its certificate names it.
		var id int64
		var doc []byte
		err := s.queryRow(ctx, `SELECT id, doc FROM hosts WHERE rkey = ? AND name = ?`, host.ReverseKey(v), v).Scan(&id, &doc)
		if errors.Is(err, sql.ErrNoRows) {
			return ids, nil
		}
		if err != nil {
			return nil, fmt.Errorf("search hosts: %w", err)
		}
		var h host.Host
		if err := decodeHostDoc(doc, &h); err != nil {
			return nil, fmt.Errorf("decode host: %w", err)
		}
		names := h.Cert.DNSNames
		if f == TermCertSubjectCN {
			names = []string{h.Cert.SubjectCommonName}
		}
		if slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(strings.TrimSpace(n), v) }) {
			self = []int64{id}
		}
	}
	return sortIDs(append(ids, self...)), nil
}

// rowListCap bounds the hosts an indexed row condition lists to intersect
// with posting lists; a condition matching more is tested host by host.
const rowListCap = 100000

// filterChunk is how many hosts one query tests against row conditions.
const filterChunk = 5000

// filterRows keeps the ids (ascending) whose host rows meet conds. Indexed
// conditions matching at most rowListCap hosts are listed and intersected;
// the rest are tested on the rows of the ids, a chunk at a time, until
// CountCap and want matches are found (exact false when it stopped early).
func (s *Store) filterRows(ctx context.Context, ids []int64, conds []rowCond, want int) ([]int64, bool, error) {
	var rest []rowCond
	for _, c := range conds {
		if !c.indexed {
			rest = append(rest, c)
			continue
		}
		listed, complete, err := s.rowIDs(ctx, c, rowListCap)
		if err != nil {
			return nil, false, err
		}
		if !complete {
			rest = append(rest, c)
			continue
		}
		ids = intersectIDs(ids, listed)
	}
	if len(rest) == 0 || len(ids) == 0 {
		return ids, true, nil
	}
	var where []string
	var args []any
	for _, c := range rest {
		where = append(where, c.sql)
		args = append(args, c.args...)
	}
	goal := max(CountCap, want)
	var out []int64
	for lo := 0; lo < len(ids); lo += filterChunk {
		chunk := ids[lo:min(lo+filterChunk, len(ids))]
		in, inArg := s.inIDs("h.id", chunk)
		rows, err := s.query(ctx, "SELECT h.id FROM hosts h WHERE "+in+" AND "+strings.Join(where, " AND "),
			append([]any{inArg}, args...)...)
		if err != nil {
			return nil, false, fmt.Errorf("search hosts: %w", err)
		}
		found, err := scanIDs(rows)
		if err != nil {
			return nil, false, fmt.Errorf("search hosts: %w", err)
		}
		out = append(out, sortIDs(found)...)
		if len(out) >= goal && lo+filterChunk < len(ids) {
			return out, false, nil
		}
	}
	return out, true, nil
}

// rowIDs lists the ids of the hosts meeting an indexed condition, sorted,
// unless more than limit do (complete false).
func (s *Store) rowIDs(ctx context.Context, c rowCond, limit int) ([]int64, bool, error) {
	rows, err := s.query(ctx, "SELECT h.id FROM hosts h WHERE "+c.sql+" LIMIT ?", append(slices.Clone(c.args), limit+1)...)
	if err != nil {
		return nil, false, fmt.Errorf("search hosts: %w", err)
	}
	ids, err := scanIDs(rows)
	if err != nil {
		return nil, false, fmt.Errorf("search hosts: %w", err)
	}
	if len(ids) > limit {
		return nil, false, nil
	}
	return sortIDs(ids), true, nil
}

func scanIDs(rows *sql.Rows) ([]int64, error) {
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// inIDs is the condition "col is one of ids", with its one argument: a
// JSON array on SQLite, an array literal on PostgreSQL.
func (s *Store) inIDs(col string, ids []int64) (string, any) { return s.d.inIDs(col, ids) }

// hostsByID returns the hosts of ids, in that order.
func (s *Store) hostsByID(ctx context.Context, ids []int64) ([]host.Host, error) {
	docs, err := s.docsByID(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("search hosts: %w", err)
	}
	out := make([]host.Host, len(docs))
	for i, doc := range docs {
		if err := decodeHostDoc(doc, &out[i]); err != nil {
			return nil, fmt.Errorf("decode host: %w", err)
		}
	}
	return out, nil
}

// searchRows answers a query of row conditions alone: a walk of the hosts in
// id order, counted up to CountCap.
func (s *Store) searchRows(ctx context.Context, conds []rowCond, limit, offset int) (HostPage, error) {
	var where []string
	var args []any
	for _, c := range conds {
		where = append(where, c.sql)
		args = append(args, c.args...)
	}
	body := "FROM hosts h"
	if len(where) > 0 {
		body += " WHERE " + strings.Join(where, " AND ")
	}
	total, err := s.cappedCount(ctx, body, args)
	if err != nil {
		return HostPage{}, err
	}
	page := HostPage{Hosts: []host.Host{}, Total: total, Exact: total < CountCap}
	if limit <= 0 || offset >= total && page.Exact {
		return page, nil
	}
	// The page's ids first, then their documents: ordering the range's
	// rows with their documents sorted every document of the range (an
	// address block of 500,000 hosts: 663 ms on SQLite), the ids alone
	// are read from the index.
	rows, err := s.query(ctx, "SELECT h.id "+body+" ORDER BY h.id LIMIT ? OFFSET ?", append(args, limit, offset)...)
	if err != nil {
		return HostPage{}, fmt.Errorf("search hosts: %w", err)
	}
	ids, err := scanIDs(rows)
	if err != nil {
		return HostPage{}, fmt.Errorf("search hosts: %w", err)
	}
	if len(ids) == 0 {
		return page, nil
	}
	if page.Hosts, err = s.hostsByID(ctx, ids); err != nil {
		return HostPage{}, err
	}
	return page, nil
}

// cappedCount counts the rows of a FROM/WHERE body up to CountCap.
func (s *Store) cappedCount(ctx context.Context, body string, args []any) (int, error) {
	var n int
	err := s.queryRow(ctx, "SELECT COUNT(*) FROM (SELECT 1 "+body+" LIMIT ?) c", append(slices.Clone(args), CountCap)...).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count hosts: %w", err)
	}
	return n, nil
}

// prefixKeys returns the first and last IPKey of a block.
func prefixKeys(p netip.Prefix) (lo, hi string) {
	p = p.Masked()
	first := p.Addr()
	b := first.As16()
	bits := p.Bits()
	if first.Is4() {
		bits += 96
	}
	for i := bits; i < 128; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	return IPKey(first.String()), IPKey(netip.AddrFrom16(b).String())
}

// Subdomains lists the names of domain and every host below it in
// reversed-label order (hosts of one branch together), at most limit of
// them, and their count (up to the cap given; exact below it). With
// resolvableOnly, only hosts seen resolving are listed. Both walk one range
// of the reversed-label index.
func (s *Store) Subdomains(ctx context.Context, domain string, resolvableOnly bool, limit, countCap int) (names []string, total int, err error) {
	cond, args := underKey("rkey", domain)
	body := `FROM hosts WHERE ` + cond
	if resolvableOnly {
		body += ` AND is_resolvable = 1`
	}
	names = []string{}
	if limit > 0 {
		rows, err := s.query(ctx, "SELECT rkey "+body+" ORDER BY rkey LIMIT ?", append(slices.Clone(args), limit)...)
		if err != nil {
			return nil, 0, fmt.Errorf("list subdomains of %q: %w", domain, err)
		}
		defer rows.Close()
		for rows.Next() {
			var rk string
			if err := rows.Scan(&rk); err != nil {
				return nil, 0, fmt.Errorf("list subdomains of %q: %w", domain, err)
			}
			names = append(names, host.ReverseKey(rk)) // reversing twice restores the name
		}
		if err := rows.Err(); err != nil {
			return nil, 0, fmt.Errorf("list subdomains of %q: %w", domain, err)
		}
		// A list shorter than the limit is all there is: it is the count,
		// and the range is not walked a second time.
		if len(names) < limit {
			return names, min(len(names), countCap), nil
		}
	}
	if err := s.queryRow(ctx, "SELECT COUNT(*) FROM (SELECT 1 "+body+" LIMIT ?) c", append(args, countCap)...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count subdomains of %q: %w", domain, err)
	}
	return names, total, nil
}

// DomainListing is the subdomain listing of a domain: the names listed,
// how many hosts there are (capped) and the latest last_seen of all of them.
type DomainListing struct {
	Names    []string
	Total    int
	LastSeen int64
}

// Listing answers a subdomain listing with one walk of the domain's key
// range: the first limit names in reversed-label order (a walk of limit
// index entries, stopping there) and, in one aggregate pass over the range,
// the count (of resolvable hosts with resolvableOnly, capped at countCap)
// and the latest last_seen of every host below the domain (resolvable or
// not, as LastSeenUnder). It returns what Subdomains and LastSeenUnder
// return together, without walking the range once for the count and again
// for the maximum; both read only the index (rkey, is_resolvable,
// last_seen). The count and the maximum of a domain of many hosts are
// kept in the listing memo (listcache.go), so only the names are walked.
func (s *Store) Listing(ctx context.Context, domain string, resolvableOnly bool, limit, countCap int) (DomainListing, error) {
	cond, args := underKey("rkey", domain)
	out := DomainListing{Names: []string{}}
	if limit > 0 {
		q := "SELECT rkey FROM hosts WHERE " + cond
		if resolvableOnly {
			q += " AND is_resolvable = 1"
		}
		rows, err := s.query(ctx, q+" ORDER BY rkey LIMIT ?", append(slices.Clone(args), limit)...)
		if err != nil {
			return DomainListing{}, fmt.Errorf("list subdomains of %q: %w", domain, err)
		}
		defer rows.Close()
		for rows.Next() {
			var rk string
			if err := rows.Scan(&rk); err != nil {
				return DomainListing{}, fmt.Errorf("list subdomains of %q: %w", domain, err)
			}
			out.Names = append(out.Names, host.ReverseKey(rk)) // reversing twice restores the name
		}
		if err := rows.Err(); err != nil {
			return DomainListing{}, fmt.Errorf("list subdomains of %q: %w", domain, err)
		}
		rows.Close()
	}
	t, err := s.listingTotals(ctx, domain, resolvableOnly)
	if err != nil {
		return DomainListing{}, err
	}
	out.Total, out.LastSeen = int(min(t.n, int64(countCap))), t.lastSeen
	return out, nil
}

// LastSeenUnder returns the latest last_seen of domain and the hosts below
// it (0 when none), walking the same key range.
func (s *Store) LastSeenUnder(ctx context.Context, domain string) (int64, error) {
	cond, args := underKey("rkey", domain)
	var last int64
	err := s.queryRow(ctx, `SELECT COALESCE(MAX(last_seen), 0) FROM hosts WHERE `+cond, args...).Scan(&last)
	if err != nil {
		return 0, fmt.Errorf("last scan of %q: %w", domain, err)
	}
	return last, nil
}

// EachHost calls fn for every stored host in id order (the order hosts
// were first stored), optionally only domain and the hosts below it,
// reading in chunks so memory stays flat. An error from fn stops the walk
// and is returned.
func (s *Store) EachHost(ctx context.Context, domain string, fn func(host.Host) error) error {
	var after int64
	for {
		q := `SELECT id, doc FROM hosts WHERE id > ?`
		args := []any{after}
		if domain != "" {
			cond, a := underKey("rkey", domain)
			q += ` AND ` + cond
			args = append(args, a...)
		}
		rows, err := s.query(ctx, q+` ORDER BY id LIMIT 1000`, args...)
		if err != nil {
			return fmt.Errorf("read hosts: %w", err)
		}
		var batch []host.Host
		for rows.Next() {
			var doc []byte
			if err := rows.Scan(&after, &doc); err != nil {
				rows.Close()
				return fmt.Errorf("read hosts: %w", err)
			}
			var h host.Host
			if err := decodeHostDoc(doc, &h); err != nil {
				rows.Close()
				return fmt.Errorf("decode host: %w", err)
			}
			batch = append(batch, h)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read hosts: %w", err)
		}
		for _, h := range batch {
			if err := fn(h); err != nil {
				return err
			}
		}
		if len(batch) < 1000 {
			return nil
		}
	}
}

// underKey is the condition on a reversed-label key column selecting domain
// and the names below it: one index range, [k, k+"/"), in which the names
// of k's siblings that only start like it (k+"-…") are filtered out.
func underKey(col, domain string) (string, []any) {
	k := host.ReverseKey(strings.ToLower(domain))
	return "(" + col + " >= ? AND " + col + " < ? AND (" + col + " = ? OR " + col + " > ?))", []any{k, k + "/", k, k + "."}
}
