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

// Endpoint statuses.
const (
	EndpointActive   = "active"
	EndpointFailing  = "failing"  // deliveries are being retried
	EndpointDisabled = "disabled" // a delivery failed for 24 h, or the owner disabled it
)

// Endpoint is a webhook endpoint of an organization. Secret and
// PreviousSecret are signing keys: shown once at creation or rotation,
// never listed, never logged.
type Endpoint struct {
	ID             string
	AccountID      string
	OrganizationID string
	URL            string
	Format         string // "json", "slack" or "teams"
	Secret         string
	PreviousSecret string // still signs until PreviousUntil (rotation)
	PreviousUntil  int64
	MinSeverity    string
	Types          []string // alert types; empty = all
	Status         string
	Failures       int64
	LastError      string
	LastDeliveryAt int64
	DisabledAt     int64
	CreatedAt      int64
	UpdatedAt      int64
}

// String keeps secrets out of logs and %v.
func (e Endpoint) String() string { return fmt.Sprintf("webhook endpoint %s (%s)", e.ID, e.URL) }

const endpointColumns = `id, account_id, organization_id, url, format, secret, previous_secret, previous_until,
	min_severity, types, status, failures, last_error, last_delivery_at, disabled_at, created_at, updated_at`

// scanEndpoint reads an endpoint row, opening its sealed secrets.
func (s *Store) scanEndpoint(r interface{ Scan(...any) error }, e *Endpoint) error {
	return s.scanEndpointSecrets(r, e, true)
}

// scanEndpointSecrets reads an endpoint row; without open its secrets are
// left out (blank).
func (s *Store) scanEndpointSecrets(r interface{ Scan(...any) error }, e *Endpoint, open bool) error {
	var types string
	err := r.Scan(&e.ID, &e.AccountID, &e.OrganizationID, &e.URL, &e.Format, &e.Secret, &e.PreviousSecret, &e.PreviousUntil,
		&e.MinSeverity, &types, &e.Status, &e.Failures, &e.LastError, &e.LastDeliveryAt, &e.DisabledAt, &e.CreatedAt, &e.UpdatedAt)
	if err == nil {
		err = json.Unmarshal([]byte(types), &e.Types)
	}
	if err == nil && open {
		err = s.openSecrets(e.ID, &e.Secret, &e.PreviousSecret)
	}
	if !open {
		e.Secret, e.PreviousSecret = "", ""
	}
	return err
}

func typesJSON(t []string) string {
	if t == nil {
		t = []string{}
	}
	b, _ := json.Marshal(t)
	return string(b)
}

