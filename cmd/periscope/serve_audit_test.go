package main

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// The audit-retention worker prunes at start and stops with its context.
func TestAuditPrunerPrunesAndStops(t *testing.T) {
	s := storetest.Open(t, "sqlite")
	ctx := context.Background()
	a := periscope.Account{Company: "Prune", OEM: true}
	u := periscope.User{Email: "prune@example.com"}
	if err := s.CreateAccount(ctx, &a, &u); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, age := range []time.Duration{100 * 24 * time.Hour, time.Hour} {
		if err := s.AddAudit(ctx, &periscope.AuditEntry{AccountID: a.ID, KeyPrefix: "k", Time: now.Add(-age), Method: "POST",
			Endpoint: "/oem/x", StatusCode: 200}); err != nil {
			t.Fatal(err)
		}
	}
	w := auditPruner(s, 90*24*time.Hour, 10*time.Millisecond, slog.New(slog.DiscardHandler))
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.run(wctx) }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, total, err := s.AuditLogs(ctx, store.AuditFilter{AccountID: a.ID, Page: 1, PerPage: 10})
		if err != nil {
			t.Fatal(err)
		}
		if total == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d records left, want 1", total)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("worker returned %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("worker did not stop")
	}
}
