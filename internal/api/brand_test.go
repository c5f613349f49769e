package api_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/brandwatch"
	"github.com/periscope-oss/periscope/internal/cert"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
)

// brandEnv runs the API with a brand monitor that reconciles synchronously
// when organizations' domains change, so tests see the effect at once.
func brandEnv(t *testing.T, fn func(t *testing.T, e *apitest.Env, m *brandwatch.Watcher)) {
	var m *brandwatch.Watcher
	eachWith(t, apitest.Options{Deps: func(d *api.Deps, s *store.Store) {
		m = d.Brand.(*brandwatch.Watcher) // apitest's, on the test's database
		d.AssetsChanged = func() {
			if err := m.Reconcile(context.Background()); err != nil {
				t.Errorf("reconcile: %v", err)
			}
		}
	}}, func(t *testing.T, e *apitest.Env) { fn(t, e, m) })
}

func selfSigned(t *testing.T, names ...string) cert.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{
		SerialNumber: big.NewInt(4242), Subject: pkix.Name{CommonName: names[0], Organization: []string{"Acme Inc"}},
		Issuer:    pkix.Name{CommonName: names[0]},
		NotBefore: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
		DNSNames: names,
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cert.Parse(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type findingItem struct {
	Domain         string           `json:"domain"`
	BaseDomain     string           `json:"base_domain"`
	Type           string           `json:"type"`
	DNS            map[string]any   `json:"dns"`
	DNSHistory     []map[string]any `json:"dns_history"`
	OrganizationID string           `json:"organization_id"`
	Fuzzer         string           `json:"fuzzer"`
	Score          int              `json:"score"`
	DateAdded      int64            `json:"date_added"`
}

type listing[T any] struct {
	Status            int    `json:"status"`
	Query             string `json:"query"`
	Page              int    `json:"page"`
	TotalResults      int    `json:"total_results"`
	TotalQueryResults int    `json:"total_query_results"`
	Results           struct {
		Items   []T `json:"items"`
		Total   int `json:"total"`
		Page    int `json:"page"`
		PerPage int `json:"per_page"`
		Pages   int `json:"pages"`
	} `json:"results"`
}

func TestBrandListings(t *testing.T) {
	brandEnv(t, func(t *testing.T, e *apitest.Env, m *brandwatch.Watcher) {
		ctx := context.Background()
		// Observed before the domain is monitored: found by the backfill.
		if _, err := e.Hosts.UpsertHosts(ctx, []host.Host{
			{Host: "paypal-login.com", DNS: host.DNS{A: []string{"203.0.113.7"}}},
			{Host: "paypall.com"}, {Host: "paypa1.com"}, {Host: "paypai.com"},
		}); err != nil {
			t.Fatal(err)
		}
		acct, key := e.Account(periscope.Account{Company: "Acme", Plan: "enterprise", Enterprise: true, CreditsPerMonth: 100, MaxResultsPerRequest: 1000})
		_, otherKey := e.Account(periscope.Account{Company: "Other", Plan: "enterprise", Enterprise: true, CreditsPerMonth: 100, MaxResultsPerRequest: 1000})
		var org struct {
			ID string `json:"id"`
		}
		e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]any{"name": "Acme"}).JSON(t, &org)
		if r := e.Do("POST", "/api/v1/enterprise/organizations/"+org.ID+"/domains", key, map[string]any{"domain": "PayPal.com"}); r.Status != 201 {
			t.Fatalf("add domain: %d %s", r.Status, r.Body)
		}
		// Arriving afterwards: matched as it comes in.
		c := selfSigned(t, "www.paypal.com", "paypal.com")
		phishing := selfSigned(t, "paypal.secure-account.xyz")
		if _, err := m.IngestCerts(ctx, []brandstore.SeenCert{{Cert: c}, {Cert: phishing}}); err != nil {
			t.Fatal(err)
		}

		var typos listing[findingItem]
		r := e.Do("GET", "/api/v1/enterprise/darkweb/typosquatting", key, nil)
		r.JSON(t, &typos)
		if r.Status != 200 || typos.TotalResults != 3 || typos.TotalQueryResults != 3 || typos.Results.PerPage != 10 ||
			typos.Results.Pages != 1 || len(typos.Results.Items) != 3 || typos.Page != 1 || typos.Status != 200 {
			t.Fatalf("typosquatting: %d %s", r.Status, r.Body)
		}
		for i, it := range typos.Results.Items {
			if it.Type != "TypoSquatting" || it.BaseDomain != "paypal.com" || it.OrganizationID != org.ID || it.Fuzzer == "" ||
				it.DateAdded != e.Clock.Now().Unix() || len(it.DNS) != 7 || it.DNSHistory == nil {
				t.Errorf("item %+v", it)
			}
			if i > 0 && it.Score > typos.Results.Items[i-1].Score {
				t.Errorf("items not ordered by score: %+v", typos.Results.Items)
			}
		}
		if strings.Contains(string(r.Body), "null") {
			t.Errorf("null in %s", r.Body)
		}

		var phish listing[findingItem]
		e.Do("GET", "/api/v1/enterprise/darkweb/potential-phishing?q=LOGIN", key, nil).JSON(t, &phish)
		if phish.TotalResults != 2 || phish.TotalQueryResults != 1 || phish.Query != "LOGIN" || phish.Results.PerPage != 1000 ||
			len(phish.Results.Items) != 1 || phish.Results.Items[0].Domain != "paypal-login.com" || len(phish.Results.Items[0].DNSHistory) != 1 {
			t.Errorf("phishing: %+v", phish)
		}

		// Dates: DD/MM/YYYY and ISO, inclusive; paging extension.
		for _, c := range []struct {
			query      string
			total, got int
		}{
			{"from=22/11/2026&to=22/11/2026", 3, 3},
			{"from=2026-11-22", 3, 3},
			{"from=23/11/2026", 0, 0},
			{"to=21/11/2026", 0, 0},
			{"per_page=2&page=2", 3, 1},
			{"per_page=2&page=9", 3, 0},
			{"q=paypa1", 1, 1},
			{"q=PAYPA1", 1, 1},
		} {
			var l listing[findingItem]
			r := e.Do("GET", "/api/v1/enterprise/darkweb/typosquatting?"+c.query, key, nil)
			r.JSON(t, &l)
			if r.Status != 200 || l.TotalQueryResults != c.total || len(l.Results.Items) != c.got || l.TotalResults != 3 {
				t.Errorf("%s: %d %s", c.query, r.Status, r.Body)
			}
			if c.got == 0 && !strings.Contains(string(r.Body), `"items":[]`) {
				t.Errorf("%s: empty items not []: %s", c.query, r.Body)
			}
		}

		var certs listing[map[string]any]
		r = e.Do("GET", "/api/v1/enterprise/certificates?q="+c.SHA256, key, nil)
		r.JSON(t, &certs)
		if r.Status != 200 || certs.TotalQueryResults != 1 || certs.Results.PerPage != 10 {
			t.Fatalf("certificates: %d %s", r.Status, r.Body)
		}
		it := certs.Results.Items[0]
		if it["id"] != c.SHA256 || it["type"] != "Certificate" || it["domain_name"] != "www.paypal.com" ||
			it["date_added"] != "2026-11-22T12:00:00Z" || it["serial_number"] != "1092" || it["organization_id"] != org.ID {
			t.Errorf("certificate item %v", it)
		}
		if r := e.Do("GET", "/api/v1/enterprise/certificates?q=nothing-like-this", key, nil); !strings.Contains(string(r.Body), `"items":[]`) {
			t.Errorf("no match: %s", r.Body)
		}

		// Tenancy: another account sees nothing.
		for _, p := range []string{"darkweb/potential-phishing", "darkweb/typosquatting", "certificates"} {
			var l listing[map[string]any]
			r := e.Do("GET", "/api/v1/enterprise/"+p+"?q=paypal", otherKey, nil)
			r.JSON(t, &l)
			if r.Status != 200 || l.TotalResults != 0 || l.TotalQueryResults != 0 || len(l.Results.Items) != 0 {
				t.Errorf("other account, %s: %d %s", p, r.Status, r.Body)
			}
		}

		// Bad input.
		for _, q := range []string{"page=0", "page=x", "per_page=0", "per_page=1001", "per_page=1.5", "from=31/02/2026",
			"from=2026/11/22", "to=yesterday", "to=31/12/1969", "q=%FF%FE", "q=a%00b", "from=23/11/2026&to=22/11/2026", "q=" + strings.Repeat("a", 300)} {
			for _, p := range []string{"darkweb/potential-phishing", "darkweb/typosquatting", "certificates"} {
				want := "invalid_parameter"
				if strings.Contains(q, "%FF") || strings.Contains(q, "%00") {
					want = "invalid_text" // refused for every route before the handler
				}
				if r := e.Do("GET", "/api/v1/enterprise/"+p+"?"+q, key, nil); r.Status != 400 || r.ErrorCode() != want {
					t.Errorf("%s?%s: %d %s", p, q, r.Status, r.Body)
				}
			}
		}

		// A Unicode filter finds the punycode name.
		if _, err := e.Brand.UpsertFindings(ctx, []brandstore.Finding{{OrganizationID: org.ID, AccountID: acct.ID, Kind: "PotentialPhishing",
			Domain: "xn--paypal-bcher-klb.com", BaseDomain: "paypal.com", Score: 50, Reason: "test"}}); err != nil {
			t.Fatal(err)
		}
		e.Do("GET", "/api/v1/enterprise/darkweb/potential-phishing?q=paypal-b%C3%BCcher", key, nil).JSON(t, &phish)
		if phish.TotalQueryResults != 1 || phish.Query != "paypal-bücher" {
			t.Errorf("unicode filter: %+v", phish)
		}

		// Deleting an organization removes its findings and links.
		var org2 struct {
			ID string `json:"id"`
		}
		e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]any{"name": "Second"}).JSON(t, &org2)
		e.Do("POST", "/api/v1/enterprise/organizations/"+org2.ID+"/domains", key, map[string]any{"domain": "paypal.com"})
		e.Do("GET", "/api/v1/enterprise/darkweb/typosquatting", key, nil).JSON(t, &typos)
		if typos.TotalResults != 6 {
			t.Errorf("two organizations monitoring paypal.com: %d findings, want 6", typos.TotalResults)
		}
		if r := e.Do("DELETE", "/api/v1/enterprise/organizations/"+org2.ID, key, nil); r.Status != 200 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		e.Do("GET", "/api/v1/enterprise/darkweb/typosquatting", key, nil).JSON(t, &typos)
		if typos.TotalResults != 3 {
			t.Errorf("after deleting the organization: %d findings, want 3", typos.TotalResults)
		}
	})
}