const insertEndpoint = `INSERT INTO webhook_endpoints (` + endpointColumns + `, secret_key_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// SQL of the endpoint cap. The no-op UPDATE takes the organization's row
// lock (PostgreSQL; SQLite's writers take turns anyway), so concurrent
// creations are counted one after the other and never pass the cap
// together.
const (
	lockOrganization  = `UPDATE organizations SET name = name WHERE id = ?`
	countOrgEndpoints = `SELECT COUNT(*) FROM webhook_endpoints WHERE organization_id = ?`
)

// CreateEndpoint stores e (its organization already checked to be the
// account's), giving it an id. Its secrets are stored sealed. An
// organization holding EndpointLimit endpoints gets no more (403
// quota_exceeded).
func (s *Store) CreateEndpoint(ctx context.Context, e *Endpoint) error {
	now := s.db.Now().Unix()
	e.ID, e.Status, e.CreatedAt, e.UpdatedAt = uuid.NewString(), EndpointActive, now, now
	secret, prev, err := s.sealEndpoint(e)
	if err != nil {
		return fmt.Errorf("insert webhook endpoint: %w", err)
	}
	return s.db.Tx(ctx, func(tx *store.Tx) error {
		if _, err := tx.Exec(ctx, lockOrganization, e.OrganizationID); err != nil {
			return fmt.Errorf("lock organization for its webhook endpoints: %w", err)
		}
		var n int
		if err := tx.QueryRow(ctx, countOrgEndpoints, e.OrganizationID).Scan(&n); err != nil {
			return fmt.Errorf("count webhook endpoints: %w", err)
		}
		if limit := s.endpointLimit(); n >= limit {
			return periscope.Errorf(periscope.EQuotaExceeded, "This organization has %d webhook endpoints, the server's limit; delete one first.", limit)
		}
		_, err = tx.Exec(ctx, insertEndpoint, e.ID, e.AccountID, e.OrganizationID, e.URL, e.Format,
			secret, prev, e.PreviousUntil, e.MinSeverity, typesJSON(e.Types), e.Status, e.Failures, e.LastError,
			e.LastDeliveryAt, e.DisabledAt, e.CreatedAt, e.UpdatedAt, s.secrets.ID())
		if err != nil {
			return fmt.Errorf("insert webhook endpoint: %w", err)
		}
		return nil
	})
}

const (
	selectOrgEndpoints = `SELECT ` + endpointColumns + ` FROM webhook_endpoints WHERE account_id = ? AND organization_id = ? ORDER BY created_at, id`
	selectEndpoint     = `SELECT ` + endpointColumns + ` FROM webhook_endpoints WHERE id = ? AND account_id = ? AND organization_id = ?`
)

// Endpoints lists an organization's endpoints.
func (s *Store) Endpoints(ctx context.Context, accountID, orgID string) ([]Endpoint, error) {
	rows, err := s.db.DB().QueryContext(ctx, s.db.Rebind(selectOrgEndpoints), accountID, orgID)
	if err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	defer rows.Close()
	out := []Endpoint{}
	for rows.Next() {
		var e Endpoint
		if err := s.scanEndpoint(rows, &e); err != nil {
			return nil, fmt.Errorf("list webhook endpoints: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// Endpoint returns one endpoint of an account's organization; any other is
// not found.
func (s *Store) Endpoint(ctx context.Context, accountID, orgID, id string) (Endpoint, error) {
	var e Endpoint
	err := s.scanEndpoint(s.db.DB().QueryRowContext(ctx, s.db.Rebind(selectEndpoint), id, accountID, orgID), &e)
	if errors.Is(err, sql.ErrNoRows) {
		return e, periscope.Errorf(periscope.ENotFound, "No webhook endpoint with this id.")
	}
	if err != nil {
		return e, fmt.Errorf("read webhook endpoint: %w", err)
	}
	return e, nil
}

const updateEndpoint = `UPDATE webhook_endpoints SET url = ?, format = ?, secret = ?, previous_secret = ?, previous_until = ?,
	min_severity = ?, types = ?, status = ?, failures = ?, disabled_at = ?, updated_at = ?, secret_key_id = ? WHERE id = ? AND account_id = ?`

// UpdateEndpoint writes e's settings, secrets (sealed) and status.
func (s *Store) UpdateEndpoint(ctx context.Context, e *Endpoint) error {
	e.UpdatedAt = s.db.Now().Unix()
	secret, prev, err := s.sealEndpoint(e)
	if err != nil {
		return fmt.Errorf("update webhook endpoint: %w", err)
	}
	_, err = s.db.DB().ExecContext(ctx, s.db.Rebind(updateEndpoint), e.URL, e.Format, secret, prev, e.PreviousUntil,
		e.MinSeverity, typesJSON(e.Types), e.Status, e.Failures, e.DisabledAt, e.UpdatedAt, s.secrets.ID(), e.ID, e.AccountID)
	if err != nil {
		return fmt.Errorf("update webhook endpoint: %w", err)
	}
	return nil
}

const deleteEndpoint = `DELETE FROM webhook_endpoints WHERE id = ? AND account_id = ? AND organization_id = ?`

// DeleteEndpoint removes an endpoint and its pending deliveries.
func (s *Store) DeleteEndpoint(ctx context.Context, accountID, orgID, id string) error {
	res, err := s.db.DB().ExecContext(ctx, s.db.Rebind(deleteEndpoint), id, accountID, orgID)
	if err != nil {
		return fmt.Errorf("delete webhook endpoint: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return periscope.Errorf(periscope.ENotFound, "No webhook endpoint with this id.")
	}
	return nil
}

const selectLiveEndpoints = `SELECT ` + endpointColumns + ` FROM webhook_endpoints WHERE organization_id = ? AND status <> 'disabled'
	ORDER BY created_at, id LIMIT ?`

// LiveEndpoints lists an organization's endpoints that take deliveries, in
// the caller's transaction, without their secrets (the dispatcher reads
// them when it leases a delivery): the oldest EndpointLimit, so one alert
// makes at most that many deliveries, even for an organization that had
// more endpoints before the cap.
func (s *Store) LiveEndpoints(ctx context.Context, tx *store.Tx, orgID string) ([]Endpoint, error) {
	rows, err := tx.Query(ctx, selectLiveEndpoints, orgID, s.endpointLimit())
	if err != nil {
		return nil, fmt.Errorf("list live webhook endpoints: %w", err)
	}
	defer rows.Close()
	var out []Endpoint
	for rows.Next() {
		var e Endpoint
		if err := s.scanEndpointSecrets(rows, &e, false); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// Delivery is one message to one endpoint in the outbox. Its ID is the
// webhook-id header: the same on every attempt, so a receiver deduplicates.
type Delivery struct {
	ID            string
	EndpointID    string
	AlertID       string
	Event         string
	Payload       []byte
	Attempts      int64
	CreatedAt     int64
	NextAttemptAt int64
	DeliveredAt   int64
	FailedAt      int64
	LastStatus    int64
	LastError     string
	// Of the endpoint, when leased:
	URL     string
	Secrets []string
}

// String keeps the endpoint's secrets and URL out of logs and %v.
func (d Delivery) String() string {
	return fmt.Sprintf("webhook delivery %s to endpoint %s", d.ID, d.EndpointID)
}

const insertDelivery = `INSERT INTO webhook_outbox (id, endpoint_id, alert_id, event, payload, created_at, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?, ?)`

// Enqueue adds a delivery in tx (with the alert it announces, so neither is
// stored without the other), due at once.
func (s *Store) Enqueue(ctx context.Context, tx *store.Tx, d *Delivery) error {
	d.ID = "msg_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	d.CreatedAt = s.db.Now().Unix()
	d.NextAttemptAt = d.CreatedAt
	if _, err := tx.Exec(ctx, insertDelivery, d.ID, d.EndpointID, d.AlertID, d.Event, string(d.Payload), d.CreatedAt, d.NextAttemptAt); err != nil {
		return fmt.Errorf("enqueue webhook delivery: %w", err)
	}
	return nil
}

const (
	selectDue = `SELECT o.id FROM webhook_outbox o WHERE o.delivered_at = 0 AND o.failed_at = 0
		AND o.next_attempt_at <= ? AND o.leased_until <= ? ORDER BY o.next_attempt_at, o.created_at LIMIT ?`
	leaseDelivery   = `UPDATE webhook_outbox SET leased_until = ? WHERE id = ?`
	selectLeasedRow = `SELECT o.id, o.endpoint_id, o.alert_id, o.event, o.payload, o.attempts, o.created_at, o.next_attempt_at,
		e.url, e.secret, e.previous_secret, e.previous_until
		FROM webhook_outbox o JOIN webhook_endpoints e ON e.id = o.endpoint_id WHERE o.id = ?`
)

// Lease takes up to n due deliveries until the Unix time until: another
// worker (another instance on PostgreSQL) skips them until the lease ends,
// so a crashed worker's deliveries are retried, never lost.
func (s *Store) Lease(ctx context.Context, n int, until int64) ([]Delivery, error) {
	now := s.db.Now().Unix()
	var out []Delivery
	err := s.db.Tx(ctx, func(tx *store.Tx) error {
		rows, err := tx.Query(ctx, selectDue+s.skipLocked(), now, now, n)
		if err != nil {
			return fmt.Errorf("find due deliveries: %w", err)
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, id := range ids {
			if _, err := tx.Exec(ctx, leaseDelivery, until, id); err != nil {
				return fmt.Errorf("lease delivery: %w", err)
			}
			var d Delivery
			var payload, secret, prev string
			var prevUntil int64
			if err := tx.QueryRow(ctx, selectLeasedRow, id).Scan(&d.ID, &d.EndpointID, &d.AlertID, &d.Event, &payload, &d.Attempts,
				&d.CreatedAt, &d.NextAttemptAt, &d.URL, &secret, &prev, &prevUntil); err != nil {
				return fmt.Errorf("read leased delivery: %w", err)
			}
			if err := s.openSecrets(d.EndpointID, &secret, &prev); err != nil {
				return err
			}
			d.Payload, d.Secrets = []byte(payload), []string{secret}
			if prev != "" && prevUntil > now {
				d.Secrets = append(d.Secrets, prev)
			}
			out = append(out, d)
		}
		return nil
	})
	return out, err
}

const (
	markDelivered   = `UPDATE webhook_outbox SET delivered_at = ?, attempts = attempts + 1, last_status = ?, last_error = '', leased_until = 0 WHERE id = ?`
	markEndpointOK  = `UPDATE webhook_endpoints SET status = CASE WHEN status = 'disabled' THEN status ELSE 'active' END, failures = 0, last_error = '', last_delivery_at = ? WHERE id = ?`
	markRetry       = `UPDATE webhook_outbox SET attempts = attempts + 1, next_attempt_at = ?, last_status = ?, last_error = ?, leased_until = 0 WHERE id = ?`
	markGaveUp      = `UPDATE webhook_outbox SET attempts = attempts + 1, failed_at = ?, last_status = ?, last_error = ?, leased_until = 0 WHERE id = ?`
	markEndpointBad = `UPDATE webhook_endpoints SET status = CASE WHEN status = 'disabled' THEN status ELSE 'failing' END, failures = failures + 1, last_error = ? WHERE id = ?`
	disableEndpoint = `UPDATE webhook_endpoints SET status = 'disabled', disabled_at = ?, failures = failures + 1, last_error = ? WHERE id = ?`
)

// Delivered records a successful attempt.
func (s *Store) Delivered(ctx context.Context, d Delivery, status int) error {
	now := s.db.Now().Unix()
	return s.db.Tx(ctx, func(tx *store.Tx) error {
		if _, err := tx.Exec(ctx, markDelivered, now, status, d.ID); err != nil {
			return fmt.Errorf("mark delivered: %w", err)
		}
		if _, err := tx.Exec(ctx, markEndpointOK, now, d.EndpointID); err != nil {
			return fmt.Errorf("mark endpoint ok: %w", err)
		}
		return nil
	})
}

// Failed records a failed attempt: retried at next, or, when next is 0
// (retries exhausted), given up with the endpoint disabled.
func (s *Store) Failed(ctx context.Context, d Delivery, status int, reason string, next int64) error {
	now := s.db.Now().Unix()
	reason = periscope.Clip(reason, 300)
	return s.db.Tx(ctx, func(tx *store.Tx) error {
		if next == 0 {
			if _, err := tx.Exec(ctx, markGaveUp, now, status, reason, d.ID); err != nil {
				return fmt.Errorf("give up delivery: %w", err)
			}
			if _, err := tx.Exec(ctx, disableEndpoint, now, reason, d.EndpointID); err != nil {
				return fmt.Errorf("disable endpoint: %w", err)
			}
			return nil
		}
		if _, err := tx.Exec(ctx, markRetry, next, status, reason, d.ID); err != nil {
			return fmt.Errorf("schedule retry: %w", err)
		}
		if _, err := tx.Exec(ctx, markEndpointBad, reason, d.EndpointID); err != nil {
			return fmt.Errorf("mark endpoint failing: %w", err)
		}
		return nil
	})
}

const selectDelivery = `SELECT id, endpoint_id, alert_id, event, payload, attempts, created_at, next_attempt_at, delivered_at, failed_at, last_status, last_error
	FROM webhook_outbox WHERE id = ?`

// Delivery returns one outbox row (for tests and the endpoint's status).
func (s *Store) Delivery(ctx context.Context, id string) (Delivery, error) {
	var d Delivery
	var payload string
	err := s.db.DB().QueryRowContext(ctx, s.db.Rebind(selectDelivery), id).Scan(&d.ID, &d.EndpointID, &d.AlertID, &d.Event, &payload,
		&d.Attempts, &d.CreatedAt, &d.NextAttemptAt, &d.DeliveredAt, &d.FailedAt, &d.LastStatus, &d.LastError)
	if errors.Is(err, sql.ErrNoRows) {
		return d, periscope.Errorf(periscope.ENotFound, "No delivery with this id.")
	}
	d.Payload = []byte(payload)
	return d, err
}

const countPending = `SELECT COUNT(*) FROM webhook_outbox WHERE endpoint_id = ? AND delivered_at = 0 AND failed_at = 0`

// Pending counts an endpoint's deliveries not yet done.
func (s *Store) Pending(ctx context.Context, endpointID string) (int, error) {
	var n int
	err := s.db.DB().QueryRowContext(ctx, s.db.Rebind(countPending), endpointID).Scan(&n)
	return n, err
}
