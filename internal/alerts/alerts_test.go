package alerts_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/alerts"
	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/ledger"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// The example of the Standard Webhooks specification (and of svix's
// libraries, which implement it).
func TestSignMatchesStandardWebhooksExample(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := []byte(`{"test": 2432232314}`)
	got, err := alerts.Sign([]string{secret}, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body)
	if err != nil {
		t.Fatal(err)
	}
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Fatalf("signature %s, want %s", got, want)
	}
	now := time.Unix(1614265330, 0)
	if err := alerts.Verify(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", got, body, now, time.Minute); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		id, ts string
		body   string
		now    time.Time
	}{
		"other id":      {"msg_other", "1614265330", string(body), now},
		"other body":    {"msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", `{"test": 1}`, now},
		"replayed late": {"msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", string(body), now.Add(10 * time.Minute)},
		"bad timestamp": {"msg_p5jXN8AQM9LWM0D4loKWxJek", "x", string(body), now},
	} {
		if err := alerts.Verify(secret, c.id, c.ts, got, []byte(c.body), c.now, 5*time.Minute); err == nil {
			t.Errorf("%s: verified", name)
		}
	}
	two, _ := alerts.Sign([]string{alerts.NewSecret(), secret}, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body)
	if err := alerts.Verify(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", two, body, now, time.Minute); err != nil {
		t.Fatalf("the old secret's signature among two: %v", err)
	}
}

func TestRulesFromLedgerRows(t *testing.T) {
	a := periscope.Asset{OrganizationID: "org", AccountID: "acct", Kind: "dns", Value: "example.com"}
	row := func(cat ledger.Category, k ledger.Kind, v, old string) alertstore.Row {
		return alertstore.Row{ID: 7, Change: ledger.Change{Host: "db.example.com", Domain: "example.com", HostType: "subdomain", IPAddress: "192.0.2.5",
			Category: cat, Change: k, Value: v, OldValue: old, Source: "nmap", Time: 1000}}
	}
	cases := []struct {
		row      alertstore.Row
		typ, sev string
		title    string
	}{
		{row(ledger.CategoryHost, ledger.New, "db.example.com", ""), alerts.TypeNewSubdomain, "medium", "New subdomain discovered: db.example.com"},
		{row(ledger.CategoryPort, ledger.New, "5432/tcp", ""), alerts.TypeNewOpenPort, "high", "New open port 5432/tcp on db.example.com"},
		{row(ledger.CategoryPort, ledger.New, "8443/tcp", ""), alerts.TypeNewOpenPort, "medium", "New open port 8443/tcp on db.example.com"},
		{row(ledger.CategoryPort, ledger.Removed, "", "5432/tcp"), alerts.TypePortClosed, "low", "Port 5432/tcp closed on db.example.com"},
		{row(ledger.CategoryDNSA, ledger.New, "192.0.2.6", ""), alerts.TypeDNSChanged, "medium", "DNS A record new on db.example.com"},
		{row(ledger.CategoryDNSTXT, ledger.Removed, "", "v=spf1 -all"), alerts.TypeDNSChanged, "low", "DNS TXT record removed on db.example.com"},
		{row(ledger.CategoryTLSCert, ledger.Changed, "bb", "aa"), alerts.TypeCertChanged, "medium", "TLS certificate changed on db.example.com"},
		{row(ledger.CategoryHTTPTitle, ledger.Changed, "Hacked", "Welcome"), alerts.TypeHTTPChanged, "low", "HTTP title changed on db.example.com"},
		{row(ledger.CategoryTechnology, ledger.New, "nginx", ""), "", "", ""},
	}
	fps := map[string]bool{}
	for _, c := range cases {
		al, ok := alerts.FromChange(c.row, a)
		if ok != (c.typ != "") || al.Type != c.typ || al.Severity != c.sev || al.Title != c.title {
			t.Errorf("%s %s: %v %q %q %q", c.row.Category, c.row.Change.Change, ok, al.Type, al.Severity, al.Title)
			continue
		}
		if !ok {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal(al.Evidence, &ev); err != nil || ev["host"] != "db.example.com" || ev["ledger_id"] != float64(7) {
			t.Errorf("evidence %s", al.Evidence)
		}
		if fps[al.Fingerprint] {
			t.Errorf("fingerprint repeats across different events: %s", al.Title)
		}
		fps[al.Fingerprint] = true
		if again, _ := alerts.FromChange(c.row, a); again.Fingerprint != al.Fingerprint {
			t.Error("the same event has two fingerprints")
		}
	}
	ipRow := row(ledger.CategoryHost, ledger.New, "192.0.2.5", "")
	ipRow.HostType = "ip"
	if _, ok := alerts.FromChange(ipRow, a); ok {
		t.Error("a new address is not a new subdomain")
	}
}

func TestExpiryThresholds(t *testing.T) {
	a := periscope.Asset{OrganizationID: "org", AccountID: "acct", Value: "example.com"}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		left time.Duration
		ok   bool
		sev  string
	}{
		{40 * 24 * time.Hour, false, ""}, {30 * 24 * time.Hour, true, "low"}, {14 * 24 * time.Hour, true, "medium"},
		{3 * 24 * time.Hour, true, "high"}, {time.Hour, true, "critical"}, {-time.Hour, true, "critical"},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		al, ok := alerts.CertExpiring(a, "www.example.com", "example.com", "ab12", "www.example.com", now.Add(c.left), now)
		if ok != c.ok || al.Severity != c.sev {
			t.Errorf("cert %v left: %v %q", c.left, ok, al.Severity)
		}
		if ok {
			if seen[al.Fingerprint] {
				t.Errorf("thresholds share a fingerprint at %v", c.left)
			}
			seen[al.Fingerprint] = true
		}
		d, ok := alerts.DomainExpiring(a, "example.com", "Example Registrar", now.Add(c.left), now)
		if ok != c.ok || d.Severity != c.sev {
			t.Errorf("domain %v left: %v %q", c.left, ok, d.Severity)
		}
	}
	// Two checks within the same threshold are one alert.
	x, _ := alerts.CertExpiring(a, "www.example.com", "example.com", "ab12", "", now.Add(5*24*time.Hour), now)
	y, _ := alerts.CertExpiring(a, "www.example.com", "example.com", "ab12", "", now.Add(4*24*time.Hour), now.Add(24*time.Hour))
	if x.Fingerprint != y.Fingerprint {
		t.Error("one threshold, two fingerprints")
	}
	if al, ok := alerts.BrandFinding(a, "potential_phishing", "examp1e.com", "example.com", "homoglyph", 90, 1); !ok || al.Type != alerts.TypeNewPhishing {
		t.Error("phishing finding")
	}
}

