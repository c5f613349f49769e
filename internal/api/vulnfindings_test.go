package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/periscope-oss/periscope/internal/alerts"
	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
)

// TestVulnerabilityFindings raises new_vulnerability alerts through the
// rule (alerts.Vulnerability) from the recorded NVD and KEV samples, and
// reads them back through FullHunt's two routes.
func TestVulnerabilityFindings(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		seedVulns(t, e)
		acct, key := e.Account(periscope.Account{Company: "Vuln Co", Plan: "enterprise", Enterprise: true, OEM: true, CreditsPerMonth: 10, OEMCreditsPerMonth: 10})
		_, otherKey := e.Account(periscope.Account{Company: "Other Vuln Co", Plan: "enterprise", Enterprise: true, OEM: true, CreditsPerMonth: 10, OEMCreditsPerMonth: 10})
		_, freeKey := e.Account(periscope.Account{Company: "Free Vuln Co", Plan: "free", CreditsPerMonth: 10})
		var org struct {
			ID string `json:"id"`
		}
		e.Do(http.MethodPost, "/api/v1/enterprise/organizations", key, map[string]any{"name": "Acme"}).JSON(t, &org)
		if r := e.Do(http.MethodPost, "/api/v1/enterprise/organizations/"+org.ID+"/domains", key, map[string]any{"domain": "acme-vuln.com"}); r.Status != 201 {
			t.Fatalf("add domain: %d %s", r.Status, r.Body)
		}
		if _, err := e.Hosts.UpsertHosts(ctx, []host.Host{{Host: "git.acme-vuln.com", IPAddress: "52.1.2.7"}, {Host: "www.acme-vuln.com", IPAddress: "52.9.9.9"}}); err != nil {
			t.Fatal(err)
		}
		// Every alertable CVE of the samples: KEV-listed or critical.
		cpes, err := e.Vulns.AlertableCPEs(ctx)
		if err != nil || len(cpes) == 0 {
			t.Fatalf("alertable CPEs: %v, %d", err, len(cpes))
		}
		var kevID int64
		for _, c := range cpes {
			if c.KEV {
				kevID = c.VulnID
				break
			}
		}
		if kevID == 0 {
			t.Fatal("no KEV-listed CVE among the samples")
		}
		d, err := e.Vulns.AlertDetail(ctx, kevID)
		if err != nil {
			t.Fatal(err)
		}
		a := periscope.Asset{AccountID: acct.ID, OrganizationID: org.ID, Kind: periscope.AssetDomain, Value: "acme-vuln.com"}
		al, ok := alerts.Vulnerability(a, d, []alerts.VulnHost{
			{Host: "git.acme-vuln.com", Product: "gitlab", Version: "16.0.1", CPE: d.CPEs[0], Check: "listed"},
			{Host: "www.acme-vuln.com", Product: "gitlab", CPE: d.CPEs[0], Check: "unknown"}}, nil, e.Clock.Now().Unix())
		if !ok {
			t.Fatalf("the rule raised nothing for %s", d.CVEID)
		}
		as := alertstore.New(e.Store)
		if err := e.Store.Tx(ctx, func(tx *store.Tx) error { _, err := as.UpsertAlert(ctx, tx, &al); return err }); err != nil {
			t.Fatal(err)
		}

		var got []map[string]any
		for _, q := range []string{"", "?org=" + org.ID, "?org=acme"} {
			r := e.Do(http.MethodGet, "/api/v1/enterprise/vulnerabilities"+q, key, nil)
			if r.JSON(t, &got); r.Status != 200 || len(got) != 2 {
				t.Fatalf("enterprise vulnerabilities%s: %d %s", q, r.Status, r.Body)
			}
		}
		f := got[0]
		if f["vulnerability_id"] != d.CVEID || f["affected_location"] != "git.acme-vuln.com" || f["status"] != "open" || f["is_kev"] != true ||
			f["version_check"] != "listed" || f["description"] == "" || f["recommendation"] == "" || f["severity"] == "" || f["organization_id"] != org.ID {
			t.Errorf("finding: %v", f)
		}
		if got[1]["affected_location"] != "www.acme-vuln.com" || got[1]["version_check"] != "unknown" {
			t.Errorf("second finding: %v", got[1])
		}
		// Tenancy: another account sees nothing, and not the organization.
		if r := e.Do(http.MethodGet, "/api/v1/enterprise/vulnerabilities", otherKey, nil); r.Status != 200 || string(r.Body) != "[]\n" {
			t.Errorf("another account: %d %s", r.Status, r.Body)
		}
		if r := e.Do(http.MethodGet, "/api/v1/enterprise/vulnerabilities?org="+org.ID, otherKey, nil); r.Status != 404 {
			t.Errorf("another account's organization: %d %s", r.Status, r.Body)
		}
		if r := e.Do(http.MethodGet, "/api/v1/enterprise/vulnerabilities", freeKey, nil); r.Status != 403 || r.ErrorCode() != "enterprise_required" {
			t.Errorf("free account: %d %s", r.Status, r.Body)
		}

		type search struct {
			Query   map[string]string `json:"query"`
			Total   int               `json:"total_results"`
			Results []map[string]any  `json:"results"`
		}
		for body, want := range map[string][2]any{
			`{"type":"host","query":"git.acme-vuln.com"}`: {"host", 1},
			`{"query":"acme-vuln.com"}`:                   {"domain", 2},
			`{"type":"ip_range","query":"52.1.2.0/24"}`:   {"ip_range", 1},
			`{"query":"52.9.9.9"}`:                        {"ip_range", 1},
			`{"query":"other.example"}`:                   {"domain", 0},
		} {
			var s search
			r := e.Do(http.MethodPost, "/api/v1/oem/vulnerabilities/search", key, body)
			if r.JSON(t, &s); r.Status != 200 || s.Query["type"] != want[0] || s.Total != want[1] || len(s.Results) != want[1] {
				t.Errorf("%s: %d %s", body, r.Status, r.Body)
			}
		}
		var s search
		r := e.Do(http.MethodPost, "/api/v1/oem/vulnerabilities/search", otherKey, `{"query":"acme-vuln.com"}`)
		if r.JSON(t, &s); r.Status != 200 || s.Total != 0 {
			t.Errorf("another account's search: %d %s", r.Status, r.Body)
		}
		for body, want := range map[string]int{`{}`: 400, `{"type":"asn","query":"x"}`: 400, `{"type":"ip_range","query":"10.0.0.0/8"}`: 400} {
			if r := e.Do(http.MethodPost, "/api/v1/oem/vulnerabilities/search", key, body); r.Status != want {
				t.Errorf("%s: %d %s", body, r.Status, r.Body)
			}
		}
		if a, err := e.Store.Account(ctx, acct.ID); err != nil || a.OEMCreditsUsed != 5 {
			t.Errorf("OEM credits used: %d (%v), want 5", a.OEMCreditsUsed, err)
		}
	})
}
