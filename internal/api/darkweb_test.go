package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/scanstore"
)

// seedDarkweb stores synthetic records (reserved domains only).
func seedDarkweb(t *testing.T, e *apitest.Env) {
	t.Helper()
	recs := []darkweb.Record{
		{Email: "alice@example.com", Password: "AlicePass123", Name: "Alice Example", Breach: "ExampleLeak", BreachDate: "2021-05-06", Source: "breach-csv"},
		{Email: "bob@mail.example.com", HashedPassword: []string{strings.Repeat("0f", 20)}, Breach: "ExampleLeak", Source: "dehashed"},
		{Email: "carol@example.org", Password: "CarolPass456", Phone: "202-555-0101", Breach: "OtherLeak", Source: "combolist"},
		{Email: "dave@example.com", Name: "Dave NoSecret", Breach: "OtherLeak", Source: "breach-csv"},
	}
	n := e.Darkweb.Normalizer()
	for i := range recs {
		if err := n.Clean(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Darkweb.Add(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
}

// oemWithDomain makes an OEM account whose organization claims domain
// ("" for none), verified as the operator would (org authorize-domain).
func oemWithDomain(t *testing.T, e *apitest.Env, company, domain string) (periscope.Account, string) {
	a, key, org := oemClaiming(t, e, company, domain)
	if domain != "" {
		if err := scanstore.New(e.Store).Authorize(context.Background(), org, periscope.AssetDomain, domain, scanstore.MethodOperator); err != nil {
			t.Fatal(err)
		}
	}
	return a, key
}

// oemClaiming makes an OEM account whose organization claims domain ("" for
// none) without proving it, and returns the organization's id.
func oemClaiming(t *testing.T, e *apitest.Env, company, domain string) (periscope.Account, string, string) {
	a, key := e.Account(periscope.Account{Company: company, Enterprise: true, OEM: true, CreditsPerMonth: 100, OEMCreditsPerMonth: 100, MaxResultsPerRequest: 50})
	org := ""
	if domain != "" {
		r := e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]string{"name": company + " org"})
		org = r.Map(t)["id"].(string)
		if r := e.Do("POST", "/api/v1/enterprise/organizations/"+org+"/domains", key, map[string]string{"domain": domain}); r.Status != 201 {
			t.Fatalf("claim %s: %d %s", domain, r.Status, r.Body)
		}
	}
	return a, key, org
}

func oemUsed(t *testing.T, e *apitest.Env, id string) int64 {
	a, err := e.Store.Account(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a.OEMCreditsUsed
}

func TestDarkwebSearch(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		seedDarkweb(t, e)
		owner, ownerKey := oemWithDomain(t, e, "Owner", "example.com")
		other, otherKey := oemWithDomain(t, e, "Other", "")
		var got struct {
			Response []map[string]any `json:"response"`
		}
		r := e.Do("POST", "/api/v1/oem/darkweb/search", ownerKey, map[string]any{"query": "ALICE@example.com", "query_tags": map[string]string{"case": "1"}})
		if r.Status != 200 {
			t.Fatalf("search: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &got)
		if len(got.Response) != 1 || got.Response[0]["password"] != "AlicePass123" || got.Response[0]["database_name"] != "ExampleLeak" || got.Response[0]["breach_date"] != "2021-05-06" {
			t.Fatalf("owner sees %s", r.Body)
		}
		if oemUsed(t, e, owner.ID) != 1 {
			t.Fatalf("credits used %d, want 1", oemUsed(t, e, owner.ID))
		}
		// Another account sees the password masked, the hash type kept.
		r = e.Do("POST", "/api/v1/oem/darkweb/search", otherKey, map[string]any{"query": "alice@example.com", "type": "email"})
		r.JSON(t, &got)
		if got.Response[0]["password"] != "A**********3" || got.Response[0]["masked"] != true {
			t.Fatalf("other sees %s", r.Body)
		}
		r = e.Do("POST", "/api/v1/oem/darkweb/search", otherKey, map[string]any{"query": "example.com", "type": "domain"})
		r.JSON(t, &got)
		if len(got.Response) != 3 {
			t.Fatalf("domain search: %s", r.Body)
		}
		for _, rec := range got.Response {
			if rec["email"] == "bob@mail.example.com" {
				h := rec["hashed_password"].([]any)[0].(string)
				if rec["hash_type"] != "sha1" || h != "0"+strings.Repeat("*", 38)+"f" {
					t.Fatalf("hash not masked: %v", rec)
				}
			}
		}
		// --reveal-secrets shows everything.
		if err := e.Darkweb.SetReveal(context.Background(), other.ID, true); err != nil {
			t.Fatal(err)
		}
		r = e.Do("POST", "/api/v1/oem/darkweb/search", otherKey, map[string]any{"query": "202 555 0101", "type": "phone", "no_cache": true})
		r.JSON(t, &got)
		if len(got.Response) != 1 || got.Response[0]["password"] != "CarolPass456" || got.Response[0]["phone"] != "+12025550101" {
			t.Fatalf("revealed: %s", r.Body)
		}
		before := oemUsed(t, e, other.ID)
		for _, bad := range []map[string]any{
			{"query": "x", "type": "shoe_size"}, {"query": ""}, {"type": "email"}, {"query": "not-an-email"},
			{"query": "a@example.com", "from": "2021-01-01"}, {"query": "a@example.com", "from": "02-01-2022", "to": "01-01-2022"},
			{"query": "bad\u0000nul"},
		} {
			if r := e.Do("POST", "/api/v1/oem/darkweb/search", otherKey, bad); r.Status != 400 {
				t.Errorf("%v: %d %s", bad, r.Status, r.Body)
			}
		}
		if oemUsed(t, e, other.ID) != before {
			t.Fatal("a 400 was charged")
		}
		r = e.Do("POST", "/api/v1/oem/darkweb/search", otherKey, map[string]any{"query": "nobody@example.net", "size": 10})
		if r.Status != 200 || strings.TrimSpace(string(r.Body)) != `{"response":[]}` {
			t.Fatalf("no match: %d %s", r.Status, r.Body)
		}
		// Dates bound date_added (the store's clock: 2026-11-22).
		r = e.Do("POST", "/api/v1/oem/darkweb/search", otherKey, map[string]any{"query": "example.com", "type": "domain", "from": "23-11-2026"})
		r.JSON(t, &got)
		if len(got.Response) != 0 {
			t.Fatalf("from after date_added: %s", r.Body)
		}
		r = e.Do("POST", "/api/v1/oem/darkweb/search", otherKey, map[string]any{"query": "example.com", "type": "domain", "from": "22-11-2026", "to": "22-11-2026", "no_cache": true})
		r.JSON(t, &got)
		if len(got.Response) != 3 {
			t.Fatalf("inclusive day: %s", r.Body)
		}
	})
}

func TestDarkwebSearchCache(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		_, key := oemWithDomain(t, e, "Cacher", "")
		var got struct {
			Response []map[string]any `json:"response"`
		}
		e.Do("POST", "/api/v1/oem/darkweb/search", key, map[string]any{"query": "alice@example.com"}).JSON(t, &got)
		if len(got.Response) != 0 {
			t.Fatal("record before seeding")
		}
		seedDarkweb(t, e)
		e.Do("POST", "/api/v1/oem/darkweb/search", key, map[string]any{"query": "alice@example.com"}).JSON(t, &got)
		if len(got.Response) != 0 {
			t.Fatal("cached answer not reused")
		}
		e.Do("POST", "/api/v1/oem/darkweb/search", key, map[string]any{"query": "alice@example.com", "no_cache": true}).JSON(t, &got)
		if len(got.Response) != 1 {
			t.Fatal("no_cache did not bypass")
		}
		e.Clock.Advance(25 * time.Hour)
		e.Do("POST", "/api/v1/oem/darkweb/search", key, map[string]any{"query": "dave@example.com"}).JSON(t, &got)
		if len(got.Response) != 1 {
			t.Fatal("search failed after a day")
		}
	})
}