func TestPayloadFormats(t *testing.T) {
	al := alertstore.Alert{ID: "a1", Type: alerts.TypeNewOpenPort, Severity: "high", Title: "New open port 3389/tcp on vpn.example.com",
		Message: "Port 3389/tcp is open.", Host: "vpn.example.com", Count: 1, Evidence: json.RawMessage(`{"value":"3389/tcp"}`)}
	for _, f := range alerts.Formats {
		b, err := alerts.Payload(f, "alert.created", al, time.Unix(0, 0))
		if err != nil || !json.Valid(b) || !strings.Contains(string(b), "3389/tcp") {
			t.Errorf("%s: %v %s", f, err, b)
		}
	}
	if _, err := alerts.Payload("xml", "alert.created", al, time.Unix(0, 0)); err == nil {
		t.Error("unknown format accepted")
	}
}

// TestDispatcherRetriesThenDisables drives a delivery to an endpoint that
// always fails through its retries (backoff with jitter) until 24 h have
// passed, when the endpoint is disabled.
func TestDispatcherRetriesThenDisables(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			db := storetest.Open(t, engine, alertstore.Migrations())
			now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
			db.Now = func() time.Time { return now }
			st := unlocked(t, db)
			acct := periscope.Account{Company: "acme"}
			db.CreateAccount(ctx, &acct, &periscope.User{Email: "a@example.com"})
			org := periscope.Organization{AccountID: acct.ID, Name: "acme"}
			db.CreateOrganization(ctx, &org)
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				w.WriteHeader(http.StatusServiceUnavailable)
			}))
			defer srv.Close()
			ep := alertstore.Endpoint{AccountID: acct.ID, OrganizationID: org.ID, URL: srv.URL, Format: "json", Secret: alerts.NewSecret(), MinSeverity: "info"}
			if err := st.CreateEndpoint(ctx, &ep); err != nil {
				t.Fatal(err)
			}
			al := []alertstore.Alert{{AccountID: acct.ID, OrganizationID: org.ID, Type: alerts.TypeNewOpenPort, Severity: "high", Title: "t",
				Message: "m", Host: "h", Fingerprint: "fp", LastSeen: now.Unix()}}
			if n, err := alerts.Raise(ctx, db, st, al); err != nil || n != 1 {
				t.Fatalf("raise: %d %v", n, err)
			}
			d := &alerts.Dispatcher{Alerts: st, Client: srv.Client(), Now: func() time.Time { return now }}
			var gaps []time.Duration
			last := now
			for i := 0; i < 100; i++ {
				n, err := d.Step(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if n == 1 {
					gaps = append(gaps, now.Sub(last))
					last = now
				}
				eps, _ := st.Endpoints(ctx, acct.ID, org.ID)
				if eps[0].Status == alertstore.EndpointDisabled {
					break
				}
				now = now.Add(30 * time.Minute)
			}
			eps, _ := st.Endpoints(ctx, acct.ID, org.ID)
			if eps[0].Status != alertstore.EndpointDisabled || eps[0].LastError != "HTTP 503" {
				t.Fatalf("endpoint after a day of failures: %+v", eps[0])
			}
			// The last attempt comes when the next wait (at most 6 h + 25%
			// jitter) would pass 24 h: after 16.5 h at the earliest.
			if elapsed := last.Sub(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)); elapsed < 16*time.Hour || elapsed > 25*time.Hour {
				t.Fatalf("gave up after %v", elapsed)
			}
			if int(hits.Load()) != len(gaps) || len(gaps) < 6 {
				t.Fatalf("%d attempts, %d hits", len(gaps), hits.Load())
			}
			// Backoff grows: the last gap is hours, the first ones short.
			if gaps[len(gaps)-1] < 2*time.Hour {
				t.Fatalf("gaps %v", gaps)
			}
			// A later alert finds no live endpoint: nothing is queued.
			al[0].Fingerprint = "fp2"
			if n, _ := alerts.Raise(ctx, db, st, al); n != 0 {
				t.Fatalf("queued %d to a disabled endpoint", n)
			}
		})
	}
}

