package hoststore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/periscope-oss/periscope/internal/host"
)

// certTermsSQL lists the index terms in a range: the certificate names
// (san:, scn:) starting with a prefix. Terms compare byte-wise (COLLATE "C"
// on PostgreSQL, BINARY on SQLite), so a prefix is one key range.
const certTermsSQL = `SELECT DISTINCT term FROM host_postings WHERE term >= ? AND term < ? ORDER BY term LIMIT ?`

// maxPrefixTerms bounds the distinct names one prefix search expands to.
const maxPrefixTerms = 10000

// CertNamePrefix returns up to limit hosts whose TLS certificate names a
// DNS name starting with prefix (any case): the certificate names held as
// index terms, and, when prefix is a whole host name, that host and the
// hosts below it whose certificates name themselves (a host's own name is
// not indexed as a term, its row answers for it). A prefix that ends inside
// a label finds only the names held as terms.
func (s *Store) CertNamePrefix(ctx context.Context, prefix string, limit int) ([]host.Host, error) {
	prefix = strings.ToLower(strings.TrimSpace(prefix))
	if prefix == "" || limit <= 0 {
		return []host.Host{}, nil
	}
	seen := map[int64]bool{}
	var ids []int64
	for _, field := range []string{TermCertDNSName, TermCertSubjectCN} {
		lo := field + ":" + prefix
		rows, err := s.query(ctx, certTermsSQL, lo, lo+"\U0010FFFF", maxPrefixTerms)
		if err != nil {
			return nil, fmt.Errorf("certificate names: %w", err)
		}
		var terms []string
		for rows.Next() {
			var t string
			if err := rows.Scan(&t); err != nil {
				rows.Close()
				return nil, fmt.Errorf("certificate names: %w", err)
			}
			terms = append(terms, t)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("certificate names: %w", err)
		}
		for _, t := range terms {
			tids, err := s.termIDs(ctx, t, limit)
			if err != nil {
				return nil, err
			}
			for _, id := range tids {
				if len(ids) < limit && !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
		}
	}
	slices.Sort(ids)
	hs, err := s.hostsByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	if n, err := host.Normalize(prefix); err == nil && !n.IP && len(hs) < limit {
		own, err := s.RecentUnder(ctx, n.Host, false, limit, 0)
		if err != nil {
			return nil, err
		}
		have := map[string]bool{}
		for _, h := range hs {
			have[h.Host] = true
		}
		for _, h := range own {
			if len(hs) < limit && !have[h.Host] && slices.ContainsFunc(h.Cert.DNSNames, func(d string) bool { return strings.EqualFold(d, h.Host) }) {
				hs = append(hs, h)
			}
		}
	}
	return hs, nil
}
