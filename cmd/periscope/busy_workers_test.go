package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// Issue 29, item 11: a background step run as serve runs its workers waits
// for another process's long write (a large ingest) and completes after
// it, logging nothing, where it logged SQLITE_BUSY as a failure.
func TestWorkerWaitsForAnotherProcessWrite(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			dsn := storetest.DSN(t, engine)
			const busy = 100 * time.Millisecond
			open := func() *store.Store {
				s, err := store.Open(ctx, dsn, store.BusyTimeout(busy))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
			st, ingest := open(), open()
			if _, err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			a := periscope.Account{Company: "acme", Plan: "enterprise", OEM: true}
			if err := st.CreateAccount(ctx, &a, &periscope.User{Email: "acme@example.com"}); err != nil {
				t.Fatal(err)
			}
			if err := st.AddAudit(ctx, &periscope.AuditEntry{AccountID: a.ID, KeyPrefix: "k", Time: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC),
				Method: "POST", Endpoint: "/oem/x"}); err != nil {
				t.Fatal(err)
			}
			tx, err := ingest.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			lock := `UPDATE accounts SET company = company`
			if engine == "postgres" {
				lock = `LOCK TABLE audit_logs IN EXCLUSIVE MODE`
			}
			if _, err := tx.Exec(ctx, lock); err != nil {
				t.Fatal(err)
			}
			released := make(chan time.Time, 1)
			go func() {
				time.Sleep(10 * busy)
				released <- time.Now()
				if err := tx.Commit(); err != nil {
					t.Error(err)
				}
			}()

			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			svc := &services{log: log}
			prune := worker{name: "audit-retention", everyInstance: true, run: func(ctx context.Context) error {
				pruneAuditOnce(ctx, st, 24*time.Hour, log)
				return nil
			}}
			if err := svc.runWorker(ctx, prune); err != nil {
				t.Fatal(err)
			}
			done := time.Now()
			if r := <-released; done.Before(r) {
				t.Errorf("the step finished %s before the other writer let go", r.Sub(done))
			}
			if strings.Contains(logs.String(), "failed") || strings.Contains(logs.String(), "SQLITE_BUSY") {
				t.Errorf("logged: %s", logs.String())
			}
			if !strings.Contains(logs.String(), "records=1") {
				t.Errorf("the step did not prune the old record: %s", logs.String())
			}
		})
	}
}