// TestWorkerRunsOnceAndResumes: a second instance waits while the first
// holds the lease; a restarted worker resumes from the checkpoint without
// repeating what was committed.
func TestWorkerRunsOnceAndResumes(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			db := storetest.Open(t, engine, alertstore.Migrations())
			now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
			db.Now = func() time.Time { return now }
			st := unlocked(t, db)
			acct := periscope.Account{Company: "acme"}
			db.CreateAccount(ctx, &acct, &periscope.User{Email: "a@example.com"})
			org := periscope.Organization{AccountID: acct.ID, Name: "acme"}
			db.CreateOrganization(ctx, &org)
			if _, err := db.AddAsset(ctx, periscope.Asset{OrganizationID: org.ID, AccountID: acct.ID, Kind: periscope.AssetDomain, Value: "example.com"}); err != nil {
				t.Fatal(err)
			}
			write := func(name string, ts int64) {
				t.Helper()
				c := ledger.Change{Host: name, Domain: "example.com", HostType: "subdomain", Category: ledger.CategoryHost, Change: ledger.New, Value: name, Source: "ct", Time: ts}
				if err := db.Tx(ctx, func(tx *store.Tx) error { return st.RecordChanges(ctx, tx, []ledger.Change{c}) }); err != nil {
					t.Fatal(err)
				}
			}
			write("a.example.com", now.Unix()) // starts the baseline
			now = now.Add(2 * time.Hour)
			write("b.example.com", now.Unix())
			one := &alerts.Worker{DB: db, Alerts: st, Batch: 1}
			two := &alerts.Worker{DB: db, Alerts: st, Batch: 1}
			if n, err := one.Step(ctx); n != 1 || err != nil {
				t.Fatalf("one: %d %v", n, err)
			}
			if n, err := two.Step(ctx); n != 0 || err != nil {
				t.Fatalf("two ran while one held the lease: %d %v", n, err)
			}
			// one stops (crash); after its lease ends a fresh worker resumes.
			now = now.Add(time.Minute)
			three := &alerts.Worker{DB: db, Alerts: st}
			if n, err := three.Step(ctx); n != 1 || err != nil {
				t.Fatalf("three: %d %v", n, err)
			}
			if n, _ := three.Step(ctx); n != 0 {
				t.Fatalf("three repeated %d rows", n)
			}
			list, _ := st.Alerts(ctx, alertstore.AlertQuery{AccountID: acct.ID, Limit: 10})
			if len(list) != 1 || list[0].Host != "b.example.com" || list[0].Count != 1 {
				t.Fatalf("alerts: %+v", list)
			}
		})
	}
}

