package main

import (
	"context"
	"errors"
	"fmt"
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
	runWorkerUntil(t, w, 5*time.Second, func() (bool, string) {
		_, total, err := s.AuditLogs(ctx, store.AuditFilter{AccountID: a.ID, Page: 1, PerPage: 10})
		if err != nil {
			t.Fatal(err)
		}
		return total == 1, fmt.Sprintf("%d records left, want 1", total)
	})
}

// runWorkerUntil runs w until done reports true (checked every 10 ms; past
// within, the test fails with done's message), then stops it and checks it
// returns with its context.
func runWorkerUntil(t *testing.T, w worker, within time.Duration, done func() (bool, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- w.run(ctx) }()
	deadline := time.Now().Add(within)
	for {
		ok, msg := done()
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-stopped:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("worker returned %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("worker did not stop")
	}
}
