package vulnstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/vuln"
	"github.com/periscope-oss/periscope/internal/vulnstore"
)

// TestAlertableCPEs: only KEV-listed and critical CVEs' CPE keys are
// alertable; a KEV listing changes the signature and adds its CVE; the
// detail carries the score, the KEV date and the criteria.
func TestAlertableCPEs(t *testing.T) {
	each(t, func(t *testing.T, s *vulnstore.Store) {
		ctx := context.Background()
		now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		if _, err := s.UpsertVulns(ctx, []vuln.Vulnerability{
			{CVEID: "CVE-2099-1000", Severity: "critical", CVSSV3Score: 9.8, CPEIDs: []string{"cpe:2.3:a:acme:widget:1.0:*:*:*:*:*:*:*"}, Published: now, LastModified: now},
			{CVEID: "CVE-2099-1001", Severity: "high", CVSSV3Score: 7.5, CPEIDs: []string{"cpe:2.3:a:acme:gadget:*:*:*:*:*:*:*:*"}, Published: now, LastModified: now},
			{CVEID: "CVE-2099-1002", Severity: "medium", CVSSV3Score: 5.0, CPEIDs: []string{"cpe:2.3:a:acme:doohickey:*:*:*:*:*:*:*:*"}, Published: now, LastModified: now},
		}); err != nil {
			t.Fatal(err)
		}
		keys := func() map[string]vulnstore.AlertableCPE {
			cs, err := s.AlertableCPEs(ctx)
			if err != nil {
				t.Fatal(err)
			}
			m := map[string]vulnstore.AlertableCPE{}
			for _, c := range cs {
				m[c.CVEID] = c
			}
			return m
		}
		sig1, err := s.AlertableSignature(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m := keys(); len(m) != 1 || m["CVE-2099-1000"].Key != "a:acme:widget" || m["CVE-2099-1000"].KEV {
			t.Fatalf("alertable before KEV: %+v", m)
		}
		if _, err := s.UpsertKEV(ctx, []vuln.KEVEntry{{CVEID: "CVE-2099-1001", VulnerabilityName: "Gadget RCE", DateAdded: now.AddDate(0, 0, 3)}}); err != nil {
			t.Fatal(err)
		}
		sig2, err := s.AlertableSignature(ctx)
		if err != nil || sig2 == sig1 {
			t.Fatalf("signature unchanged by a KEV listing: %q %v", sig2, err)
		}
		m := keys()
		if len(m) != 2 || !m["CVE-2099-1001"].KEV || m["CVE-2099-1001"].Key != "a:acme:gadget" {
			t.Fatalf("alertable after KEV: %+v", m)
		}
		d, err := s.AlertDetail(ctx, m["CVE-2099-1001"].VulnID)
		if err != nil || d.CVEID != "CVE-2099-1001" || d.CVSS != 7.5 || !d.KEV || d.KEVDateAdded != now.AddDate(0, 0, 3).Unix() ||
			len(d.CPEs) != 1 || d.CPEs[0] != "cpe:2.3:a:acme:gadget:*:*:*:*:*:*:*:*" {
			t.Fatalf("detail %+v %v", d, err)
		}
		if sig3, _ := s.AlertableSignature(ctx); sig3 != sig2 {
			t.Fatal("the signature moved with nothing changed")
		}
	})
}
