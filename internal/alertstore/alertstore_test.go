package alertstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/ledger"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

type env struct {
	db  *store.Store
	st  *alertstore.Store
	now time.Time
}

func open(t *testing.T, engine string) *env {
	db := storetest.Open(t, engine, alertstore.Migrations())
	e := &env{db: db, st: unlocked(t, db), now: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	db.Now = func() time.Time { return e.now }
	return e
}

func (e *env) org(t *testing.T, company string) periscope.Organization {
	t.Helper()
	ctx := context.Background()
	a := periscope.Account{Company: company, Plan: "enterprise", Enterprise: true}
	if err := e.db.CreateAccount(ctx, &a, &periscope.User{Email: company + "@example.com"}); err != nil {
		t.Fatal(err)
	}
	o := periscope.Organization{AccountID: a.ID, Name: company}
	if err := e.db.CreateOrganization(ctx, &o); err != nil {
		t.Fatal(err)
	}
	return o
}

func each(t *testing.T, fn func(t *testing.T, e *env)) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) { fn(t, open(t, engine)) })
	}
}

func TestTrackerRemovesAfterTwoMissesAndSearches(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		stored := host.Merge(host.Host{}, host.Host{Host: "mail.example.com", Domain: "example.com", TLD: "com", Subdomain: "mail",
			DNS: host.DNS{A: []string{"192.0.2.1", "192.0.2.2"}}})
		obs := host.Host{Host: "mail.example.com", DNS: host.DNS{A: []string{"192.0.2.2"}}}
		run := func(ts int64) []ledger.Change {
			var got []ledger.Change
			err := e.db.Tx(ctx, func(tx *store.Tx) error {
				tr, err := e.st.Track(ctx, tx, ledger.Source{Name: "pdns", Time: ts}, []string{stored.Host})
				if err != nil {
					return err
				}
				merged := host.Merge(stored, obs)
				got = tr.Diff(&stored, &merged, &obs)
				stored = merged
				return tr.Flush(ctx, tx)
			})
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		if got := run(100); len(got) != 1 || got[0].Change != ledger.Missed {
			t.Fatalf("first miss: %+v", got)
		}
		got := run(200)
		if len(got) != 1 || got[0].Change != ledger.Removed || got[0].OldValue != "192.0.2.1" {
			t.Fatalf("second miss: %+v", got)
		}
		if len(stored.DNS.A) != 1 {
			t.Fatalf("removed value still stored: %v", stored.DNS.A)
		}
		// The miss state is gone: a third observation changes nothing.
		if got := run(300); len(got) != 0 {
			t.Fatalf("third: %+v", got)
		}
		// Another host of the domain, new.
		if err := e.db.Tx(ctx, func(tx *store.Tx) error {
			tr, _ := e.st.Track(ctx, tx, ledger.Source{Name: "pdns", Time: 400}, nil)
			tr.New(&host.Host{Host: "www.example.com", Domain: "example.com", TLD: "com", Subdomain: "www"})
			return tr.Flush(ctx, tx)
		}); err != nil {
			t.Fatal(err)
		}
		rows, total, exact, err := e.st.SearchLedger(ctx, alertstore.LedgerQuery{Domain: "example.com", Limit: 10})
		if err != nil || total != 2 || !exact || len(rows) != 2 {
			t.Fatalf("domain search: %v %d %v %+v", err, total, exact, rows)
		}
		if rows[0].Host != "www.example.com" || rows[0].Category != ledger.CategoryHost || rows[1].Change.Change != ledger.Removed {
			t.Fatalf("newest first: %+v", rows)
		}
		rows, total, _, _ = e.st.SearchLedger(ctx, alertstore.LedgerQuery{Host: "mail.example.com", From: 150, To: 250, Limit: 10})
		if total != 1 || rows[0].Time != 200 {
			t.Fatalf("host search with range: %d %+v", total, rows)
		}
		rows, total, _, _ = e.st.SearchLedger(ctx, alertstore.LedgerQuery{Host: "mail.example.com", From: 250, Limit: 10})
		if total != 0 || len(rows) != 0 {
			t.Fatalf("empty range: %d %+v", total, rows)
		}
	})
}

