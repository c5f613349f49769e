package ledger_test

import (
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/ledger"
	"github.com/periscope-oss/periscope/internal/scan"
)

// observations parses a recorded scan file and returns its hosts by name.
func observations(t *testing.T, f scan.Format, name string) map[string]host.Host {
	t.Helper()
	r, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := map[string]host.Host{}
	var order []host.Host
	if _, err := scan.Parse(f, r, func(h host.Host) error { order = append(order, h); return nil }); err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	for _, h := range order {
		out[h.Host] = h
	}
	return out
}

// nth returns the i-th observation of a line-oriented scan file.
func nth(t *testing.T, f scan.Format, name string, i int) host.Host {
	t.Helper()
	r, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var all []host.Host
	if _, err := scan.Parse(f, r, func(h host.Host) error { all = append(all, h); return nil }); err != nil {
		t.Fatal(err)
	}
	return all[i]
}

// stored is what the store holds after storing h as a new host.
func stored(h host.Host) host.Host { return host.Merge(host.Host{}, h) }

type row struct {
	Category ledger.Category
	Change   ledger.Kind
	Value    string
	Old      string
}

func rows(cs []ledger.Change) []row {
	out := []row{}
	for _, c := range cs {
		out = append(out, row{c.Category, c.Change, c.Value, c.OldValue})
	}
	return out
}

