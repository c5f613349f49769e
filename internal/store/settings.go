package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Names of the installation settings (the settings table).
const (
	// SettingSyncInterval is the vulnerability feeds' sync interval that
	// `periscope init` chose, as a Go duration ("6h"; "0" turns it off).
	SettingSyncInterval = "sync_interval"
)

const (
	selectSetting = `SELECT value FROM settings WHERE name = ?`
	upsertSetting = `INSERT INTO settings (name, value, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`
)

// Setting returns the value of the installation setting name; ok is false
// when it was never set.
func (s *Store) Setting(ctx context.Context, name string) (value string, ok bool, err error) {
	err = s.QueryRow(ctx, selectSetting, name).Scan(&value)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read setting %s: %w", name, err)
	}
	return value, true, nil
}

// SetSetting stores the installation setting name.
func (s *Store) SetSetting(ctx context.Context, name, value string) error {
	if _, err := s.Exec(ctx, upsertSetting, name, value, s.Now().Unix()); err != nil {
		return fmt.Errorf("store setting %s: %w", name, err)
	}
	return nil
}
