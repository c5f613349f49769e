package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/periscope-oss/periscope/internal/asset"
	"github.com/periscope-oss/periscope/internal/periscope"
)

const orgColumns = `id, account_id, name, description, is_default, created_at`

func scanOrg(row interface{ Scan(...any) error }, o *periscope.Organization) error {
	var created int64
	err := row.Scan(&o.ID, &o.AccountID, &o.Name, &o.Description, &o.IsDefault, &created)
	o.CreatedAt = time.Unix(created, 0).UTC()
	return err
}

// CreateOrganization stores a new organization of an account. An account's
// first organization is its default.
func (s *Store) CreateOrganization(ctx context.Context, o *periscope.Organization) error {
	o.ID = uuid.NewString()
	now := s.Now().UTC().Truncate(time.Second)
	o.CreatedAt = now
	return s.Tx(ctx, func(tx *Tx) error {
		if err := checkOrganizationQuota(ctx, tx, o.AccountID); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM organizations WHERE account_id = ?`, o.AccountID).Scan(&n); err != nil {
			return fmt.Errorf("count organizations: %w", err)
		}
		o.IsDefault = n == 0
		_, err := tx.Exec(ctx, `INSERT INTO organizations (`+orgColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
			o.ID, o.AccountID, o.Name, o.Description, o.IsDefault, now.Unix())
		if err != nil {
			return fmt.Errorf("insert organization: %w", err)
		}
		return nil
	})
}

// Organizations lists an account's organizations, the default first.
func (s *Store) Organizations(ctx context.Context, accountID string) ([]periscope.Organization, error) {
	rows, err := s.query(ctx, `SELECT `+orgColumns+` FROM organizations WHERE account_id = ?
		ORDER BY is_default DESC, created_at, id`, accountID)
	if err != nil {
		return nil, fmt.Errorf("list organizations: %w", err)
	}
	defer rows.Close()
	out := []periscope.Organization{}
	for rows.Next() {
		var o periscope.Organization
		if err := scanOrg(rows, &o); err != nil {
			return nil, fmt.Errorf("list organizations: %w", err)
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// Organization returns an organization of the account. Another account's
// organization is not found, exactly like one that does not exist.
func (s *Store) Organization(ctx context.Context, accountID, orgID string) (periscope.Organization, error) {
	var o periscope.Organization
	if _, err := uuid.Parse(orgID); err != nil {
		return o, periscope.Errorf(periscope.ENotFound, "No organization %q.", periscope.Clip(orgID, 64))
	}
	err := scanOrg(s.queryRow(ctx, `SELECT `+orgColumns+` FROM organizations WHERE id = ? AND account_id = ?`, orgID, accountID), &o)
	if errors.Is(err, sql.ErrNoRows) {
		return o, periscope.Errorf(periscope.ENotFound, "No organization %q.", orgID)
	}
	if err != nil {
		return o, fmt.Errorf("read organization: %w", err)
	}
	return o, nil
}

// DeleteOrganization deletes an organization of the account with its assets
// (and, through the capabilities' foreign keys, its findings). The default
// organization cannot be deleted.
func (s *Store) DeleteOrganization(ctx context.Context, accountID, orgID string) error {
	o, err := s.Organization(ctx, accountID, orgID)
	if err != nil {
		return err
	}
	if o.IsDefault {
		return periscope.Errorf(periscope.EDefaultOrganization, "The default organization cannot be deleted.")
	}
	return s.Tx(ctx, func(tx *Tx) error {
		rows, err := tx.Query(ctx, `SELECT kind, value FROM org_assets WHERE organization_id = ?`, orgID)
		if err != nil {
			return fmt.Errorf("list assets: %w", err)
		}
		var assets [][2]string
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				rows.Close()
				return err
			}
			assets = append(assets, [2]string{k, v})
		}
		rows.Close()
		// The delete cascades into the brand tables, whose triggers update
		// per-account counters (brandstore migration 15): taking the brand
		// writers' turn keeps it from deadlocking with a findings upsert.
		if err := tx.Dialect().TakeTurns(ctx, tx, LockBrand); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM organizations WHERE id = ? AND account_id = ?`, orgID, accountID); err != nil {
			return fmt.Errorf("delete organization: %w", err)
		}
		for _, a := range assets {
			if err := releaseClaim(ctx, tx, accountID, a[0], a[1]); err != nil {
				return err
			}
		}
		return nil
	})
}

