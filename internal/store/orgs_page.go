package store

import (
	"context"
	"fmt"

	"github.com/periscope-oss/periscope/internal/periscope"
)

const (
	countOrganizationsSQL = `SELECT COUNT(*) FROM organizations WHERE account_id = ?`
	organizationsPageSQL  = `SELECT ` + orgColumns + ` FROM organizations WHERE account_id = ?
		ORDER BY is_default DESC, created_at, id LIMIT ? OFFSET ?`
)

// OrganizationsPage lists limit of an account's organizations from offset,
// the default first then oldest first, with how many the account has.
func (s *Store) OrganizationsPage(ctx context.Context, accountID string, offset, limit int) ([]periscope.Organization, int, error) {
	var total int
	if err := s.queryRow(ctx, countOrganizationsSQL, accountID).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count organizations: %w", err)
	}
	out := []periscope.Organization{}
	if offset >= total {
		return out, total, nil
	}
	rows, err := s.query(ctx, organizationsPageSQL, accountID, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("list organizations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var o periscope.Organization
		if err := scanOrg(rows, &o); err != nil {
			return nil, 0, fmt.Errorf("list organizations: %w", err)
		}
		out = append(out, o)
	}
	return out, total, rows.Err()
}