func TestBrandOEMSearch(t *testing.T) {
	brandEnv(t, func(t *testing.T, e *apitest.Env, m *brandwatch.Watcher) {
		ctx := context.Background()
		if _, err := e.Hosts.UpsertHosts(ctx, []host.Host{
			{Host: "githuh.com", DNS: host.DNS{A: []string{"203.0.113.9"}}},
			{Host: "github-login.xyz"}, {Host: "paypal-login.com"}, {Host: "paypall.com"},
		}); err != nil {
			t.Fatal(err)
		}
		_, ent := e.Account(periscope.Account{Company: "Acme", Plan: "enterprise", Enterprise: true, CreditsPerMonth: 100})
		var org struct {
			ID string `json:"id"`
		}
		e.Do("POST", "/api/v1/enterprise/organizations", ent, map[string]any{"name": "Acme"}).JSON(t, &org)
		e.Do("POST", "/api/v1/enterprise/organizations/"+org.ID+"/domains", ent, map[string]any{"domain": "paypal.com"})
		_, oem := e.Account(periscope.Account{Company: "OEM", Plan: "enterprise", Enterprise: true, OEM: true, CreditsPerMonth: 100, OEMCreditsPerMonth: 100, MaxResultsPerRequest: 100})

		type searchResult struct {
			BaseDomain string        `json:"base_domain"`
			Total      int           `json:"total"`
			Phishing   []findingItem `json:"potential_phishing_domains"`
			Typos      []findingItem `json:"typosquatting_domains"`
		}
		var got searchResult
		// Computed on demand: github.com is not monitored.
		r := e.Do("POST", "/api/v1/oem/typosquatting/search", oem, map[string]any{"query": "GitHub.com", "query_tags": map[string]any{"tenant": "t1"}})
		r.JSON(t, &got)
		if r.Status != 200 || got.BaseDomain != "github.com" || got.Total != 1 || got.Typos[0].Domain != "githuh.com" || got.Typos[0].Fuzzer != "replacement" {
			t.Errorf("on-demand typosquatting: %d %s", r.Status, r.Body)
		}
		got = searchResult{}
		r = e.Do("POST", "/api/v1/oem/potential-phishing/search", oem, map[string]any{"query": "github.com"})
		r.JSON(t, &got)
		if r.Status != 200 || got.Total != 1 || got.Phishing[0].Domain != "github-login.xyz" {
			t.Errorf("on-demand phishing: %d %s", r.Status, r.Body)
		}
		// Monitored by another account: its findings, without its organization id.
		got = searchResult{}
		r = e.Do("POST", "/api/v1/oem/potential-phishing/search", oem, map[string]any{"query": "paypal.com"})
		r.JSON(t, &got)
		if r.Status != 200 || got.Total != 1 || got.Phishing[0].Domain != "paypal-login.com" || got.Phishing[0].OrganizationID != "" {
			t.Errorf("monitored phishing: %d %s", r.Status, r.Body)
		}
		if r := e.Do("POST", "/api/v1/oem/typosquatting/search", oem, map[string]any{"query": "nothing-here-at-all.org"}); r.Status != 200 ||
			!strings.Contains(string(r.Body), `"typosquatting_domains":[]`) {
			t.Errorf("no candidates: %d %s", r.Status, r.Body)
		}

		for _, c := range []struct {
			body any
			code string
		}{
			{map[string]any{"query": "co.uk"}, "invalid_parameter"},
			{map[string]any{"query": "com"}, "invalid_parameter"},
			{map[string]any{"query": strings.Repeat("a", 200) + ".com"}, "invalid_parameter"},
			{map[string]any{"query": "pаypal.com"}, "invalid_parameter"}, // Cyrillic а
			{map[string]any{"query": "exa mple.com"}, "invalid_parameter"},
			{map[string]any{"query": ""}, "missing_parameter"},
			{map[string]any{}, "missing_parameter"},
			{map[string]any{"query": 42}, "invalid_parameter"},
			{`{"query": "paypal.com"`, "invalid_json"},
		} {
			for _, p := range []string{"potential-phishing", "typosquatting"} {
				r := e.Do("POST", "/api/v1/oem/"+p+"/search", oem, c.body)
				if r.Status != 400 || r.ErrorCode() != c.code {
					t.Errorf("%s %v: %d %s, want 400 %s", p, c.body, r.Status, r.Body, c.code)
				}
			}
		}
		// A hostile query is refused with a short message that quotes it
		// whole characters at a time.
		for _, q := range []string{strings.Repeat("漢", 5000), strings.Repeat("漢", 100) + ".com"} {
			r := e.Do("POST", "/api/v1/oem/typosquatting/search", oem, map[string]any{"query": q})
			if r.Status != 400 || r.ErrorCode() != "invalid_parameter" || len(r.Body) > 1024 || !utf8.Valid(r.Body) ||
				strings.Contains(string(r.Body), `\x`) {
				t.Errorf("%d-character query: %d, %d bytes: %.300s", utf8.RuneCountInString(q), r.Status, len(r.Body), r.Body)
			}
		}
		// Only the four successful searches were charged.
		var cr struct {
			Response struct {
				CreditsRemaining int `json:"credits_remaining"`
			} `json:"response"`
		}
		e.Do("POST", "/api/v1/oem/account/credits", oem, nil).JSON(t, &cr)
		if cr.Response.CreditsRemaining != 96 {
			t.Errorf("credits remaining %d, want 96", cr.Response.CreditsRemaining)
		}
	})
}

// FuzzListingDate checks that a listing date is either refused with
// invalid_parameter or is the start (or last second) of a UTC day that
// reads back the same in DD/MM/YYYY.
func FuzzListingDate(f *testing.F) {
	for _, s := range []string{"22/11/2026", "2026-11-22", "31/02/2026", "1/1/2026", "", "29/02/2024", "99/99/9999"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, end bool) {
		v, err := api.ListingDate("from", s, end)
		if err != nil {
			if periscope.ErrorCode(err) != periscope.EInvalid {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		if s == "" {
			if v != 0 {
				t.Fatalf("empty date gave %d", v)
			}
			return
		}
		day := time.Unix(v, 0).UTC()
		if end {
			day = day.Add(-(24*time.Hour - time.Second))
		}
		if day.Hour() != 0 || day.Minute() != 0 || day.Second() != 0 {
			t.Fatalf("%q (end %v) gave %v, not a day boundary", s, end, time.Unix(v, 0).UTC())
		}
		back, err := api.ListingDate("from", day.Format("02/01/2006"), false)
		if err != nil || back != day.Unix() {
			t.Fatalf("%q: %v does not read back (%d, %v)", s, day, back, err)
		}
	})
}