// AddAsset adds a normalised asset to an organization of the account. It
// reports whether the asset was new to the organization (adding it again is
// idempotent). An asset held by another account is a conflict; for IP ranges
// an overlapping range held by another account is one too.
func (s *Store) AddAsset(ctx context.Context, a periscope.Asset) (created bool, err error) {
	if _, err := s.Organization(ctx, a.AccountID, a.OrganizationID); err != nil {
		return false, err
	}
	now := s.Now().UTC().Truncate(time.Second)
	err = s.Tx(ctx, func(tx *Tx) error {
		// Claims take turns, so the overlap and quota checks and the
		// insert are one step: a claim of example.com and another
		// account's claim of shop.example.com at the same moment cannot
		// both pass the check.
		if err := tx.Dialect().TakeTurns(ctx, tx, LockClaims); err != nil {
			return err
		}
		if err := checkAssetQuota(ctx, tx, a); err != nil {
			return err
		}
		var owner string
		err := tx.QueryRow(ctx, `SELECT account_id FROM asset_claims WHERE kind = ? AND value = ?`, a.Kind, a.Value).Scan(&owner)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if a.Kind == periscope.AssetIPRange {
				if err := checkRangeOverlap(ctx, tx, a); err != nil {
					return err
				}
			}
			if a.Kind == periscope.AssetDomain {
				if err := checkDomainOverlap(ctx, tx, a); err != nil {
					return err
				}
			}
			if _, err := tx.Exec(ctx, `INSERT INTO asset_claims (kind, value, account_id) VALUES (?, ?, ?)`, a.Kind, a.Value, a.AccountID); err != nil {
				return fmt.Errorf("claim asset: %w", err)
			}
		case err != nil:
			return fmt.Errorf("read asset claim: %w", err)
		case owner != a.AccountID:
			return conflict(a)
		}
		res, err := tx.Exec(ctx, `INSERT INTO org_assets (organization_id, account_id, kind, value, created_at)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, a.OrganizationID, a.AccountID, a.Kind, a.Value, now.Unix())
		if err != nil {
			return fmt.Errorf("insert asset: %w", err)
		}
		n, _ := res.RowsAffected()
		created = n == 1
		return nil
	})
	if isUniqueViolation(err) {
		// Two accounts raced for the same claim; the other one won.
		return false, conflict(a)
	}
	return created, err
}

func conflict(a periscope.Asset) error {
	return periscope.Errorf(periscope.EConflict, "%s is already claimed by another account.", a.Value)
}

func checkRangeOverlap(ctx context.Context, tx *Tx, a periscope.Asset) error {
	rows, err := tx.Query(ctx, `SELECT value FROM asset_claims WHERE kind = ? AND account_id <> ?`, periscope.AssetIPRange, a.AccountID)
	if err != nil {
		return fmt.Errorf("list ranges: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return err
		}
		if asset.Overlap(v, a.Value) {
			return periscope.Errorf(periscope.EConflict, "%s overlaps %s, claimed by another account.", a.Value, v)
		}
	}
	return rows.Err()
}

// domainOverlapSQL finds another account's domain claim that is a parent
// of the new domain (one of the listed ancestors) or below it.
const domainOverlapSQL = `SELECT value FROM asset_claims WHERE kind = ? AND account_id <> ?
	AND (value IN (%s) OR value LIKE ? ESCAPE '\') LIMIT 1`

// checkDomainOverlap refuses a domain when another account claims a parent
// of it or a name below it: a domain claim covers its subdomains, so
// claiming www.example.com must not reach example.com's findings and
// certificates, and claiming example.com must not take over another
// account's shop.example.com.
func checkDomainOverlap(ctx context.Context, tx *Tx, a periscope.Asset) error {
	args := []any{periscope.AssetDomain, a.AccountID}
	marks := "NULL" // no ancestors: a top-level name
	labels := strings.Split(a.Value, ".")
	for i := 1; i < len(labels); i++ {
		if i == 1 {
			marks = "?"
		} else {
			marks += ", ?"
		}
		args = append(args, strings.Join(labels[i:], "."))
	}
	args = append(args, "%."+LikeEscape(a.Value))
	var other string
	err := tx.QueryRow(ctx, fmt.Sprintf(domainOverlapSQL, marks), args...).Scan(&other)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("check domain claims: %w", err)
	}
	return periscope.Errorf(periscope.EConflict, "%s overlaps %s, claimed by another account (a domain claim covers its subdomains).", a.Value, other)
}

// RemoveAsset removes an asset from an organization of the account.
func (s *Store) RemoveAsset(ctx context.Context, a periscope.Asset) error {
	if _, err := s.Organization(ctx, a.AccountID, a.OrganizationID); err != nil {
		return err
	}
	return s.Tx(ctx, func(tx *Tx) error {
		res, err := tx.Exec(ctx, `DELETE FROM org_assets WHERE organization_id = ? AND account_id = ? AND kind = ? AND value = ?`,
			a.OrganizationID, a.AccountID, a.Kind, a.Value)
		if err != nil {
			return fmt.Errorf("delete asset: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return periscope.Errorf(periscope.ENotFound, "%s is not an asset of this organization.", a.Value)
		}
		return releaseClaim(ctx, tx, a.AccountID, a.Kind, a.Value)
	})
}

// releaseClaim drops the account's claim on an asset once none of its
// organizations holds it.
func releaseClaim(ctx context.Context, tx *Tx, accountID, kind, value string) error {
	_, err := tx.Exec(ctx, `DELETE FROM asset_claims WHERE kind = ? AND value = ? AND account_id = ?
		AND NOT EXISTS (SELECT 1 FROM org_assets WHERE kind = ? AND value = ? AND account_id = ?)`,
		kind, value, accountID, kind, value, accountID)
	if err != nil {
		return fmt.Errorf("release claim: %w", err)
	}
	return nil
}

// Assets lists the assets of an organization of the account.
func (s *Store) Assets(ctx context.Context, accountID, orgID string) ([]periscope.Asset, error) {
	rows, err := s.query(ctx, `SELECT organization_id, account_id, kind, value, created_at FROM org_assets
		WHERE organization_id = ? AND account_id = ? ORDER BY kind, value`, orgID, accountID)
	if err != nil {
		return nil, fmt.Errorf("list assets: %w", err)
	}
	defer rows.Close()
	out := []periscope.Asset{}
	for rows.Next() {
		var a periscope.Asset
		var created int64
		if err := rows.Scan(&a.OrganizationID, &a.AccountID, &a.Kind, &a.Value, &created); err != nil {
			return nil, err
		}
		a.CreatedAt = time.Unix(created, 0).UTC()
		out = append(out, a)
	}
	return out, rows.Err()
}

// AllAssets lists every asset of one kind across all accounts, for the
// monitors that match incoming data against organizations.
func (s *Store) AllAssets(ctx context.Context, kind string) ([]periscope.Asset, error) {
	rows, err := s.query(ctx, `SELECT organization_id, account_id, kind, value, created_at FROM org_assets
		WHERE kind = ? ORDER BY value, organization_id`, kind)
	if err != nil {
		return nil, fmt.Errorf("list assets: %w", err)
	}
	defer rows.Close()
	out := []periscope.Asset{}
	for rows.Next() {
		var a periscope.Asset
		var created int64
		if err := rows.Scan(&a.OrganizationID, &a.AccountID, &a.Kind, &a.Value, &created); err != nil {
			return nil, err
		}
		a.CreatedAt = time.Unix(created, 0).UTC()
		out = append(out, a)
	}
	return out, rows.Err()
}

// NotClaimedByOther is the condition that keeps out of
// what account (an SQL expression: "?", then NotClaimedByOtherArgs, or a
// column) is shown a row whose name (an SQL expression: a finding's domain
// or base domain, a certificate's covered name) is another account's
// claimed domain or below one. Where claims nest (AddAsset refuses that
// now; older rows may), the topmost claim decides: a domain claim covers
// its subdomains, so the parent's owner wins. The claims are found by
// walking up the name's labels, one primary-key look-up a label, whatever
// the number of claims.
func NotClaimedByOther(d Dialect, name, account string) string {
	walk := fmt.Sprintf(`COALESCE((WITH RECURSIVE up(n) AS (SELECT %[1]s UNION ALL
		SELECT SUBSTR(n, %[3]s + 1) FROM up WHERE %[3]s > 0)
		SELECT c.account_id FROM up JOIN asset_claims c ON c.kind = '%[4]s' AND c.value = up.n
		ORDER BY LENGTH(up.n) LIMIT 1), %[2]s) = %[2]s`, name, account, d.strpos("n", "'.'"), periscope.AssetDomain)
	if account != "?" {
		return walk
	}
	// For one account: no walk at all while no other account claims a
	// domain (the check is computed once a statement).
	return fmt.Sprintf(`(NOT EXISTS (SELECT 1 FROM asset_claims o WHERE o.kind = '%s' AND o.account_id <> ?) OR %s)`,
		periscope.AssetDomain, walk)
}

// NotClaimedByOtherArgs are the arguments of NotClaimedByOther(d, name, "?").
func NotClaimedByOtherArgs(accountID string) []any {
	return []any{accountID, accountID, accountID}
}
