package hoststore

import (
	"context"
	"fmt"

	"github.com/periscope-oss/periscope/internal/host"
)

// recentUnderSQL lists the ids of domain's hosts, most recently seen first;
// the host documents are read after the sort, for the page only, so the
// sort moves ids rather than documents. The listing memo keeps a large
// domain's ids in this order (recentMemo, listcache.go).
const recentUnderSQL = `SELECT id FROM hosts WHERE %s%s ORDER BY last_seen DESC, rkey LIMIT ? OFFSET ?`

// RecentUnder returns a page of the hosts of domain and below it, most
// recently seen first (ties in name order), as FullHunt's domain details
// are sorted (fullhunt/fullhunt-skill, fullhunt/references/endpoints.md).
// With resolvableOnly, only hosts seen resolving. The page of a domain of
// many hosts is a slice of its ids in the listing memo (listcache.go), so
// a deep page does not sort the domain again.
func (s *Store) RecentUnder(ctx context.Context, domain string, resolvableOnly bool, limit, offset int) ([]host.Host, error) {
	if limit <= 0 {
		return []host.Host{}, nil
	}
	ids, ok, err := s.recentPage(ctx, domain, resolvableOnly, limit, offset)
	if err != nil {
		return nil, err
	}
	if !ok {
		cond, args := underKey("rkey", domain)
		extra := ""
		if resolvableOnly {
			extra = ` AND is_resolvable = 1`
		}
		rows, err := s.query(ctx, fmt.Sprintf(recentUnderSQL, cond, extra), append(args, limit, offset)...)
		if err != nil {
			return nil, fmt.Errorf("hosts of %q: %w", domain, err)
		}
		if ids, err = scanIDs(rows); err != nil {
			return nil, fmt.Errorf("hosts of %q: %w", domain, err)
		}
	}
	if len(ids) == 0 {
		return []host.Host{}, nil
	}
	return s.hostsByID(ctx, ids)
}