// TestFeeds: brand findings alert once each, from a checkpoint; the expiry
// feed runs once a day and alerts once per threshold crossed.
func TestFeeds(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			db := storetest.Open(t, engine, alertstore.Migrations())
			now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
			db.Now = func() time.Time { return now }
			st := unlocked(t, db)
			acct := periscope.Account{Company: "acme"}
			db.CreateAccount(ctx, &acct, &periscope.User{Email: "a@example.com"})
			org := periscope.Organization{AccountID: acct.ID, Name: "acme"}
			db.CreateOrganization(ctx, &org)
			findings := []alerts.BrandItem{
				{ID: 3, OrganizationID: org.ID, AccountID: acct.ID, Kind: "typosquatting", Domain: "exarnple.com", BaseDomain: "example.com", Reason: "homoglyph", Score: 80},
				{ID: 9, OrganizationID: org.ID, AccountID: acct.ID, Kind: "potential_phishing", Domain: "example-login.net", BaseDomain: "example.com", Reason: "brand label", Score: 70},
			}
			list := func(_ context.Context, after int64, limit int) ([]alerts.BrandItem, error) {
				var out []alerts.BrandItem
				for _, f := range findings {
					if f.ID > after && len(out) < limit {
						out = append(out, f)
					}
				}
				return out, nil
			}
			asset := periscope.Asset{OrganizationID: org.ID, AccountID: acct.ID, Value: "example.com"}
			notAfter := now.Add(10 * 24 * time.Hour)
			certs := func(context.Context) ([]alerts.CertItem, error) {
				return []alerts.CertItem{{Asset: asset, Host: "www.example.com", Domain: "example.com", SHA256: "ab12", Subject: "www.example.com", NotAfter: notAfter}}, nil
			}
			domains := func(context.Context) ([]alerts.DomainItem, error) {
				return []alerts.DomainItem{{Asset: asset, Domain: "example.com", Registrar: "Example Registrar", Expiry: now.Add(100 * 24 * time.Hour)}}, nil
			}
			w := &alerts.Worker{DB: db, Alerts: st, Feeds: []alerts.Feed{alerts.BrandFeed(list), alerts.ExpiryFeed(db.Now, certs, domains)}}
			if n, err := w.StepFeeds(ctx); err != nil || n != 3 {
				t.Fatalf("first step: %d %v", n, err)
			}
			if n, _ := w.StepFeeds(ctx); n != 0 {
				t.Fatalf("the same day and findings again: %d", n)
			}
			now = now.Add(4 * 24 * time.Hour) // 6 days left: the 7-day threshold
			if n, _ := w.StepFeeds(ctx); n != 1 {
				t.Fatalf("next threshold: %d", n)
			}
			list2, _ := st.Alerts(ctx, alertstore.AlertQuery{AccountID: acct.ID, Limit: 10})
			got := map[string]int{}
			for _, a := range list2 {
				got[a.Type+"/"+a.Severity]++
			}
			want := map[string]int{"new_typosquat/medium": 1, "new_phishing/high": 1, "tls_cert_expiring/medium": 1, "tls_cert_expiring/high": 1}
			if len(got) != len(want) {
				t.Fatalf("alerts %v", got)
			}
			for k, v := range want {
				if got[k] != v {
					t.Fatalf("alerts %v, want %v", got, want)
				}
			}
		})
	}
}

