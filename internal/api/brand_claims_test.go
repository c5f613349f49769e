package api_test

import (
	"context"
	"slices"
	"testing"

	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/brandwatch"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// Issue 29, item 5: a brand finding whose name lies under a domain another
// account claims is shown to nobody but that account, in the listings and
// the OEM searches (stored and on demand) alike. The phishing monitor of
// example.org matches git.example.com ("example" is a whole token of it);
// example.com is the enterprise account's.
func TestBrandFindingsUnderAnotherAccountsClaim(t *testing.T) {
	brandEnv(t, func(t *testing.T, e *apitest.Env, m *brandwatch.Watcher) {
		ctx := context.Background()
		if _, err := e.Hosts.UpsertHosts(ctx, []host.Host{
			{Host: "git.example.com"}, {Host: "vpn.git.example.com"}, {Host: "example-login.xyz"},
			// Shown: its CNAME names a host under the other account's claim,
			// but a DNS answer is not what the finding is about.
			{Host: "example-secure.net", DNS: host.DNS{CNAME: []string{"edge.example.com"}}},
		}); err != nil {
			t.Fatal(err)
		}
		org := func(key, name, domain string) {
			var o struct {
				ID string `json:"id"`
			}
			e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]any{"name": name}).JSON(t, &o)
			if r := e.Do("POST", "/api/v1/enterprise/organizations/"+o.ID+"/domains", key, map[string]any{"domain": domain}); r.Status != 201 {
				t.Fatalf("claim %s: %d %s", domain, r.Status, r.Body)
			}
		}
		_, ent := e.Account(periscope.Account{Company: "Example Com", Plan: "enterprise", Enterprise: true, CreditsPerMonth: 100})
		org(ent, "Example Com", "example.com")
		oemAcct, oem := e.Account(periscope.Account{Company: "OEM", Plan: "enterprise", Enterprise: true, OEM: true,
			CreditsPerMonth: 100, OEMCreditsPerMonth: 100, MaxResultsPerRequest: 100})
		org(oem, "Example Org", "example.org")

		domains := func(items []findingItem) []string {
			var out []string
			for _, it := range items {
				out = append(out, it.Domain)
			}
			slices.Sort(out)
			return out
		}
		want := []string{"example-login.xyz", "example-secure.net"}
		var l struct {
			TotalResults      int `json:"total_results"`
			TotalQueryResults int `json:"total_query_results"`
			Results           struct {
				Items []findingItem `json:"items"`
				Total int           `json:"total"`
			} `json:"results"`
		}
		for _, path := range []string{"/api/v1/enterprise/darkweb/potential-phishing", "/api/v1/enterprise/darkweb/potential-phishing?q=example"} {
			l.Results.Items = nil
			e.Do("GET", path, oem, nil).JSON(t, &l)
			if got := domains(l.Results.Items); !slices.Equal(got, want) || l.Results.Total != 2 || l.TotalResults != 2 {
				t.Errorf("%s: %v (total %d, all %d), want %v", path, got, l.Results.Total, l.TotalResults, want)
			}
		}
		var s struct {
			Total    int           `json:"total"`
			Phishing []findingItem `json:"potential_phishing_domains"`
		}
		// example.org is monitored: its stored findings; example.net is not:
		// computed on demand from the host index.
		for _, base := range []string{"example.org", "example.net"} {
			s.Phishing = nil
			e.Do("POST", "/api/v1/oem/potential-phishing/search", oem, map[string]any{"query": base}).JSON(t, &s)
			if got := domains(s.Phishing); !slices.Equal(got, want) || s.Total != 2 {
				t.Errorf("OEM search of %s: %v (total %d), want %v", base, got, s.Total, want)
			}
		}

		// A claim made after the finding was stored: it goes from the
		// listing, its count and the searches.
		_, third := e.Account(periscope.Account{Company: "Secure Net", Plan: "enterprise", Enterprise: true, CreditsPerMonth: 100})
		org(third, "Secure Net", "example-secure.net")
		want = []string{"example-login.xyz"}
		l.Results.Items = nil
		e.Do("GET", "/api/v1/enterprise/darkweb/potential-phishing", oem, nil).JSON(t, &l)
		if got := domains(l.Results.Items); !slices.Equal(got, want) || l.TotalResults != 1 {
			t.Errorf("after the later claim: %v (all %d), want %v", got, l.TotalResults, want)
		}
		s.Phishing = nil
		e.Do("POST", "/api/v1/oem/potential-phishing/search", oem, map[string]any{"query": "example.org"}).JSON(t, &s)
		if got := domains(s.Phishing); !slices.Equal(got, want) {
			t.Errorf("OEM search after the later claim: %v, want %v", got, want)
		}

		// A row stored before any of this (written directly) is left out
		// of the page, the OEM search and the alerts' feed all the same.
		if _, err := e.Store.DB().ExecContext(ctx, e.Store.Rebind(`INSERT INTO brand_findings (organization_id, account_id, kind, domain,
			base_domain, score, date_added, last_seen) SELECT organization_id, account_id, kind, 'www.example.com', base_domain, 99, 0, 0
			FROM brand_findings WHERE domain = ? AND account_id = ?`), "example-login.xyz", oemAcct.ID); err != nil {
			t.Fatal(err)
		}
		l.Results.Items = nil
		e.Do("GET", "/api/v1/enterprise/darkweb/potential-phishing", oem, nil).JSON(t, &l)
		if got := domains(l.Results.Items); !slices.Equal(got, want) {
			t.Errorf("with an older row: %v, want %v", got, want)
		}
		s.Phishing = nil
		e.Do("POST", "/api/v1/oem/potential-phishing/search", oem, map[string]any{"query": "example.org"}).JSON(t, &s)
		if got := domains(s.Phishing); !slices.Equal(got, want) {
			t.Errorf("OEM search with an older row: %v, want %v", got, want)
		}
		rows, err := e.Brand.FindingsAfter(ctx, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range rows {
			if f.AccountID == oemAcct.ID && f.Domain != "example-login.xyz" {
				t.Errorf("the alerts' feed reads %s for the OEM account", f.Domain)
			}
		}
	})
}