func TestDarkwebEnterpriseListings(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		seedDarkweb(t, e)
		_, key := oemWithDomain(t, e, "Lister", "example.com")
		_, outsider := oemWithDomain(t, e, "Outsider", "example.net")
		var creds struct {
			TotalResults      int              `json:"total_results"`
			TotalQueryResults int              `json:"total_query_results"`
			Results           []map[string]any `json:"results"`
		}
		e.Do("GET", "/api/v1/enterprise/darkweb/compromised-credentials", key, nil).JSON(t, &creds)
		if creds.TotalResults != 2 || len(creds.Results) != 2 || creds.Results[0]["password"] == nil {
			t.Fatalf("credentials: %+v", creds)
		}
		for _, r := range creds.Results {
			if r["email"] == "alice@example.com" && r["password"] != "AlicePass123" {
				t.Fatalf("own record masked: %v", r)
			}
		}
		e.Do("GET", "/api/v1/enterprise/darkweb/compromised-credentials?query=mail.example.com", key, nil).JSON(t, &creds)
		if creds.TotalQueryResults != 1 || creds.TotalResults != 2 {
			t.Fatalf("subdomain query: %+v", creds)
		}
		e.Do("GET", "/api/v1/enterprise/darkweb/compromised-credentials?query=example.org", key, nil).JSON(t, &creds)
		if creds.TotalQueryResults != 0 || len(creds.Results) != 0 {
			t.Fatalf("foreign domain listed: %+v", creds)
		}
		e.Do("GET", "/api/v1/enterprise/darkweb/compromised-credentials", outsider, nil).JSON(t, &creds)
		if creds.TotalResults != 0 {
			t.Fatalf("outsider sees %+v", creds)
		}
		var emails struct {
			TotalQueryResults int `json:"total_query_results"`
			Results           struct {
				Items   []map[string]any `json:"items"`
				PerPage int              `json:"per_page"`
			} `json:"results"`
		}
		e.Do("GET", "/api/v1/enterprise/darkweb/discovered-emails?per_page=2", key, nil).JSON(t, &emails)
		if emails.TotalQueryResults != 3 || len(emails.Results.Items) != 2 || emails.Results.PerPage != 2 {
			t.Fatalf("emails: %+v", emails)
		}
		e.Do("GET", "/api/v1/enterprise/darkweb/discovered-emails?q=alice@example.com", key, nil).JSON(t, &emails)
		if emails.TotalQueryResults != 1 || emails.Results.Items[0]["breaches"].([]any)[0] != "ExampleLeak" {
			t.Fatalf("one email: %+v", emails)
		}
		if r := e.Do("GET", "/api/v1/enterprise/darkweb/discovered-emails?from=bad", key, nil); r.Status != 400 {
			t.Fatalf("bad date: %d", r.Status)
		}
		// A record ingested after the domain was claimed appears at once.
		rec := darkweb.Record{Email: "new@example.com", Password: "NewPass1", Breach: "Later", Source: "combolist"}
		e.Darkweb.Normalizer().Clean(&rec)
		e.Darkweb.Add(context.Background(), []darkweb.Record{rec})
		e.Do("GET", "/api/v1/enterprise/darkweb/discovered-emails", key, nil).JSON(t, &emails)
		if emails.TotalQueryResults != 4 {
			t.Fatalf("new record missing: %+v", emails)
		}
	})
}