func TestCertExpiringNamesTheAsset(t *testing.T) {
	assets := []periscope.Asset{{OrganizationID: "org", Value: "example.com"}, {OrganizationID: "org", Value: "shop.example.com"},
		{OrganizationID: "other", Value: "www.shop.example.com"}}
	a, ok := alerts.CoveringAsset(assets, "org", "*.www.Shop.example.com.")
	if !ok || a.Value != "shop.example.com" {
		t.Fatalf("covering asset %v %v, want shop.example.com", a, ok)
	}
	if _, ok := alerts.CoveringAsset(assets, "org", "example.org"); ok {
		t.Error("an unrelated name has a covering asset")
	}
	if _, ok := alerts.CoveringAsset(assets, "org", "badexample.com"); ok {
		t.Error("a suffix that is not a parent domain covers")
	}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	al, ok := alerts.CertExpiring(a, "www.shop.example.com", a.Value, "ab12", "www.shop.example.com", now.Add(3*24*time.Hour), now)
	if !ok || al.Domain != "shop.example.com" || al.Host != "www.shop.example.com" ||
		!strings.Contains(al.Title, "shop.example.com (www.shop.example.com)") || !strings.Contains(string(al.Evidence), `"certificate_name":"www.shop.example.com"`) {
		t.Errorf("alert %+v", al)
	}
}

