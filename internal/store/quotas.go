package store

import (
	"context"
	"fmt"

	"github.com/periscope-oss/periscope/internal/periscope"
)

// SQL of the quota checks. The no-op UPDATE takes the account's row lock on
// PostgreSQL, so two concurrent additions by one account are counted one
// after the other and never both squeeze under the limit (SQLite's write
// transactions are serial already).
const (
	lockAccountSQL   = `UPDATE accounts SET max_organizations = max_organizations WHERE id = ?`
	readQuotasSQL    = `SELECT max_organizations, max_domains, max_ranges FROM accounts WHERE id = ?`
	countOrgsSQL     = `SELECT COUNT(*) FROM organizations WHERE account_id = ?`
	countAssetsSQL   = `SELECT COUNT(*) FROM org_assets WHERE account_id = ? AND kind = ?`
	assetInOrgSQL    = `SELECT COUNT(*) FROM org_assets WHERE organization_id = ? AND kind = ? AND value = ?`
	quotaContactHint = " Remove some, or ask the operator to raise the limit."
)

// accountQuotas locks the account's row for the rest of tx and returns its
// effective quotas.
func accountQuotas(ctx context.Context, tx *Tx, accountID string) (periscope.Quotas, error) {
	var q periscope.Quotas
	if _, err := tx.Exec(ctx, lockAccountSQL, accountID); err != nil {
		return q, fmt.Errorf("lock account for its quotas: %w", err)
	}
	if err := tx.QueryRow(ctx, readQuotasSQL, accountID).Scan(&q.Organizations, &q.Domains, &q.Ranges); err != nil {
		return q, fmt.Errorf("read quotas: %w", err)
	}
	return q.Effective(), nil
}

// checkOrganizationQuota refuses a new organization beyond the account's
// quota.
func checkOrganizationQuota(ctx context.Context, tx *Tx, accountID string) error {
	q, err := accountQuotas(ctx, tx, accountID)
	if err != nil {
		return err
	}
	var n int
	if err := tx.QueryRow(ctx, countOrgsSQL, accountID).Scan(&n); err != nil {
		return fmt.Errorf("count organizations: %w", err)
	}
	if n >= q.Organizations {
		return periscope.Errorf(periscope.EQuotaExceeded, "This account has %d organizations, its limit."+quotaContactHint, q.Organizations)
	}
	return nil
}

// checkAssetQuota refuses an asset beyond the account's quota of its kind.
// Adding an asset the organization already has is not counted (it is
// idempotent).
func checkAssetQuota(ctx context.Context, tx *Tx, a periscope.Asset) error {
	q, err := accountQuotas(ctx, tx, a.AccountID)
	if err != nil {
		return err
	}
	var have int
	if err := tx.QueryRow(ctx, assetInOrgSQL, a.OrganizationID, a.Kind, a.Value).Scan(&have); err != nil {
		return fmt.Errorf("look up asset: %w", err)
	}
	if have > 0 {
		return nil
	}
	limit, what := q.Domains, "domains"
	if a.Kind == periscope.AssetIPRange {
		limit, what = q.Ranges, "IP ranges"
	}
	var n int
	if err := tx.QueryRow(ctx, countAssetsSQL, a.AccountID, a.Kind).Scan(&n); err != nil {
		return fmt.Errorf("count assets: %w", err)
	}
	if n >= limit {
		return periscope.Errorf(periscope.EQuotaExceeded, "This account has %d organization %s, its limit."+quotaContactHint, limit, what)
	}
	return nil
}