func TestAlertDedupStatesAndTenancy(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		o, other := e.org(t, "acme"), e.org(t, "globex")
		put := func(ts int64) (alertstore.Alert, bool) {
			a := alertstore.Alert{AccountID: o.AccountID, OrganizationID: o.ID, Type: "new_open_port", Severity: "high",
				Title: "t", Message: "m", Evidence: json.RawMessage(`{"port":"22/tcp"}`), Host: "h", Domain: "d", Fingerprint: "fp", LastSeen: ts}
			var notify bool
			if err := e.db.Tx(ctx, func(tx *store.Tx) error {
				var err error
				notify, err = e.st.UpsertAlert(ctx, tx, &a)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return a, notify
		}
		a, notify := put(100)
		if !notify || a.Count != 1 || a.State != alertstore.StateOpen {
			t.Fatalf("new: %v %+v", notify, a)
		}
		if b, notify := put(200); notify || b.ID != a.ID || b.Count != 2 || b.FirstSeen != 100 {
			t.Fatalf("repeat: %v %+v", notify, b)
		}
		if _, err := e.st.SetState(ctx, other.AccountID, a.ID, alertstore.StateResolved); periscope.ErrorCode(err) != periscope.ENotFound {
			t.Fatalf("another account's alert: %v", err)
		}
		if got, err := e.st.SetState(ctx, o.AccountID, a.ID, alertstore.StateResolved); err != nil || got.State != alertstore.StateResolved {
			t.Fatalf("resolve: %v %+v", err, got)
		}
		if b, notify := put(300); !notify || b.State != alertstore.StateOpen || b.Count != 3 {
			t.Fatalf("a resolved alert that recurs reopens: %v %+v", notify, b)
		}
		e.st.SetState(ctx, o.AccountID, a.ID, alertstore.StateSuppressed)
		if b, notify := put(400); notify || b.State != alertstore.StateSuppressed {
			t.Fatalf("suppressed stays quiet: %v %+v", notify, b)
		}
		list, err := e.st.Alerts(ctx, alertstore.AlertQuery{AccountID: o.AccountID, State: alertstore.StateSuppressed, Limit: 10})
		if err != nil || len(list) != 1 || list[0].Count != 4 || string(list[0].Evidence) != `{"port":"22/tcp"}` {
			t.Fatalf("list: %v %+v", err, list)
		}
		if list, _ := e.st.Alerts(ctx, alertstore.AlertQuery{AccountID: other.AccountID, Limit: 10}); len(list) != 0 {
			t.Fatalf("other account sees %+v", list)
		}
		if list, _ := e.st.Alerts(ctx, alertstore.AlertQuery{AccountID: o.AccountID, From: 401, Limit: 10}); len(list) != 0 {
			t.Fatalf("from filter: %+v", list)
		}
	})
}

func TestCheckpointLeaseRunsOnce(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		if _, ok, err := e.st.LeaseCheckpoint(ctx, "rules", "a", 100, 160); !ok || err != nil {
			t.Fatalf("a: %v %v", ok, err)
		}
		if _, ok, _ := e.st.LeaseCheckpoint(ctx, "rules", "b", 120, 180); ok {
			t.Fatal("b took a running lease")
		}
		if err := e.db.Tx(ctx, func(tx *store.Tx) error { return e.st.SaveCheckpoint(ctx, tx, "rules", "a", 42) }); err != nil {
			t.Fatal(err)
		}
		pos, ok, _ := e.st.LeaseCheckpoint(ctx, "rules", "b", 161, 220)
		if !ok || pos != 42 {
			t.Fatalf("b after expiry: %v %d", ok, pos)
		}
		if err := e.db.Tx(ctx, func(tx *store.Tx) error { return e.st.SaveCheckpoint(ctx, tx, "rules", "a", 50) }); err == nil {
			t.Fatal("a saved after losing the lease")
		}
	})
}