// unlocked returns the alerts store on db with webhook secrets sealed
// under a fixed test key.
func unlocked(t testing.TB, db *store.Store) *alertstore.Store {
	t.Helper()
	k, err := alertstore.NewSecretsKey([]byte("periscope-test-secrets-key-32byt"))
	if err != nil {
		t.Fatal(err)
	}
	st := alertstore.New(db)
	if _, err := st.UnlockSecrets(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestCompromisedCredentialsMasksAndAccumulates(t *testing.T) {
	for in, want := range map[string]string{"jane.doe@example.com": "j***e@example.com", "ab@example.com": "a***@example.com",
		"x@example.com": "x***@example.com", "nope": "***"} {
		if got := alerts.MaskEmail(in); got != want {
			t.Errorf("MaskEmail(%q) = %q, want %q", in, got, want)
		}
	}
	a := periscope.Asset{OrganizationID: "org", AccountID: "acct", Value: "example.com"}
	if _, ok := alerts.CompromisedCredentials(a, "LinkedIn", "2012-05-05", "breach-csv", nil, nil, 1, ""); ok {
		t.Error("no email alerts")
	}
	al, ok := alerts.CompromisedCredentials(a, "LinkedIn", "2012-05-05", "breach-csv",
		[]string{"jane.doe@example.com", "JANE.DOE@example.com", "bob@dev.example.com"}, nil, 1, "")
	if !ok || al.Type != alerts.TypeCompromisedCredential || al.Severity != "high" {
		t.Fatalf("alert %+v", al)
	}
	for _, clear := range []string{"jane.doe", "bob@"} {
		if strings.Contains(al.Message+al.Title+string(al.Evidence), clear) {
			t.Errorf("the alert shows %q in clear: %s %s", clear, al.Message, al.Evidence)
		}
	}
	if !strings.Contains(al.Title, "2 accounts") || !strings.Contains(al.Message, "j***e@example.com") || !strings.Contains(al.Message, "LinkedIn") {
		t.Errorf("title %q message %q", al.Title, al.Message)
	}
	again, _ := alerts.CompromisedCredentials(a, "LinkedIn", "2012-05-05", "breach-csv", []string{"carol@example.com"}, &al, 2, "")
	if again.Fingerprint != al.Fingerprint || !strings.Contains(again.Title, "3 accounts") || !strings.Contains(string(again.Evidence), `"new_accounts":1`) {
		t.Errorf("repeat %q %s", again.Title, again.Evidence)
	}
	other, _ := alerts.CompromisedCredentials(a, "Adobe", "", "breach-csv", []string{"carol@example.com"}, nil, 2, "")
	if other.Fingerprint == al.Fingerprint {
		t.Error("two breaches share a fingerprint")
	}
}

// TestCredentialFeedBaselineAndOnce: records ingested before the domain's
// baseline ends are silent; later ones alert once per breach, across the
// organization's two domains; a record already read is not read again.
//
// With the domains only claimed (not verified), the alert is the same and
// its evidence says masked_reason "domain_not_verified".
func TestCredentialFeedBaselineAndOnce(t *testing.T) {
	for _, c := range []struct {
		engine   string
		verified bool
	}{{"sqlite", true}, {"sqlite", false}, {"postgres", true}, {"postgres", false}} {
		engine := c.engine
		if !slices.Contains(storetest.Engines(), engine) {
			continue
		}
		t.Run(fmt.Sprintf("%s/verified=%v", engine, c.verified), func(t *testing.T) {
			ctx := context.Background()
			db := storetest.Open(t, engine, alertstore.Migrations())
			now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
			db.Now = func() time.Time { return now }
			st := unlocked(t, db)
			acct := periscope.Account{Company: "acme"}
			db.CreateAccount(ctx, &acct, &periscope.User{Email: "a@example.com"})
			org := periscope.Organization{AccountID: acct.ID, Name: "acme"}
			db.CreateOrganization(ctx, &org)
			for _, d := range []string{"example.com", "example.org"} {
				if _, err := db.AddAsset(ctx, periscope.Asset{OrganizationID: org.ID, AccountID: acct.ID, Kind: periscope.AssetDomain, Value: d}); err != nil {
					t.Fatal(err)
				}
			}
			// The dark-web listing's contract: records under a domain (and
			// its subdomains) by ingest time, inclusive bounds.
			var records []alerts.CredentialItem
			list := func(_ context.Context, domains []string, from, to int64, limit, offset int) ([]alerts.CredentialItem, error) {
				var out []alerts.CredentialItem
				for _, r := range records {
					_, dom, _ := strings.Cut(r.Email, "@")
					if r.DateAdded >= from && r.DateAdded <= to && (dom == domains[0] || strings.HasSuffix(dom, "."+domains[0])) {
						out = append(out, r)
					}
				}
				if offset >= len(out) {
					return nil, nil
				}
				return out[offset:min(offset+limit, len(out))], nil
			}
			verified := func(ctx context.Context) ([]periscope.Asset, error) { return nil, nil }
			if c.verified {
				verified = func(ctx context.Context) ([]periscope.Asset, error) { return db.AllAssets(ctx, periscope.AssetDomain) }
			}
			w := &alerts.Worker{DB: db, Alerts: st, Feeds: []alerts.Feed{alerts.CredentialFeed(st, db.AllAssets, verified, list, db.Now, time.Hour, 30*time.Second)}}
			add := func(id, email, breach string) {
				records = append(records, alerts.CredentialItem{ID: id, Email: email, Breach: breach, Source: "combolist", DateAdded: now.Unix()})
			}
			add("1", "old@example.com", "Old") // within the baseline
			now = now.Add(10 * time.Minute)
			if _, err := w.StepFeeds(ctx); err != nil {
				t.Fatal(err)
			}
			now = now.Add(2 * time.Hour)
			add("2", "jane@example.com", "Fresh")
			add("3", "joe@mail.example.org", "Fresh")
			now = now.Add(time.Minute)
			if _, err := w.StepFeeds(ctx); err != nil {
				t.Fatal(err)
			}
			now = now.Add(time.Minute)
			if _, err := w.StepFeeds(ctx); err != nil {
				t.Fatal(err)
			}
			l, err := st.Alerts(ctx, alertstore.AlertQuery{AccountID: acct.ID, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if len(l) != 1 || l[0].Type != alerts.TypeCompromisedCredential || l[0].Count != 1 || !strings.Contains(l[0].Title, "2 accounts") ||
				!strings.Contains(l[0].Message, "Fresh") || strings.Contains(l[0].Message, "Old") {
				t.Fatalf("alerts: %+v", l)
			}
			if got := strings.Contains(string(l[0].Evidence), `"masked_reason":"domain_not_verified"`); got == c.verified {
				t.Fatalf("verified %v, evidence %s", c.verified, l[0].Evidence)
			}
		})
	}
}