func TestDiffOnRecordedScans(t *testing.T) {
	full := observations(t, scan.Nmap, "libnmap_2_hosts.xml")
	version := observations(t, scan.Nmap, "libnmap_2_hosts_version.xml")
	banner := observations(t, scan.Nmap, "libnmap_1_hosts_banner_ports.xml")
	localhost, bannerObs := full["127.0.0.1"], banner["127.0.0.1"]
	// The banner scan names the products, which become technologies.
	tech1, tech2 := row{ledger.CategoryTechnology, ledger.New, "OpenSSH", ""}, row{ledger.CategoryTechnology, ledger.New, "Postfix smtpd", ""}
	miss := func(c ledger.Category, v string) ledger.Miss { return ledger.Miss{Category: c, Value: v} }

	cases := []struct {
		name string
		old  *host.Host
		obs  host.Host
		src  ledger.Source
		want []row
		// ports of the host once removed values are pruned
		ports []int
	}{
		{
			name: "first sighting is one row for the host",
			obs:  localhost,
			src:  ledger.Source{Name: "nmap"},
			want: []row{{ledger.CategoryHost, ledger.New, "127.0.0.1", ""}},
		},
		{
			name:  "banner scan of four ports changes two services and removes nothing",
			old:   &localhost,
			obs:   bannerObs,
			src:   ledger.Source{Name: "nmap", Ports: []int{22, 25, 80, 443}},
			want:  []row{tech1, tech2, {ledger.CategoryService, ledger.Changed, "22/tcp ssh OpenSSH 5.3", "22/tcp ssh"}, {ledger.CategoryService, ledger.Changed, "25/tcp smtp Postfix smtpd", "25/tcp smtp"}},
			ports: []int{22, 25, 111, 631, 3306},
		},
		{
			name:  "a scan of unknown port coverage removes nothing",
			old:   &localhost,
			obs:   bannerObs,
			src:   ledger.Source{Name: "nmap"},
			want:  []row{tech1, tech2, {ledger.CategoryService, ledger.Changed, "22/tcp ssh OpenSSH 5.3", "22/tcp ssh"}, {ledger.CategoryService, ledger.Changed, "25/tcp smtp Postfix smtpd", "25/tcp smtp"}},
			ports: []int{22, 25, 111, 631, 3306},
		},
		{
			name: "a full scan missing three ports once only counts the misses",
			old:  &localhost,
			obs:  bannerObs,
			src:  ledger.Source{Name: "nmap", AllPorts: true},
			want: []row{tech1, tech2, {ledger.CategoryService, ledger.Changed, "22/tcp ssh OpenSSH 5.3", "22/tcp ssh"}, {ledger.CategoryService, ledger.Changed, "25/tcp smtp Postfix smtpd", "25/tcp smtp"},
				{ledger.CategoryPort, ledger.Missed, "111/tcp", ""}, {ledger.CategoryPort, ledger.Missed, "3306/tcp", ""}, {ledger.CategoryPort, ledger.Missed, "631/tcp", ""}},
			ports: []int{22, 25, 111, 631, 3306},
		},
		{
			name: "missed twice in a row by the same source is removed",
			old:  &localhost,
			obs:  bannerObs,
			src: ledger.Source{Name: "nmap", AllPorts: true, Missed: []ledger.Miss{
				miss(ledger.CategoryPort, "111/tcp"), miss(ledger.CategoryPort, "3306/tcp"), miss(ledger.CategoryPort, "631/tcp")}},
			want: []row{tech1, tech2, {ledger.CategoryService, ledger.Changed, "22/tcp ssh OpenSSH 5.3", "22/tcp ssh"}, {ledger.CategoryService, ledger.Changed, "25/tcp smtp Postfix smtpd", "25/tcp smtp"},
				{ledger.CategoryPort, ledger.Removed, "", "111/tcp"}, {ledger.CategoryPort, ledger.Removed, "", "3306/tcp"}, {ledger.CategoryPort, ledger.Removed, "", "631/tcp"}},
			ports: []int{22, 25},
		},
		{
			name:  "a miss not covered this time is carried, not removed",
			old:   &localhost,
			obs:   bannerObs,
			src:   ledger.Source{Name: "nmap", Ports: []int{22, 25}, Missed: []ledger.Miss{miss(ledger.CategoryPort, "3306/tcp")}},
			want:  []row{tech1, tech2, {ledger.CategoryService, ledger.Changed, "22/tcp ssh OpenSSH 5.3", "22/tcp ssh"}, {ledger.CategoryService, ledger.Changed, "25/tcp smtp Postfix smtpd", "25/tcp smtp"}, {ledger.CategoryPort, ledger.Missed, "3306/tcp", ""}},
			ports: []int{22, 25, 111, 631, 3306},
		},
		{
			name:  "a value seen again clears its miss",
			old:   &localhost,
			obs:   version["127.0.0.1"],
			src:   ledger.Source{Name: "nmap", AllPorts: true, Missed: []ledger.Miss{miss(ledger.CategoryPort, "3306/tcp")}},
			want:  []row{},
			ports: []int{22, 25, 111, 631, 3306},
		},
		{
			name:  "the same ports scanned again change nothing",
			old:   ptr(stored(full["scanme.nmap.org"])),
			obs:   version["scanme.nmap.org"],
			src:   ledger.Source{Name: "nmap", AllPorts: true},
			want:  []row{},
			ports: []int{22, 80, 9929},
		},
		{
			name:  "another source's misses do not count",
			old:   &localhost,
			obs:   bannerObs,
			src:   ledger.Source{Name: "masscan", Ports: []int{22, 25}},
			want:  []row{tech1, tech2, {ledger.CategoryService, ledger.Changed, "22/tcp ssh OpenSSH 5.3", "22/tcp ssh"}, {ledger.CategoryService, ledger.Changed, "25/tcp smtp Postfix smtpd", "25/tcp smtp"}},
			ports: []int{22, 25, 111, 631, 3306},
		},
		{
			name: "an http title changes",
			old:  ptr(stored(nth(t, scan.HTTPX, "defectdojo_httpx_many_vuln.jsonl", 1))),
			obs:  nth(t, scan.HTTPX, "defectdojo_httpx_many_vuln.jsonl", 2),
			src:  ledger.Source{Name: "httpx"},
			want: []row{{ledger.CategoryHTTPTitle, ledger.Changed, "generic-app", "generic-app admin"}},
		},
		{
			name: "an httpx line without a title keeps the title",
			old:  ptr(stored(nth(t, scan.HTTPX, "defectdojo_httpx_many_vuln.jsonl", 2))),
			obs:  nth(t, scan.HTTPX, "defectdojo_httpx_many_vuln.jsonl", 3),
			src:  ledger.Source{Name: "httpx"},
			want: []row{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.old != nil && tc.old.NetworkPorts == nil {
				tc.old = ptr(stored(*tc.old))
			}
			obs := tc.obs
			merged := host.Merge(host.Host{}, obs)
			if tc.old != nil {
				merged = host.Merge(*tc.old, obs)
			}
			src := tc.src
			src.Observed = &obs
			got := ledger.Diff(tc.old, &merged, src)
			if diff := cmp.Diff(tc.want, rows(got)); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			for _, c := range got {
				if c.Host != merged.Host || c.Source != src.Name || c.HostType != "ip" {
					t.Errorf("row %+v does not name the host and source", c)
				}
			}
			if tc.ports != nil {
				ledger.Prune(&merged, got)
				if diff := cmp.Diff(tc.ports, merged.NetworkPorts); diff != "" {
					t.Errorf("ports after prune (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestDiffDNSAndCertificate(t *testing.T) {
	old := stored(host.Host{Host: "www.example.com", Domain: "example.com", TLD: "com", Subdomain: "www",
		DNS:  host.DNS{A: []string{"192.0.2.1", "192.0.2.2"}, MX: []string{"mx.example.com"}},
		Cert: host.Cert{SHA256Fingerprint: "aa", SubjectCommonName: "www.example.com", NotAfter: 1767225600}})
	obs := host.Host{Host: "www.example.com", DNS: host.DNS{A: []string{"192.0.2.2", "192.0.2.3"}},
		Cert: host.Cert{SHA256Fingerprint: "bb", SubjectCommonName: "www.example.com", NotAfter: 1798761600}}
	merged := host.Merge(old, obs)
	got := ledger.Diff(&old, &merged, ledger.Source{Name: "pdns", Observed: &obs})
	want := []row{
		{ledger.CategoryDNSA, ledger.New, "192.0.2.3", ""},
		{ledger.CategoryTLSCert, ledger.Changed, "bb CN=www.example.com expires 2027-01-01", "aa CN=www.example.com expires 2026-01-01"},
		// dns_a was looked at: 192.0.2.1 is missed once. MX was not
		// looked at (no MX in the observation): nothing is missed.
		{ledger.CategoryDNSA, ledger.Missed, "192.0.2.1", ""},
	}
	if diff := cmp.Diff(want, rows(got)); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if got[0].HostType != "subdomain" || got[0].Domain != "example.com" {
		t.Errorf("row %+v", got[0])
	}
	if m := ledger.Misses(got); len(m) != 1 || m[0].Value != "192.0.2.1" {
		t.Errorf("misses %v", m)
	}
	if r := ledger.Rows(got); len(r) != 2 {
		t.Errorf("rows %v", r)
	}
}

func ptr[T any](v T) *T { return &v }

func TestDiffWHOIS(t *testing.T) {
	day := func(s string) time.Time { d, _ := time.Parse("2006-01-02", s); return d }
	old := ledger.WHOIS{Registrar: "MarkMonitor Inc.", Expiry: day("2028-09-14"), NameServers: []string{"NS1.GOOGLE.COM.", "ns2.google.com"}}
	cases := []struct {
		name string
		nw   ledger.WHOIS
		want []row
	}{
		{"same registration, other spelling", ledger.WHOIS{Registrar: "MarkMonitor Inc.", Expiry: day("2028-09-14"), NameServers: []string{"ns2.google.com", "ns1.google.com"}}, []row{}},
		{"renewed and moved", ledger.WHOIS{Registrar: "Example Registrar", Expiry: day("2029-09-14"), NameServers: []string{"ns1.google.com", "ns3.example.net"}}, []row{
			{ledger.CategoryWHOIS, ledger.Changed, "registrar:Example Registrar", "registrar:MarkMonitor Inc."},
			{ledger.CategoryWHOIS, ledger.Changed, "expiry:2029-09-14", "expiry:2028-09-14"},
			{ledger.CategoryWHOIS, ledger.New, "nameserver:ns3.example.net", ""},
			{ledger.CategoryWHOIS, ledger.Removed, "", "nameserver:ns2.google.com"},
		}},
		{"a redacted lookup changes nothing", ledger.WHOIS{}, []row{}},
	}
	for _, c := range cases {
		got := ledger.DiffWHOIS("google.com", "com", &old, c.nw, "whois", 1)
		if diff := cmp.Diff(c.want, rows(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
	if got := ledger.DiffWHOIS("google.com", "com", nil, old, "whois", 1); len(got) != 0 {
		t.Errorf("first lookup: %+v", got)
	}
}
