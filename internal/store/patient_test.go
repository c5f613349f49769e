package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// Issue 29, item 11: a background writer that meets another process's long
// write transaction waits its turn and completes once the writer is done,
// however long past the busy timeout that is; a request's write fails busy
// (a 503) after the timeout as before.
func TestPatientWriterWaitsItsTurn(t *testing.T) {
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
			st, ingest := open(), open() // two processes on one database
			if _, err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			a := periscope.Account{Company: "acme", Plan: "enterprise", OEM: true}
			if err := st.CreateAccount(ctx, &a, &periscope.User{Email: "acme@example.com"}); err != nil {
				t.Fatal(err)
			}
			old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
			if err := st.AddAudit(ctx, &periscope.AuditEntry{AccountID: a.ID, KeyPrefix: "k", Time: old, Method: "POST", Endpoint: "/oem/x"}); err != nil {
				t.Fatal(err)
			}

			// The other process's write transaction, held for 10 busy
			// timeouts.
			tx, err := ingest.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if engine == "postgres" {
				if _, err := tx.Exec(ctx, `LOCK TABLE audit_logs IN EXCLUSIVE MODE`); err != nil {
					t.Fatal(err)
				}
			} else if _, err := tx.Exec(ctx, `UPDATE accounts SET company = company`); err != nil {
				t.Fatal(err)
			}
			const hold = 10 * busy
			released := make(chan time.Time, 1)
			go func() {
				time.Sleep(hold)
				released <- time.Now()
				if err := tx.Commit(); err != nil {
					t.Error(err)
				}
			}()

			if engine == "sqlite" {
				// A request is not patient: busy after the timeout.
				if _, err := st.PruneAudit(ctx, time.Now()); !store.IsBusy(err) {
					t.Errorf("request prune under the other writer: %v, want busy", err)
				}
			}
			bg := store.Patient(ctx)
			n, err := st.PruneAudit(bg, time.Now())
			done := time.Now()
			if err != nil || n != 1 {
				t.Fatalf("background prune: %d %v, want 1 record and no error", n, err)
			}
			if r := <-released; done.Before(r) {
				t.Errorf("the background prune finished %s before the other writer let go", r.Sub(done))
			}
			// And a background transaction alike.
			tx, err = ingest.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, `UPDATE accounts SET company = company`); err != nil {
				t.Fatal(err)
			}
			go func() {
				time.Sleep(hold)
				if err := tx.Commit(); err != nil {
					t.Error(err)
				}
			}()
			if err := st.Tx(bg, func(tx *store.Tx) error {
				_, err := tx.Exec(ctx, `UPDATE accounts SET company = 'acme 2' WHERE id = ?`, a.ID)
				return err
			}); err != nil {
				t.Errorf("background transaction: %v", err)
			}
			if engine != "sqlite" {
				return
			}
			// A background writer stops waiting when its context ends.
			tx, err = ingest.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			if _, err := tx.Exec(ctx, `UPDATE accounts SET company = company`); err != nil {
				t.Fatal(err)
			}
			cctx, cancel := context.WithTimeout(bg, 3*busy)
			defer cancel()
			if _, err := st.PruneAudit(cctx, time.Now()); err == nil {
				t.Error("a background prune whose context ended succeeded under the other writer")
			}
		})
	}
}
