package api_test

import (
	"context"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/whoislookup"
	"github.com/periscope-oss/periscope/internal/whoisstore"
)

// TestOrganizationsDB builds profiles from recorded WHOIS answers (the
// demo's), hosts with certificates and ASN metadata, and dark-web records.
func TestOrganizationsDB(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		acct, key := e.Account(periscope.Account{Company: "Orgs Co", Plan: "free", CreditsPerMonth: 20})
		_, oemKey := e.Account(periscope.Account{Company: "Orgs OEM", Plan: "enterprise", Enterprise: true, OEM: true, CreditsPerMonth: 20, OEMCreditsPerMonth: 20})
		seedOrgData(t, e)

		type profile struct {
			Domain        string              `json:"domain"`
			CompanyName   string              `json:"company_name"`
			OtherNames    []string            `json:"other_names"`
			Subsidiaries  []any               `json:"subsidiaries"`
			StockInfo     map[string]string   `json:"stock_info"`
			OtherDomains  []string            `json:"other_domains"`
			ASNs          []map[string]any    `json:"asns"`
			HostsCount    int                 `json:"hosts_count"`
			BreachRecords int                 `json:"breach_records"`
			Sources       map[string][]string `json:"sources"`
		}
		var out struct {
			Response []profile `json:"response"`
		}
		r := doJSON(t, e, http.MethodGet, "/api/v1/organizations-db/search?query=google+llc", key, nil, &out)
		if r.Status != 200 || len(out.Response) != 1 {
			t.Fatalf("by name: %d %s", r.Status, r.Body)
		}
		p := out.Response[0]
		if p.CompanyName != "Google LLC" || p.Domain != "google.com" || !slices.Equal(p.OtherDomains, []string{"google.io", "youtube.com"}) ||
			len(p.ASNs) != 1 || p.HostsCount != 3 || p.BreachRecords != 2 || p.Subsidiaries == nil || p.StockInfo["stock_symbol"] != "" {
			t.Errorf("profile: %s", r.Body)
		}
		if !slices.Equal(p.Sources["domain"], []string{"certificate_subject", "whois_registrant"}) || !slices.Equal(p.Sources["asns"], []string{"asn_organization"}) ||
			!slices.Equal(p.Sources["breach_records"], []string{"darkweb"}) || !slices.Contains(p.Sources["company_name"], "whois_registrant") {
			t.Errorf("sources: %v", p.Sources)
		}
		// By domain: the organizations it names.
		out.Response = nil
		if r := doJSON(t, e, http.MethodGet, "/api/v1/organizations-db/search?query=youtube.com", key, nil, &out); r.Status != 200 || len(out.Response) != 1 || out.Response[0].CompanyName != "Google LLC" {
			t.Errorf("by domain: %d %s", r.Status, r.Body)
		}
		// A privacy placeholder is no organization.
		out.Response = nil
		if r := doJSON(t, e, http.MethodGet, "/api/v1/organizations-db/search?query=REDACTED", key, nil, &out); r.Status != 200 || len(out.Response) != 0 {
			t.Errorf("redacted: %d %s", r.Status, r.Body)
		}
		out.Response = nil
		if r := doJSON(t, e, http.MethodPost, "/api/v1/oem/organizations/search", oemKey, map[string]any{"type": "organization", "query": "GitHub"}, &out); r.Status != 200 ||
			len(out.Response) != 1 || out.Response[0].Domain != "github.me" {
			t.Errorf("OEM by name: %d %s", r.Status, r.Body)
		}
		for q, want := range map[string]int{"": 400, "?query=": 400, "?query=ab": 400, "?query=" + strings.Repeat("a", 101): 400} {
			if r := e.Do(http.MethodGet, "/api/v1/organizations-db/search"+q, key, nil); r.Status != want {
				t.Errorf("%q: %d %s", q, r.Status, r.Body)
			}
		}
		for body, want := range map[string]int{`{"query":"Google LLC"}`: 400, `{"type":"company","query":"Google LLC"}`: 400, `{"type":"domain","query":"not a domain"}`: 400} {
			if r := e.Do(http.MethodPost, "/api/v1/oem/organizations/search", oemKey, body); r.Status != want {
				t.Errorf("%s: %d %s", body, r.Status, r.Body)
			}
		}
		if r := e.Do(http.MethodPost, "/api/v1/oem/organizations/search", key, `{"type":"organization","query":"Google LLC"}`); r.Status != 403 {
			t.Errorf("without OEM: %d", r.Status)
		}
		if a, err := e.Store.Account(ctx, acct.ID); err != nil || a.CreditsUsed != 3 {
			t.Errorf("credits used %d (%v), want 3", a.CreditsUsed, err)
		}
	})
}

