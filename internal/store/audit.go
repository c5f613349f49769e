package store

import (
	"context"
	"fmt"
	"time"

	"github.com/periscope-oss/periscope/internal/periscope"
)

// AddAudit records one request to an OEM route (its SealedRequest as the
// caller sealed it: the store neither seals nor opens).
func (s *Store) AddAudit(ctx context.Context, e *periscope.AuditEntry) error {
	tags, req := string(e.QueryTags), string(e.Request)
	if tags == "" {
		tags = "{}"
	}
	if req == "" {
		req = "{}"
	}
	_, err := s.exec(ctx, `INSERT INTO audit_logs (account_id, key_prefix, created_at, method, endpoint, status_code,
		credits_charged, query_tags, request, sealed_request) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.AccountID, e.KeyPrefix, e.Time.Unix(), e.Method, e.Endpoint, e.StatusCode, e.CreditsCharged, tags, req, e.SealedRequest)
	if err != nil {
		return fmt.Errorf("insert audit record: %w", err)
	}
	return nil
}

// AuditFilter selects an account's audit records.
type AuditFilter struct {
	AccountID string
	From, To  time.Time // To is exclusive; zero means unbounded
	Page      int       // from 1
	PerPage   int
}

// AuditLogs returns one page of an account's audit records, newest first, and
// the total number that match.
func (s *Store) AuditLogs(ctx context.Context, f AuditFilter) ([]periscope.AuditEntry, int, error) {
	where := `account_id = ?`
	args := []any{f.AccountID}
	if !f.From.IsZero() {
		where += ` AND created_at >= ?`
		args = append(args, f.From.Unix())
	}
	if !f.To.IsZero() {
		where += ` AND created_at < ?`
		args = append(args, f.To.Unix())
	}
	var total int
	if err := s.queryRow(ctx, `SELECT COUNT(*) FROM audit_logs WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count audit records: %w", err)
	}
	rows, err := s.query(ctx, `SELECT id, account_id, key_prefix, created_at, method, endpoint, status_code, credits_charged,
		query_tags, request, sealed_request FROM audit_logs WHERE `+where+` ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
		append(args, f.PerPage, (f.Page-1)*f.PerPage)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list audit records: %w", err)
	}
	defer rows.Close()
	out := []periscope.AuditEntry{}
	for rows.Next() {
		var e periscope.AuditEntry
		var created int64
		var tags, req string
		if err := rows.Scan(&e.ID, &e.AccountID, &e.KeyPrefix, &created, &e.Method, &e.Endpoint, &e.StatusCode,
			&e.CreditsCharged, &tags, &req, &e.SealedRequest); err != nil {
			return nil, 0, fmt.Errorf("list audit records: %w", err)
		}
		e.Time = time.Unix(created, 0).UTC()
		e.QueryTags, e.Request = []byte(tags), []byte(req)
		out = append(out, e)
	}
	return out, total, rows.Err()
}

// pruneAuditSQL deletes one batch of records older than a time. Batches keep
// each transaction (and, on SQLite, the write lock) short.
const pruneAuditSQL = `DELETE FROM audit_logs WHERE id IN (SELECT id FROM audit_logs WHERE created_at < ? LIMIT 5000)`

// PruneAudit deletes the audit records created before cutoff, in batches,
// and returns how many it deleted.
func (s *Store) PruneAudit(ctx context.Context, cutoff time.Time) (int64, error) {
	var total int64
	for {
		res, err := s.exec(ctx, pruneAuditSQL, cutoff.Unix())
		if err != nil {
			return total, fmt.Errorf("prune audit records: %w", err)
		}
		n, _ := res.RowsAffected()
		total += n
		if n < 5000 {
			return total, nil
		}
	}
}