// TestDarkwebUnverifiedClaimMasked is the attack of issue 29: an account
// claims a domain it does not own (gmail.com, here example.com) without
// verifying it. It must see only masked records, saying why, in the OEM
// search (fresh and from the cache) and the enterprise listing; verifying
// the domain (the operator's authorisation) shows them; removing and
// adding the claim again masks them again.
func TestDarkwebUnverifiedClaimMasked(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		seedDarkweb(t, e)
		_, key, org := oemClaiming(t, e, "Claimer", "example.com")
		var got struct {
			Response []map[string]any `json:"response"`
		}
		masked := func(where string, recs []map[string]any, want int) {
			t.Helper()
			if len(recs) != want {
				t.Fatalf("%s: %d records, want %d", where, len(recs), want)
			}
			for _, rec := range recs {
				if rec["masked"] != true || rec["masked_reason"] != "domain_not_verified" {
					t.Fatalf("%s: not masked as domain_not_verified: %v", where, rec)
				}
				if p, _ := rec["password"].(string); strings.Contains(p, "Pass") {
					t.Fatalf("%s: password in clear: %v", where, rec)
				}
				for _, h := range rec["hashed_password"].([]any) {
					if strings.Contains(h.(string), "0f0f") {
						t.Fatalf("%s: hash in clear: %v", where, rec)
					}
				}
			}
		}
		for _, where := range []string{"search", "search from the cache"} {
			r := e.Do("POST", "/api/v1/oem/darkweb/search", key, map[string]any{"query": "example.com", "type": "domain"})
			if r.Status != 200 {
				t.Fatalf("%s: %d %s", where, r.Status, r.Body)
			}
			r.JSON(t, &got)
			masked(where, got.Response, 3)
		}
		e.Do("POST", "/api/v1/oem/darkweb/search", key, map[string]any{"query": "alice@example.com"}).JSON(t, &got)
		masked("email search", got.Response, 1)
		var creds struct {
			TotalResults int              `json:"total_results"`
			Results      []map[string]any `json:"results"`
		}
		e.Do("GET", "/api/v1/enterprise/darkweb/compromised-credentials?per_page=1000", key, nil).JSON(t, &creds)
		masked("listing", creds.Results, 2)
		e.Do("GET", "/api/v1/enterprise/darkweb/compromised-credentials?query=mail.example.com", key, nil).JSON(t, &creds)
		masked("narrowed listing", creds.Results, 1)
		// Records under no claimed domain say so.
		e.Do("POST", "/api/v1/oem/darkweb/search", key, map[string]any{"query": "carol@example.org"}).JSON(t, &got)
		if len(got.Response) != 1 || got.Response[0]["masked_reason"] != "domain_not_claimed" {
			t.Fatalf("unclaimed: %v", got.Response)
		}

		// The operator authorises the domain: secrets in clear, no reason.
		ss := scanstore.New(e.Store)
		if err := ss.Authorize(context.Background(), org, periscope.AssetDomain, "example.com", scanstore.MethodOperator); err != nil {
			t.Fatal(err)
		}
		got.Response = nil
		e.Do("POST", "/api/v1/oem/darkweb/search", key, map[string]any{"query": "alice@example.com"}).JSON(t, &got)
		if len(got.Response) != 1 || got.Response[0]["password"] != "AlicePass123" || got.Response[0]["masked"] != false {
			t.Fatalf("verified: %v", got.Response)
		}
		if _, ok := got.Response[0]["masked_reason"]; ok {
			t.Fatalf("masked_reason on a clear record: %v", got.Response[0])
		}
		creds.Results = nil
		e.Do("GET", "/api/v1/enterprise/darkweb/compromised-credentials", key, nil).JSON(t, &creds)
		for _, rec := range creds.Results {
			if rec["masked"] != false {
				t.Fatalf("verified listing: %v", rec)
			}
		}
		// Removed and claimed again: the verification no longer counts.
		e.Clock.Advance(time.Second)
		for _, m := range []string{"DELETE", "POST"} {
			if r := e.Do(m, "/api/v1/enterprise/organizations/"+org+"/domains", key, map[string]string{"domain": "example.com"}); r.Status/100 != 2 {
				t.Fatalf("%s claim: %d %s", m, r.Status, r.Body)
			}
		}
		creds.Results = nil
		e.Do("GET", "/api/v1/enterprise/darkweb/compromised-credentials", key, nil).JSON(t, &creds)
		masked("listing after a new claim", creds.Results, 2)
	})
}
