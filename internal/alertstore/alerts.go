package alertstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
)

// Alert states. IsSeen on the wire is "not open".
const (
	StateOpen         = "open"
	StateAcknowledged = "acknowledged"
	StateResolved     = "resolved"
	StateSuppressed   = "suppressed"
)

// Alert is one deduplicated alert of an organization.
type Alert struct {
	ID             string
	AccountID      string
	OrganizationID string
	Type           string
	Severity       string
	Title          string
	Message        string
	Evidence       json.RawMessage
	Host           string
	Domain         string
	Fingerprint    string
	Count          int64
	FirstSeen      int64
	LastSeen       int64
	State          string
}

const alertColumns = `id, account_id, organization_id, type, severity, title, message, evidence, host, domain,
	fingerprint, count, first_seen, last_seen, state`

func scanAlert(r interface{ Scan(...any) error }, a *Alert) error {
	var ev string
	err := r.Scan(&a.ID, &a.AccountID, &a.OrganizationID, &a.Type, &a.Severity, &a.Title, &a.Message, &ev,
		&a.Host, &a.Domain, &a.Fingerprint, &a.Count, &a.FirstSeen, &a.LastSeen, &a.State)
	a.Evidence = json.RawMessage(ev)
	return err
}

const (
	selectAlertByFingerprint = `SELECT ` + alertColumns + ` FROM alerts WHERE account_id = ? AND fingerprint = ?`
	insertAlert              = `INSERT INTO alerts (` + alertColumns + `, state_changed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	// A repeat grows count and last_seen and refreshes the evidence; a
	// resolved alert that happens again is open again.
	updateAlertRepeat = `UPDATE alerts SET count = count + 1, last_seen = ?, title = ?, message = ?, evidence = ?,
		state = ? WHERE id = ?`
	reopenAlert = `UPDATE alerts SET count = count + 1, last_seen = ?, title = ?, message = ?, evidence = ?,
		state = ?, state_changed_at = ? WHERE id = ?`
)

// UpsertAlert stores a (at its LastSeen time) in tx: a new fingerprint is a
// new open alert; a known one grows count and last_seen. notify reports
// whether the alert is news to deliver: new, or a resolved one reopened
// (acknowledged and suppressed alerts repeat silently).
func (s *Store) UpsertAlert(ctx context.Context, tx *store.Tx, a *Alert) (notify bool, err error) {
	var old Alert
	err = scanAlert(tx.QueryRow(ctx, selectAlertByFingerprint, a.AccountID, a.Fingerprint), &old)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		a.ID, a.Count, a.FirstSeen, a.State = uuid.NewString(), 1, a.LastSeen, StateOpen
		if len(a.Evidence) == 0 {
			a.Evidence = json.RawMessage(`{}`)
		}
		if _, err := tx.Exec(ctx, insertAlert, a.ID, a.AccountID, a.OrganizationID, a.Type, a.Severity, a.Title, a.Message,
			string(a.Evidence), a.Host, a.Domain, a.Fingerprint, a.Count, a.FirstSeen, a.LastSeen, a.State, a.LastSeen); err != nil {
			return false, fmt.Errorf("insert alert: %w", err)
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("find alert: %w", err)
	}
	state, q, args := old.State, updateAlertRepeat, []any{a.LastSeen, a.Title, a.Message, string(a.Evidence), old.State, old.ID}
	reopened := old.State == StateResolved
	if reopened {
		state, q = StateOpen, reopenAlert
		args = []any{a.LastSeen, a.Title, a.Message, string(a.Evidence), state, a.LastSeen, old.ID}
	}
	if _, err := tx.Exec(ctx, q, args...); err != nil {
		return false, fmt.Errorf("repeat alert: %w", err)
	}
	a.ID, a.Count, a.FirstSeen, a.State = old.ID, old.Count+1, old.FirstSeen, state
	return reopened, nil
}

// AlertQuery selects an account's alerts, newest first.
type AlertQuery struct {
	AccountID      string
	OrganizationID string // "" = every organization of the account
	Type           string
	Severity       string
	State          string
	From, To       int64 // on last_seen, inclusive; 0 = open
	Limit, Offset  int
}

const selectAlerts = `SELECT ` + alertColumns + ` FROM alerts WHERE account_id = ?`

// Alerts lists alerts.
func (s *Store) Alerts(ctx context.Context, q AlertQuery) ([]Alert, error) {
	var where strings.Builder
	args := []any{q.AccountID}
	for _, f := range []struct {
		col string
		v   string
	}{{"organization_id", q.OrganizationID}, {"type", q.Type}, {"severity", q.Severity}, {"state", q.State}} {
		if f.v != "" {
			where.WriteString(` AND ` + f.col + ` = ?`)
			args = append(args, f.v)
		}
	}
	if q.From > 0 {
		where.WriteString(` AND last_seen >= ?`)
		args = append(args, q.From)
	}
	if q.To > 0 {
		where.WriteString(` AND last_seen <= ?`)
		args = append(args, q.To)
	}
	rows, err := s.db.DB().QueryContext(ctx, s.db.Rebind(selectAlerts+where.String()+` ORDER BY last_seen DESC, id LIMIT ? OFFSET ?`),
		append(args, q.Limit, q.Offset)...)
	if err != nil {
		return nil, fmt.Errorf("list alerts: %w", err)
	}
	defer rows.Close()
	out := []Alert{}
	for rows.Next() {
		var a Alert
		if err := scanAlert(rows, &a); err != nil {
			return nil, fmt.Errorf("list alerts: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

const (
	selectAccountAlert = `SELECT ` + alertColumns + ` FROM alerts WHERE id = ? AND account_id = ?`
	updateAlertState   = `UPDATE alerts SET state = ?, state_changed_at = ? WHERE id = ? AND account_id = ?`
)

// SetState moves an account's alert to state. Another account's alert is
// the same not-found as an unknown id.
func (s *Store) SetState(ctx context.Context, accountID, id, state string) (Alert, error) {
	var a Alert
	err := s.db.Tx(ctx, func(tx *store.Tx) error {
		res, err := tx.Exec(ctx, updateAlertState, state, s.db.Now().Unix(), id, accountID)
		if err != nil {
			return fmt.Errorf("set alert state: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return periscope.Errorf(periscope.ENotFound, "No alert with this id.")
		}
		if err := scanAlert(tx.QueryRow(ctx, selectAccountAlert, id, accountID), &a); err != nil {
			return fmt.Errorf("read alert: %w", err)
		}
		return nil
	})
	return a, err
}

const (
	insertCheckpoint = `INSERT INTO alert_checkpoints (name, position) VALUES (?, 0) ON CONFLICT (name) DO NOTHING`
	leaseCheckpoint  = `UPDATE alert_checkpoints SET holder = ?, leased_until = ? WHERE name = ? AND (leased_until < ? OR holder = ?)`
	selectCheckpoint = `SELECT position FROM alert_checkpoints WHERE name = ?`
	saveCheckpoint   = `UPDATE alert_checkpoints SET position = ? WHERE name = ? AND holder = ?`
)

// LeaseCheckpoint takes (or renews) the named job for holder until the
// Unix time until, and returns its position; ok is false while another
// holder's lease runs. This is how a job runs once across instances.
func (s *Store) LeaseCheckpoint(ctx context.Context, name, holder string, now, until int64) (pos int64, ok bool, err error) {
	err = s.db.Tx(ctx, func(tx *store.Tx) error {
		if _, err := tx.Exec(ctx, insertCheckpoint, name); err != nil {
			return fmt.Errorf("create checkpoint %s: %w", name, err)
		}
		res, err := tx.Exec(ctx, leaseCheckpoint, holder, until, name, now, holder)
		if err != nil {
			return fmt.Errorf("lease checkpoint %s: %w", name, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		ok = true
		return tx.QueryRow(ctx, selectCheckpoint, name).Scan(&pos)
	})
	return pos, ok, err
}

// SaveCheckpoint moves the named job's position in tx, so the work done up
// to pos and the position commit together. It fails when holder lost the
// lease (another instance took over): the caller's work rolls back.
func (s *Store) SaveCheckpoint(ctx context.Context, tx *store.Tx, name, holder string, pos int64) error {
	res, err := tx.Exec(ctx, saveCheckpoint, pos, name, holder)
	if err != nil {
		return fmt.Errorf("save checkpoint %s: %w", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("save checkpoint %s: lease lost", name)
	}
	return nil
}

const (
	selectBaseline = `SELECT started_at FROM alert_baselines WHERE organization_id = ? AND asset = ?`
	insertBaseline = `INSERT INTO alert_baselines (organization_id, asset, started_at) VALUES (?, ?, ?)`
)

// Baseline returns when the organization's asset first had data, starting
// its baseline at ts when it never had.
func (s *Store) Baseline(ctx context.Context, tx *store.Tx, orgID, asset string, ts int64) (int64, error) {
	var started int64
	err := tx.QueryRow(ctx, selectBaseline, orgID, asset).Scan(&started)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := tx.Exec(ctx, insertBaseline, orgID, asset, ts); err != nil {
			return 0, fmt.Errorf("start baseline: %w", err)
		}
		return ts, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read baseline: %w", err)
	}
	return started, nil
}

// Alert returns one of an account's alerts. Another account's alert is the
// same not-found as an unknown id.
func (s *Store) Alert(ctx context.Context, accountID, id string) (Alert, error) {
	var a Alert
	err := scanAlert(s.db.QueryRow(ctx, selectAccountAlert, id, accountID), &a)
	if errors.Is(err, sql.ErrNoRows) {
		return a, periscope.Errorf(periscope.ENotFound, "No alert with this id.")
	}
	if err != nil {
		return a, fmt.Errorf("read alert: %w", err)
	}
	return a, nil
}