// seedOrgData stores recorded WHOIS answers (the demo's), hosts with
// certificates and ASN metadata, and dark-web records under google.com.
func seedOrgData(t *testing.T, e *apitest.Env) {
	t.Helper()
	ctx := context.Background()
	ws := whoisstore.New(e.Store)
	for _, f := range []string{"com_google.com.txt", "io_google.io.txt", "me_github.me.txt", "org_github.org.txt"} {
		b, err := os.ReadFile("../../cmd/periscope/demodata/whois/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := whoislookup.Ingest(ctx, ws, b, f, e.Clock.Now(), whoislookup.DefaultCacheTTL); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	gmeta := host.IPMetadata{ASN: 15169, Organization: "Google LLC"}
	if _, err := e.Hosts.UpsertHosts(ctx, []host.Host{
		{Host: "www.google.com", IPAddress: "142.250.1.1", IPMetadata: gmeta, Cert: host.Cert{SubjectCommonName: "www.google.com", SubjectOrg: "Google LLC", SHA256Fingerprint: "aa"}},
		{Host: "mail.google.com", IPAddress: "142.250.1.2", IPMetadata: gmeta},
		{Host: "www.youtube.com", IPAddress: "142.250.1.3", IPMetadata: gmeta, Cert: host.Cert{SubjectCommonName: "www.youtube.com", SubjectOrg: "Google LLC", SHA256Fingerprint: "bb"}},
	}); err != nil {
		t.Fatal(err)
	}
	recs := []darkweb.Record{{Email: "alice@google.com", Password: "x1", Breach: "TestBreach", Source: "combolist"},
		{Email: "bob@google.com", Password: "x2", Breach: "TestBreach", Source: "combolist"}}
	for i := range recs {
		if err := e.Darkweb.Normalizer().Clean(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Darkweb.Add(ctx, recs); err != nil {
		t.Fatal(err)
	}

}

func TestSuggestedDomains(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		seedOrgData(t, e)
		_, key := e.Account(periscope.Account{Company: "Suggest Co", Plan: "enterprise", Enterprise: true, CreditsPerMonth: 10})
		_, otherKey := e.Account(periscope.Account{Company: "Other Suggest Co", Plan: "enterprise", Enterprise: true, CreditsPerMonth: 10})
		type answer struct {
			Total      int    `json:"total_results"`
			PerPage    int    `json:"per_page"`
			TotalQuery int    `json:"total_query_results"`
			Query      string `json:"query"`
			Results    []struct {
				Domain string         `json:"suggested_domain"`
				Method string         `json:"identification_method"`
				Data   map[string]any `json:"discovery_data"`
			} `json:"results"`
		}
		var a answer
		if r := doJSON(t, e, http.MethodGet, "/api/v1/enterprise/suggested-domains", key, nil, &a); r.Status != 200 || a.Total != 0 || len(a.Results) != 0 {
			t.Fatalf("no organization yet: %d %s", r.Status, r.Body)
		}
		var org struct {
			ID string `json:"id"`
		}
		e.Do(http.MethodPost, "/api/v1/enterprise/organizations", key, map[string]any{"name": "G"}).JSON(t, &org)
		if r := e.Do(http.MethodPost, "/api/v1/enterprise/organizations/"+org.ID+"/domains", key, map[string]any{"domain": "google.com"}); r.Status != 201 {
			t.Fatalf("add domain: %d %s", r.Status, r.Body)
		}
		a = answer{}
		r := doJSON(t, e, http.MethodGet, "/api/v1/enterprise/suggested-domains", key, nil, &a)
		got := map[string]string{}
		for _, x := range a.Results {
			got[x.Domain] = x.Method
			if x.Data["owned_domain"] != "google.com" || x.Data["matched"] == "" {
				t.Errorf("discovery data: %v", x)
			}
		}
		if r.Status != 200 || a.PerPage != 1000 || a.Total != 2 || got["youtube.com"] != "certificate_subject_organization" ||
			(got["google.io"] != "whois_registrant_organization" && got["google.io"] != "shared_name_servers_and_registrant" && got["google.io"] != "whois_registrant_email") {
			t.Fatalf("suggestions: %d %s", r.Status, r.Body)
		}
		a = answer{}
		if r := doJSON(t, e, http.MethodGet, "/api/v1/enterprise/suggested-domains?query=YouTube", key, nil, &a); r.Status != 200 || a.Total != 2 || a.TotalQuery != 1 || a.Results[0].Domain != "youtube.com" {
			t.Errorf("query: %d %s", r.Status, r.Body)
		}
		// Once an asset, a domain is no longer suggested.
		e.Do(http.MethodPost, "/api/v1/enterprise/organizations/"+org.ID+"/domains", key, map[string]any{"domain": "youtube.com"})
		a = answer{}
		if r := doJSON(t, e, http.MethodGet, "/api/v1/enterprise/suggested-domains", key, nil, &a); r.Status != 200 || a.Total != 1 || a.Results[0].Domain != "google.io" {
			t.Errorf("after adding youtube.com: %d %s", r.Status, r.Body)
		}
		a = answer{}
		if r := doJSON(t, e, http.MethodGet, "/api/v1/enterprise/suggested-domains", otherKey, nil, &a); r.Status != 200 || a.Total != 0 {
			t.Errorf("another account: %d %s", r.Status, r.Body)
		}
		for _, bad := range []string{"?page=0", "?from=31-12-2026", "?to=yesterday"} {
			if r := e.Do(http.MethodGet, "/api/v1/enterprise/suggested-domains"+bad, key, nil); r.Status != 400 {
				t.Errorf("%s: %d %s", bad, r.Status, r.Body)
			}
		}
		_, free := e.Account(periscope.Account{Company: "Free Suggest", CreditsPerMonth: 1})
		if r := e.Do(http.MethodGet, "/api/v1/enterprise/suggested-domains", free, nil); r.Status != 403 {
			t.Errorf("free account: %d", r.Status)
		}
	})
}
