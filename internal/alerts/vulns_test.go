package alerts_test

import (
	"context"
	"encoding/json"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/alerts"
	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/ledger"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/schema"
	"github.com/periscope-oss/periscope/internal/store/storetest"
	"github.com/periscope-oss/periscope/internal/vuln"
	"github.com/periscope-oss/periscope/internal/vulnstore"
	"github.com/periscope-oss/periscope/internal/wire"
)

func TestHostProductsAndMatching(t *testing.T) {
	h := host.Host{Host: "www.example.com",
		NetworkServices: []host.Service{{Port: 80, Protocol: "tcp", Product: "Apache httpd", Version: "2.4.49"}, {Port: 22, Protocol: "tcp", Product: "OpenSSH", Version: "8.2p1"}},
		Products:        []string{"nginx/1.18.0", "Apache/2.4.49 (Unix)"}, Web: []string{"WordPress:5.8", "PHP"}}
	got := alerts.HostProducts(h)
	want := []alerts.Product{{"Apache httpd", "2.4.49"}, {"OpenSSH", "8.2p1"}, {"nginx", "1.18.0"}, {"Apache", "2.4.49"}, {"WordPress", "5.8"}, {"PHP", ""}}
	if len(got) != len(want) {
		t.Fatalf("products %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("product %d = %v, want %v", i, got[i], want[i])
		}
	}
}