func TestOutboxLeaseRetryAndDisable(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		o := e.org(t, "acme")
		ep := alertstore.Endpoint{AccountID: o.AccountID, OrganizationID: o.ID, URL: "https://hooks.example.com/x", Format: "json",
			Secret: "whsec_a", PreviousSecret: "whsec_b", PreviousUntil: e.now.Unix() + 10, MinSeverity: "low", Types: []string{"port_closed"}}
		if err := e.st.CreateEndpoint(ctx, &ep); err != nil {
			t.Fatal(err)
		}
		if s := fmt.Sprint(ep); s != "webhook endpoint "+ep.ID+" (https://hooks.example.com/x)" {
			t.Fatalf("endpoint prints %q", s)
		}
		var d alertstore.Delivery
		if err := e.db.Tx(ctx, func(tx *store.Tx) error {
			eps, err := e.st.LiveEndpoints(ctx, tx, o.ID)
			if err != nil || len(eps) != 1 || eps[0].Types[0] != "port_closed" {
				return fmt.Errorf("live endpoints: %v %+v", err, eps)
			}
			d = alertstore.Delivery{EndpointID: ep.ID, Event: "alert", Payload: []byte(`{"x":1}`)}
			return e.st.Enqueue(ctx, tx, &d)
		}); err != nil {
			t.Fatal(err)
		}
		got, err := e.st.Lease(ctx, 10, e.now.Unix()+30)
		if err != nil || len(got) != 1 || got[0].ID != d.ID || len(got[0].Secrets) != 2 || string(got[0].Payload) != `{"x":1}` {
			t.Fatalf("lease: %v %+v", err, got)
		}
		if again, _ := e.st.Lease(ctx, 10, e.now.Unix()+30); len(again) != 0 {
			t.Fatalf("leased twice: %+v", again)
		}
		if err := e.st.Failed(ctx, got[0], 500, "HTTP 500", e.now.Unix()+60); err != nil {
			t.Fatal(err)
		}
		eps, _ := e.st.Endpoints(ctx, o.AccountID, o.ID)
		if eps[0].Status != alertstore.EndpointFailing || eps[0].Failures != 1 {
			t.Fatalf("after failure: %+v", eps[0])
		}
		if again, _ := e.st.Lease(ctx, 10, e.now.Unix()+30); len(again) != 0 {
			t.Fatal("retried before its time")
		}
		e.now = e.now.Add(61 * time.Second)
		got, _ = e.st.Lease(ctx, 10, e.now.Unix()+30)
		if len(got) != 1 || len(got[0].Secrets) != 1 {
			t.Fatalf("retry lease (the previous secret has expired): %+v", got)
		}
		if err := e.st.Failed(ctx, got[0], 0, "connection refused", 0); err != nil {
			t.Fatal(err)
		}
		eps, _ = e.st.Endpoints(ctx, o.AccountID, o.ID)
		if eps[0].Status != alertstore.EndpointDisabled || eps[0].DisabledAt == 0 || eps[0].LastError != "connection refused" {
			t.Fatalf("after giving up: %+v", eps[0])
		}
		if dd, _ := e.st.Delivery(ctx, d.ID); dd.FailedAt == 0 || dd.Attempts != 2 {
			t.Fatalf("delivery: %+v", dd)
		}
		if err := e.db.Tx(ctx, func(tx *store.Tx) error {
			eps, err := e.st.LiveEndpoints(ctx, tx, o.ID)
			if len(eps) != 0 {
				return fmt.Errorf("a disabled endpoint is live")
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if err := e.st.DeleteEndpoint(ctx, "someone-else", o.ID, ep.ID); periscope.ErrorCode(err) != periscope.ENotFound {
			t.Fatalf("delete by another account: %v", err)
		}
		if err := e.st.DeleteEndpoint(ctx, o.AccountID, o.ID, ep.ID); err != nil {
			t.Fatal(err)
		}
	})
}

// unlocked returns the alerts store on db with webhook secrets sealed
// under a fixed test key.
func unlocked(t testing.TB, db *store.Store) *alertstore.Store {
	t.Helper()
	st := alertstore.New(db)
	if _, err := st.UnlockSecrets(context.Background(), testKey(t)); err != nil {
		t.Fatal(err)
	}
	return st
}

func testKey(t testing.TB) *alertstore.SecretsKey {
	k, err := alertstore.NewSecretsKey([]byte("periscope-test-secrets-key-32byt"))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestEndpointLimit: an organization gets at most EndpointLimit endpoints,
// also when the creations race, the refusal is quota_exceeded and stores
// nothing; LiveEndpoints (the endpoints one alert is delivered to) gives
// at most EndpointLimit, the oldest, when an organization has more (made
// before the cap was lowered).
func TestEndpointLimit(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		o := e.org(t, "acme")
		e.st.EndpointLimit = 3
		newEP := func(i int) *alertstore.Endpoint {
			return &alertstore.Endpoint{AccountID: o.AccountID, OrganizationID: o.ID, URL: fmt.Sprintf("https://hooks.example.com/%d", i),
				Format: "json", Secret: "whsec_a", MinSeverity: "low"}
		}
		errs := make([]error, 12)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() { errs[i] = e.st.CreateEndpoint(ctx, newEP(i)) })
		}
		wg.Wait()
		made := 0
		for _, err := range errs {
			switch {
			case err == nil:
				made++
			case periscope.ErrorCode(err) != periscope.EQuotaExceeded:
				t.Fatalf("creation: %v", err)
			}
		}
		eps, err := e.st.Endpoints(ctx, o.AccountID, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		if made != 3 || len(eps) != 3 {
			t.Fatalf("%d creations succeeded, %d stored; want 3", made, len(eps))
		}
		// The cap lowered below what the organization has: an alert reaches
		// the oldest two.
		e.st.EndpointLimit = 2
		if err := e.db.Tx(ctx, func(tx *store.Tx) error {
			live, err := e.st.LiveEndpoints(ctx, tx, o.ID)
			if err != nil {
				return err
			}
			if len(live) != 2 {
				t.Errorf("live endpoints: %d, want 2", len(live))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
}
