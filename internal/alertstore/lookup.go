package alertstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// AlertByFingerprint returns an account's alert with fingerprint fp; ok is
// false when there is none. Rules that accumulate evidence over repeats
// (vulnerabilities, compromised credentials) read the standing alert.
func (s *Store) AlertByFingerprint(ctx context.Context, accountID, fp string) (a Alert, ok bool, err error) {
	err = scanAlert(s.db.DB().QueryRowContext(ctx, s.db.Rebind(selectAlertByFingerprint), accountID, fp), &a)
	if errors.Is(err, sql.ErrNoRows) {
		return a, false, nil
	}
	if err != nil {
		return a, false, fmt.Errorf("find alert: %w", err)
	}
	return a, true, nil
}

// CheckpointPosition returns the named job's position (0 when it never ran).
func (s *Store) CheckpointPosition(ctx context.Context, name string) (int64, error) {
	var pos int64
	err := s.db.DB().QueryRowContext(ctx, s.db.Rebind(selectCheckpoint), name).Scan(&pos)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return pos, err
}

// BaselineStarted returns when the organization's asset first had data;
// ok is false when it never had (its baseline has not started).
func (s *Store) BaselineStarted(ctx context.Context, orgID, asset string) (started int64, ok bool, err error) {
	err = s.db.DB().QueryRowContext(ctx, s.db.Rebind(selectBaseline), orgID, asset).Scan(&started)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read baseline: %w", err)
	}
	return started, true, nil
}