// TestVulnerabilityAlertsBothWays: a KEV CVE stored after the hosts alerts
// on the hosts running its product (the CVE side); a host seen later with
// the product grows the same alert (the host side); a CVE whose criteria
// list other versions, a medium CVE, a host in baseline and another
// organization's host raise nothing; a second pass repeats nothing.
func TestVulnerabilityAlertsBothWays(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			db := storetest.Open(t, engine, schema.Sets()...)
			now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
			db.Now = func() time.Time { return now }
			st := unlocked(t, db)
			hs := wire.Hosts(db, wire.NewLedger(db))
			vs := vulnstore.New(db)
			plain := hoststore.New(db)
			newOrg := func(company, domain string) periscope.Account {
				acct := periscope.Account{Company: company}
				db.CreateAccount(ctx, &acct, &periscope.User{Email: company + "@example.net"})
				org := periscope.Organization{AccountID: acct.ID, Name: company}
				db.CreateOrganization(ctx, &org)
				if _, err := db.AddAsset(ctx, periscope.Asset{OrganizationID: org.ID, AccountID: acct.ID, Kind: periscope.AssetDomain, Value: domain}); err != nil {
					t.Fatal(err)
				}
				return acct
			}
			acme, other := newOrg("acme", "example.com"), newOrg("other", "other.org")
			// acme has a second domain; rangeco only an address range.
			acmeOrgs, _ := db.AllAssets(ctx, periscope.AssetDomain)
			for _, a := range acmeOrgs {
				if a.Value == "example.com" {
					db.AddAsset(ctx, periscope.Asset{OrganizationID: a.OrganizationID, AccountID: a.AccountID, Kind: periscope.AssetDomain, Value: "example.net"})
				}
			}
			rangeco := periscope.Account{Company: "rangeco"}
			db.CreateAccount(ctx, &rangeco, &periscope.User{Email: "rangeco@example.net"})
			rorg := periscope.Organization{AccountID: rangeco.ID, Name: "rangeco"}
			db.CreateOrganization(ctx, &rorg)
			if _, err := db.AddAsset(ctx, periscope.Asset{OrganizationID: rorg.ID, AccountID: rangeco.ID, Kind: periscope.AssetIPRange, Value: "198.51.100.0/24"}); err != nil {
				t.Fatal(err)
			}
			put := func(hs2 ...host.Host) {
				t.Helper()
				if _, err := hs.UpsertHostsFrom(ctx, ledger.Source{Name: "nmap"}, hs2); err != nil {
					t.Fatal(err)
				}
			}
			apache := func(name, version string) host.Host {
				return host.Host{Host: name, IPAddress: "192.0.2.10", FirstSeen: now.Unix(), LastSeen: now.Unix(),
					NetworkServices: []host.Service{{Port: 443, Protocol: "tcp", Service: "https", Product: "Apache httpd", Version: version},
						{Port: 22, Protocol: "tcp", Service: "ssh", Product: "OpenSSH", Version: "8.2p1"}}}
			}
			inRange := apache("mail.unrelated.test", "2.4.49")
			inRange.IPAddress = "198.51.100.7"
			put(apache("www.example.com", "2.4.49"), apache("old.example.com", "2.4.10"), apache("www.other.org", "2.4.49"),
				apache("shop.example.net", "2.4.49"), inRange)
			w := &alerts.Worker{DB: db, Alerts: st, Baseline: time.Hour, VulnCheck: time.Nanosecond,
				Vulns: &alerts.VulnSource{Signature: vs.AlertableSignature, CPEs: vs.AlertableCPEs, Detail: vs.AlertDetail,
					HostsNamed: plain.HostsNamed, EachHost: plain.EachHost,
					InRange: func(ctx context.Context, p netip.Prefix, fn func(host.Host) error) error {
						res, err := plain.SearchHosts(ctx, hoststore.HostQuery{IPRange: p, Limit: 1000})
						if err != nil {
							return err
						}
						for _, h := range res.Hosts {
							if err := fn(h); err != nil {
								return err
							}
						}
						return nil
					}}}
			step := func() {
				t.Helper()
				for {
					n, err := w.Step(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if n == 0 {
						break
					}
				}
				if _, err := w.StepFeeds(ctx); err != nil {
					t.Fatal(err)
				}
			}
			step() // baselines start now
			now = now.Add(2 * time.Hour)
			list := func(acct periscope.Account) []alertstore.Alert {
				t.Helper()
				l, err := st.Alerts(ctx, alertstore.AlertQuery{AccountID: acct.ID, Type: alerts.TypeNewVulnerability, Limit: 100})
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			if l := list(acme); len(l) != 0 {
				t.Fatalf("alerts before any CVE: %+v", l)
			}
			cpe := func(v string) []string { return []string{"cpe:2.3:a:apache:http_server:" + v + ":*:*:*:*:*:*:*"} }
			if _, err := vs.UpsertVulns(ctx, []vuln.Vulnerability{
				{CVEID: "CVE-2021-41773", Severity: "high", CVSSV3Score: 7.5, CPEIDs: cpe("2.4.49"), Published: now, LastModified: now},
				{CVEID: "CVE-2099-0001", Severity: "critical", CVSSV3Score: 9.8, CPEIDs: cpe("2.4.1"), Published: now, LastModified: now},
				{CVEID: "CVE-2099-0002", Severity: "medium", CVSSV3Score: 5.0, CPEIDs: cpe("*"), Published: now, LastModified: now},
			}); err != nil {
				t.Fatal(err)
			}
			if _, err := vs.UpsertKEV(ctx, []vuln.KEVEntry{{CVEID: "CVE-2021-41773", VendorProject: "Apache", Product: "HTTP Server",
				VulnerabilityName: "Apache HTTP Server Path Traversal", DateAdded: time.Date(2021, 11, 3, 0, 0, 0, 0, time.UTC)}}); err != nil {
				t.Fatal(err)
			}
			step()
			l := list(acme)
			if len(l) != 1 {
				t.Fatalf("alerts after a KEV CVE: %+v", l)
			}
			a := l[0]
			for _, s := range []string{"CVE-2021-41773", "CVSS 7.5", "CISA KEV since 2021-11-03", "Apache httpd 2.4.49", "version listed as vulnerable", "www.example.com"} {
				if !strings.Contains(a.Title+" "+a.Message, s) {
					t.Errorf("alert lacks %q: %s / %s", s, a.Title, a.Message)
				}
			}
			if strings.Contains(a.Message, "old.example.com") || !strings.Contains(a.Message, "shop.example.net") || a.Severity != "critical" || a.Count != 1 {
				t.Errorf("alert %+v", a)
			}
			if l := list(rangeco); len(l) != 1 || !strings.Contains(l[0].Message, "mail.unrelated.test") {
				t.Fatalf("the range's alerts: %+v", l)
			}
			if l := list(other); len(l) != 1 || strings.Contains(l[0].Message, "example.com") {
				t.Fatalf("the other organization's alerts: %+v", l)
			}
			step()
			if l := list(acme); len(l) != 1 || l[0].Count != 1 {
				t.Fatalf("a second pass repeated: %+v", l)
			}
			// The host side: a new host with the product grows the alert.
			h := apache("api.example.com", "")
			h.NetworkServices = nil
			h.Products = []string{"Apache/2.4.49 (Unix)"}
			put(h)
			step()
			l = list(acme)
			if len(l) != 1 || l[0].Count != 2 || !strings.Contains(l[0].Message, "api.example.com") || !strings.Contains(l[0].Title, "3 hosts") {
				t.Fatalf("after a new host: %+v", l)
			}
			var ev struct {
				Hosts []alerts.VulnHost `json:"hosts"`
				KEV   bool              `json:"kev"`
			}
			if err := json.Unmarshal(l[0].Evidence, &ev); err != nil || len(ev.Hosts) != 3 || !ev.KEV {
				t.Fatalf("evidence %s", l[0].Evidence)
			}
			// An asset added now: its first data is a silent baseline, on
			// the host side too.
			late := newOrg("late", "late.example")
			put(apache("www.late.example", "2.4.49"))
			step()
			if l := list(late); len(l) != 0 {
				t.Fatalf("a host in its asset's baseline alerts: %+v", l)
			}
			// A critical CVE of OpenSSH naming no version: the version is
			// said not to be checked.
			if _, err := vs.UpsertVulns(ctx, []vuln.Vulnerability{{CVEID: "CVE-2099-0003", Severity: "critical", CVSSV3Score: 9.1,
				CPEIDs: []string{"cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:*"}, Published: now, LastModified: now}}); err != nil {
				t.Fatal(err)
			}
			step()
			l = list(acme)
			if len(l) != 2 {
				t.Fatalf("after an OpenSSH CVE: %+v", l)
			}
			var ssh alertstore.Alert
			for _, x := range l {
				if strings.Contains(x.Title, "CVE-2099-0003") {
					ssh = x
				}
			}
			if !strings.Contains(ssh.Message, "OpenSSH 8.2p1 (version not checked") || !strings.Contains(ssh.Message, "not in CISA KEV") {
				t.Fatalf("OpenSSH alert %+v", ssh)
			}
		})
	}
}
