package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/periscope-oss/periscope/internal/periscope"
)

// AssetSettings are the settings of one organization asset: whether
// scheduled active monitoring scans it, whether its changes raise alerts,
// and FullHunt's community-platform redaction (kept, with no effect here).
type AssetSettings struct {
	ContinuousScans bool
	Notifications   bool
	Redacted        bool
}

// DefaultAssetSettings are an asset's settings until they are set.
var DefaultAssetSettings = AssetSettings{ContinuousScans: true, Notifications: true}

// settingsApply is the condition under which a settings row s belongs to
// the asset row a (set since the asset was added).
const settingsApply = `s.organization_id = a.organization_id AND s.kind = a.kind AND s.value = a.value AND s.updated_at >= a.created_at`

const upsertAssetSettings = `INSERT INTO asset_settings (organization_id, kind, value, continuous_scans, notifications, redacted, updated_at)
	VALUES (?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (organization_id, kind, value) DO UPDATE SET continuous_scans = excluded.continuous_scans,
	notifications = excluded.notifications, redacted = excluded.redacted, updated_at = excluded.updated_at`

const selectAssetSettings = `SELECT s.continuous_scans, s.notifications, s.redacted FROM org_assets a
	JOIN asset_settings s ON ` + settingsApply + `
	WHERE a.organization_id = ? AND a.account_id = ? AND a.kind = ? AND a.value = ?`

// AssetSettings returns the settings of an asset of the account's
// organization (the defaults when never set); not found when the asset is
// not one of the organization's.
func (s *Store) AssetSettings(ctx context.Context, a periscope.Asset) (AssetSettings, error) {
	if err := s.assetExists(ctx, a); err != nil {
		return AssetSettings{}, err
	}
	var c, n, r bool
	err := s.db.QueryRowContext(ctx, s.Rebind(selectAssetSettings), a.OrganizationID, a.AccountID, a.Kind, a.Value).Scan(&c, &n, &r)
	if errors.Is(err, sql.ErrNoRows) {
		return DefaultAssetSettings, nil
	}
	if err != nil {
		return AssetSettings{}, fmt.Errorf("read settings of %s: %w", a.Value, err)
	}
	return AssetSettings{ContinuousScans: c, Notifications: n, Redacted: r}, nil
}

// SetAssetSettings stores the settings of an asset of the account's
// organization; not found when the asset is not one of the organization's.
func (s *Store) SetAssetSettings(ctx context.Context, a periscope.Asset, set AssetSettings) error {
	if err := s.assetExists(ctx, a); err != nil {
		return err
	}
	if _, err := s.Exec(ctx, upsertAssetSettings, a.OrganizationID, a.Kind, a.Value, set.ContinuousScans, set.Notifications, set.Redacted, s.Now().Unix()); err != nil {
		return fmt.Errorf("store settings of %s: %w", a.Value, err)
	}
	return nil
}

const selectAssetCreatedAt = `SELECT created_at FROM org_assets WHERE organization_id = ? AND account_id = ? AND kind = ? AND value = ?`

func (s *Store) assetExists(ctx context.Context, a periscope.Asset) error {
	var created int64
	err := s.db.QueryRowContext(ctx, s.Rebind(selectAssetCreatedAt), a.OrganizationID, a.AccountID, a.Kind, a.Value).Scan(&created)
	if errors.Is(err, sql.ErrNoRows) {
		return periscope.Errorf(periscope.ENotFound, "%s is not an asset of this organization.", periscope.Clip(a.Value, 64))
	}
	if err != nil {
		return fmt.Errorf("find asset %s: %w", a.Value, err)
	}
	return nil
}

const selectNotifiedAssets = `SELECT a.organization_id, a.account_id, a.kind, a.value, a.created_at FROM org_assets a
	WHERE a.kind = ? AND NOT EXISTS (SELECT 1 FROM asset_settings s WHERE ` + settingsApply + ` AND s.notifications = ?)
	ORDER BY a.value, a.organization_id`

// NotifiedAssets is AllAssets without the assets whose notifications are
// off: what the alert rules match changes against.
func (s *Store) NotifiedAssets(ctx context.Context, kind string) ([]periscope.Asset, error) {
	rows, err := s.db.QueryContext(ctx, s.Rebind(selectNotifiedAssets), kind, false)
	if err != nil {
		return nil, fmt.Errorf("list notified assets: %w", err)
	}
	defer rows.Close()
	out := []periscope.Asset{}
	for rows.Next() {
		var a periscope.Asset
		var created int64
		if err := rows.Scan(&a.OrganizationID, &a.AccountID, &a.Kind, &a.Value, &created); err != nil {
			return nil, fmt.Errorf("list notified assets: %w", err)
		}
		a.CreatedAt = time.Unix(created, 0).UTC()
		out = append(out, a)
	}
	return out, rows.Err()
}

const moveAsset = `UPDATE org_assets SET organization_id = ? WHERE organization_id = ? AND account_id = ? AND kind = ? AND value = ?`

// MoveAsset moves an asset of the account from one of its organizations to
// another (both the account's; not found otherwise). Its settings move
// with it; a verification or authorisation stays with the organization
// that proved it, so active monitoring needs it again.
func (s *Store) MoveAsset(ctx context.Context, a periscope.Asset, toOrgID string) error {
	if _, err := s.Organization(ctx, a.AccountID, toOrgID); err != nil {
		return err
	}
	return s.Tx(ctx, func(tx *Tx) error {
		res, err := tx.Exec(ctx, moveAsset, toOrgID, a.OrganizationID, a.AccountID, a.Kind, a.Value)
		if err != nil {
			return fmt.Errorf("move %s: %w", a.Value, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return periscope.Errorf(periscope.ENotFound, "%s is not an asset of this organization.", periscope.Clip(a.Value, 64))
		}
		if _, err := tx.Exec(ctx, `UPDATE asset_settings SET organization_id = ? WHERE organization_id = ? AND kind = ? AND value = ?`,
			toOrgID, a.OrganizationID, a.Kind, a.Value); err != nil {
			return fmt.Errorf("move settings of %s: %w", a.Value, err)
		}
		return nil
	})
}
