package store

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/periscope-oss/periscope/internal/host"
)

// CountCap is where host counts stop: a query matching more hosts reports
// CountCap with Exact false, so counting never walks a large part of the
// index. A query of several terms that are all common counts the matches
// among the first estimateCap hosts of the rarest one: a lower bound, also
// with Exact false.
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
	// Total counts the matching hosts up to CountCap; Exact is false when
	// the count stopped there.
	Total int
	Exact bool
}

// Term returns the index term of a field and value, as stored.
func Term(field, value string) string {
	return field + ":" + strings.ToLower(strings.TrimSpace(value))
}

// SearchHosts returns a page of the hosts matching q, in the order they were
// first stored, and their (capped) count. Every condition uses an index
// except flags and TitleContains, which filter the hosts the indexed
// conditions select (or, alone, a walk of the table in id order).
func (s *Store) SearchHosts(ctx context.Context, q HostQuery) (HostPage, error) {
	terms := slices.Clone(q.Terms)
	for i, t := range terms {
		f, v, _ := strings.Cut(t, ":")
		terms[i] = Term(f, v)
	}
	slices.Sort(terms)
	terms = slices.Compact(terms)
	// Drive the join with the rarest term: estimate each (capped) first.
	sampled := false
	if len(terms) > 1 {
		est := make(map[string]int, len(terms))
		for _, t := range terms {
			n, err := s.cappedCountN(ctx, `FROM host_terms WHERE term = ?`, []any{t}, estimateCap)
			if err != nil {
				return HostPage{}, err
			}
			if n == 0 {
				return HostPage{Hosts: []host.Host{}, Exact: true}, nil
			}
			est[t] = n
		}
		slices.SortStableFunc(terms, func(a, b string) int { return est[a] - est[b] })
		// Even the rarest term is common: count matches among its first
		// estimateCap hosts only (a lower bound, said to be inexact)
		// rather than intersect long lists for an exact figure.
		sampled = est[terms[0]] >= estimateCap
	}

	// termsFrom is the FROM of a term query driven by t0 (the rarest
	// term's rows, or a sample of them), joining the other terms and, when
	// a condition needs the host row, the hosts table.
	join := joinKind(s.Dialect())
	var joinArgs []any
	termsFrom := func(t0 string, withHosts bool) string {
		var b strings.Builder
		b.WriteString("FROM " + t0 + " t0")
		for i := 1; i < len(terms); i++ {
			fmt.Fprintf(&b, " %s host_terms t%d ON t%d.term = ? AND t%d.host_id = t0.host_id", join, i, i, i)
		}
		if withHosts {
			fmt.Fprintf(&b, " %s hosts h ON h.id = t0.host_id", join)
		}
		return b.String()
	}
	for _, t := range terms[min(1, len(terms)):] {
		joinArgs = append(joinArgs, t)
	}

	var where []any
	var conds []string
	order := "h.id"
	if len(terms) > 0 {
		conds = append(conds, "t0.term = ?")
		where = append(where, terms[0])
		order = "t0.host_id"
	}
	if q.Name != "" {
		conds = append(conds, "h.name = ?")
		where = append(where, strings.ToLower(q.Name))
	}
	if q.Under != "" {
		cond, a := underKey("h.rkey", q.Under)
		conds = append(conds, cond)
		where = append(where, a...)
	}
	if q.IPRange.IsValid() {
		lo, hi := prefixKeys(q.IPRange)
		conds = append(conds, "h.ipkey >= ? AND h.ipkey <= ?")
		where = append(where, lo, hi)
	}
	flags := make([]HostFlag, 0, len(q.Flags))
	for f := range q.Flags {
		flags = append(flags, f)
	}
	slices.Sort(flags)
	for _, f := range flags {
		switch f {
		case FlagLive, FlagResolvable, FlagCloud, FlagCDN, FlagCloudflare, FlagIPv6, FlagPrivateIP:
		default:
			return HostPage{}, fmt.Errorf("search hosts: unknown flag %q", f)
		}
		conds = append(conds, "h."+string(f)+" = ?")
		where = append(where, b2i(q.Flags[f]))
	}
	if q.TitleContains != "" {
		conds = append(conds, `h.http_title LIKE ? ESCAPE '\'`)
		where = append(where, "%"+likeEscape(strings.ToLower(q.TitleContains))+"%")
	}
	whereSQL := ""
	if len(conds) > 0 {
		whereSQL = " WHERE " + strings.Join(conds, " AND ")
	}
	body, countBody := "FROM hosts h"+whereSQL, "FROM hosts h"+whereSQL
	args := append(slices.Clone(joinArgs), where...)
	countArgs := args
	if len(terms) > 0 {
		body = termsFrom("host_terms", true) + whereSQL
		// Counting needs the hosts table only for conditions on it:
		// terms alone are counted on the term index.
		t0 := "host_terms"
		if sampled {
			t0 = "(SELECT term, host_id FROM host_terms WHERE term = ? ORDER BY host_id LIMIT ?)"
			countArgs = append([]any{terms[0], estimateCap}, args...)
		}
		countBody = termsFrom(t0, len(conds) > 1) + whereSQL
	}
	total, err := s.cappedCount(ctx, countBody, countArgs)
	if err != nil {
		return HostPage{}, err
	}
	page := HostPage{Hosts: []host.Host{}, Total: total, Exact: total < CountCap && !sampled}
	if q.Limit <= 0 || q.Offset >= total && page.Exact {
		return page, nil
	}
	rows, err := s.query(ctx, "SELECT h.doc "+body+" ORDER BY "+order+" LIMIT ? OFFSET ?",
		append(args, q.Limit, q.Offset)...)
	if err != nil {
		return HostPage{}, fmt.Errorf("search hosts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var doc []byte
		if err := rows.Scan(&doc); err != nil {
			return HostPage{}, fmt.Errorf("search hosts: %w", err)
		}
		var h host.Host
		if err := decodeHostDoc(doc, &h); err != nil {
			return HostPage{}, fmt.Errorf("decode host: %w", err)
		}
		page.Hosts = append(page.Hosts, h)
	}
	if err := rows.Err(); err != nil {
		return HostPage{}, fmt.Errorf("search hosts: %w", err)
	}
	return page, nil
}

// joinKind is the join that keeps the written order: the rarest term
// drives (SQLite keeps the order of a CROSS JOIN; PostgreSQL plans well).
func joinKind(dialect string) string {
	if dialect == "sqlite" {
		return "CROSS JOIN"
	}
	return "JOIN"
}

// estimateCap bounds the counts that rank terms by rarity, and the hosts of
// the rarest term a combined count looks at.
const estimateCap = 5000

// cappedCount counts the rows of a FROM/WHERE body up to CountCap.
func (s *Store) cappedCount(ctx context.Context, body string, args []any) (int, error) {
	return s.cappedCountN(ctx, body, args, CountCap)
}

func (s *Store) cappedCountN(ctx context.Context, body string, args []any, limit int) (int, error) {
	var n int
	err := s.queryRow(ctx, "SELECT COUNT(*) FROM (SELECT 1 "+body+" LIMIT ?) c", append(slices.Clone(args), limit)...).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count hosts: %w", err)
	}
	return n, nil
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
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
	if err := s.queryRow(ctx, "SELECT COUNT(*) FROM (SELECT 1 "+body+" LIMIT ?) c", append(args, countCap)...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count subdomains of %q: %w", domain, err)
	}
	names = []string{}
	if limit <= 0 || total == 0 {
		return names, total, nil
	}
	rows, err := s.query(ctx, "SELECT rkey "+body+" ORDER BY rkey LIMIT ?", append(args, limit)...)
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
	return names, total, nil
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
