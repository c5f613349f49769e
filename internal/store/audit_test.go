package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// Issue 12, defect 4: records past the retention are pruned, in batches,
// across accounts; newer ones stay.
func TestPruneAudit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a := periscope.Account{Company: "Audit", Plan: "enterprise", OEM: true}
		u := periscope.User{Email: "audit@example.com"}
		if err := s.CreateAccount(ctx, &a, &u); err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
		// More than one batch of old records, in one transaction (fast).
		err := s.Tx(ctx, func(tx *store.Tx) error {
			for i := 0; i < 6000; i++ {
				at := now.Add(-100 * 24 * time.Hour)
				if i%1000 == 0 {
					at = now.Add(-time.Hour) // 6 recent ones
				}
				if _, err := tx.Exec(ctx, `INSERT INTO audit_logs (account_id, key_prefix, created_at, method, endpoint, status_code,
					credits_charged, query_tags, request) VALUES (?, 'k', ?, 'POST', '/oem/x', 200, 0, '{}', '{}')`, a.ID, at.Unix()); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		n, err := s.PruneAudit(ctx, now.Add(-90*24*time.Hour))
		if err != nil || n != 5994 {
			t.Fatalf("pruned %d, %v; want 5994", n, err)
		}
		_, total, err := s.AuditLogs(ctx, store.AuditFilter{AccountID: a.ID, Page: 1, PerPage: 50})
		if err != nil || total != 6 {
			t.Errorf("left %d, %v; want 6", total, err)
		}
	})
}
