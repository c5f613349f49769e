package api_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/vuln"
)

// TestKEVOnlyCVE checks the answer for a CVE known only from CISA KEV: its
// dates are KEV's dateAdded, and severity (KEV has no CVSS) is left out
// rather than "" beside the real KEV values; a scored CVE keeps it.
func TestKEVOnlyCVE(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		added := time.Date(2025, 8, 25, 0, 0, 0, 0, time.UTC)
		if _, err := e.Vulns.UpsertKEV(ctx, []vuln.KEVEntry{{CVEID: "CVE-2025-48384", VendorProject: "Git", Product: "Git",
			VulnerabilityName: "Git Link Following Vulnerability", ShortDescription: "Git contains a link following vulnerability.",
			DateAdded: added, DueDate: added.AddDate(0, 0, 21), RequiredAction: "Apply mitigations per vendor instructions."}}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Vulns.UpsertVulns(ctx, []vuln.Vulnerability{{CVEID: "CVE-2026-99998", Description: "scored", Published: added, LastModified: added,
			CVSSV3Score: 7.5, CVSSV3Vector: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N", Severity: "high"}}); err != nil {
			t.Fatal(err)
		}
		keys := profiles(e)
		get := func(id string) map[string]any {
			t.Helper()
			r := e.Do("GET", "/api/v1/vulnerability-intelligence/vulnerability-search?query="+id, keys["free"], nil)
			var out struct {
				Response []map[string]any `json:"response"`
			}
			if r.Status != 200 || json.Unmarshal(r.Body, &out) != nil || len(out.Response) != 1 {
				t.Fatalf("%s: %d %s", id, r.Status, r.Body)
			}
			return out.Response[0]
		}
		kev := get("CVE-2025-48384")
		if sev, ok := kev["severity"]; ok {
			t.Errorf("kev-only severity %v, want it left out", sev)
		}
		for _, f := range []string{"published_date", "last_modified_date", "cisa_exploit_add"} {
			if kev[f] != float64(added.Unix()) {
				t.Errorf("kev-only %s = %v, want %d (dateAdded)", f, kev[f], added.Unix())
			}
		}
		if kev["is_kev"] != true || kev["title"] != "Git Link Following Vulnerability" {
			t.Errorf("kev-only record %v", kev)
		}
		if scored := get("CVE-2026-99998"); scored["severity"] != "high" {
			t.Errorf("scored severity %v", scored["severity"])
		}
	})
}
