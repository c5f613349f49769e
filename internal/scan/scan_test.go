package scan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/periscope-oss/periscope/internal/host"
)

// collect parses file with parse and returns the observations.
func collect(t *testing.T, parse func(io.Reader, func(host.Host) error) (Stats, error), file string) ([]host.Host, Stats, error) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var hosts []host.Host
	st, err := parse(f, func(h host.Host) error {
		hosts = append(hosts, h)
		return nil
	})
	if st.Hosts != len(hosts) {
		t.Errorf("Stats.Hosts = %d, emitted %d", st.Hosts, len(hosts))
	}
	return hosts, st, err
}

func rejectLines(st Stats) []int {
	var l []int
	for _, r := range st.Rejects {
		l = append(l, r.Line)
	}
	return l
}

func TestHTTPXAuthored(t *testing.T) {
	hosts, st, err := collect(t, ParseHTTPX, "testdata/httpx_authored.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{3, 5, 6}, rejectLines(st)); diff != "" {
		t.Errorf("rejected lines (-want +got):\n%s\n%v", diff, st.Rejects)
	}
	if len(hosts) != 3 {
		t.Fatalf("got %d hosts, want 3", len(hosts))
	}
	ts := int64(1742675665)
	want := host.Host{
		Host: "www.example.com", Domain: "example.com", TLD: "com", Subdomain: "www",
		IPAddress: "93.184.215.14", CDN: "cloudflare",
		DNS: host.DNS{
			A: []string{"93.184.215.14"}, AAAA: []string{"2606:2800:21f:cb07:6820:80da:af6b:8b2c"},
			CNAME: []string{"www.example.com.cdn.example.net"},
		},
		HTTPStatusCode: 200, HTTPTitle: "Example Domain",
		NetworkServices: []host.Service{{Port: 443, Protocol: "tcp", Service: "https", Product: "nginx", FirstSeen: ts, LastSeen: ts}},
		Products:        []string{"nginx"}, Web: []string{"HSTS", "Nginx"},
		Cert: host.Cert{
			SubjectCommonName: "www.example.org", SubjectOrg: "Internet Corporation for Assigned Names and Numbers",
			IssuerCommonName: "DigiCert Global G3 TLS ECC SHA384 2020 CA1", IssuerOrg: "DigiCert Inc",
			NotBefore: 1736899200, NotAfter: 1768521599,
			DNSNames:     []string{"www.example.org", "example.com", "www.example.com"},
			SerialNumber: "07:5B:CE:F3", SHA256Fingerprint: "ef56", SHA1Fingerprint: "cd34", MD5Fingerprint: "ab12",
		},
		FirstSeen: ts, LastSeen: ts,
	}
	if diff := cmp.Diff(want, hosts[0]); diff != "" {
		t.Errorf("first host (-want +got):\n%s", diff)
	}
	if h := hosts[1]; h.Host != "api.example.co.uk" || h.TLD != "co.uk" || h.Cloud.Provider != "aws" || h.NetworkServices[0].Port != 8080 || h.HTTPStatusCode != 401 {
		t.Errorf("second host = %+v", h)
	}
	if h := hosts[2]; h.Host != "203.0.113.9" || h.IPAddress != "203.0.113.9" || h.Domain != "" || h.NetworkServices[0].Port != 443 {
		t.Errorf("bare-IP host = %+v", h)
	}
}

func TestHTTPXDefectDojo(t *testing.T) {
	hosts, st, err := collect(t, ParseHTTPX, "testdata/defectdojo_httpx_many_vuln.jsonl")
	if err != nil || st.Rejected != 0 || len(hosts) != 5 {
		t.Fatalf("hosts %d, stats %+v, err %v", len(hosts), st, err)
	}
	h := hosts[0]
	if h.Host != "172.29.0.2" || h.IPAddress != "172.29.0.2" || h.NetworkServices[0].Port != 80 || h.Web[0] != "Nginx:1.31.3" {
		t.Errorf("host = %+v", h)
	}
}

func TestHTTPXSharedData(t *testing.T) {
	const file = "/work/shared/data/scans/httpx/dutchgovscope_httpx_gemeente_2025-03-22.jsonl"
	if _, err := os.Stat(file); err != nil {
		t.Skip("shared data not present")
	}
	hosts, st, err := collect(t, ParseHTTPX, file)
	if err != nil || st.Rejected != 0 || len(hosts) != 76 {
		t.Fatalf("hosts %d, stats %+v, err %v", len(hosts), st, err)
	}
	for _, h := range hosts {
		if !strings.HasSuffix(h.Host, ".nl") || h.IPAddress == "" || h.FirstSeen == 0 {
			t.Errorf("host %q ip %q first_seen %d", h.Host, h.IPAddress, h.FirstSeen)
		}
	}
}

func TestMasscan(t *testing.T) {
	tests := []struct {
		file            string
		hosts, rejected int
		first           host.Service
	}{
		{"testdata/defectdojo_masscan_many_vuln.json", 4, 0, host.Service{Port: 8080, Protocol: "tcp", FirstSeen: 1785522037, LastSeen: 1785522037}},
		{"testdata/defectdojo_masscan_one_vuln.json", 1, 0, host.Service{Port: 80, Protocol: "tcp", FirstSeen: 1785521920, LastSeen: 1785521920}},
		{"testdata/masscan_legacy.json", 3, 0, host.Service{Port: 22, Protocol: "tcp", FirstSeen: 1652173341, LastSeen: 1652173341}},
		{"testdata/masscan_oD.ndjson", 2, 1, host.Service{Port: 443, Protocol: "tcp", FirstSeen: 1652173341, LastSeen: 1652173341}},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			hosts, st, err := collect(t, ParseMasscan, tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if len(hosts) != tt.hosts || st.Rejected != tt.rejected {
				t.Fatalf("hosts %d rejected %d, want %d and %d (%v)", len(hosts), st.Rejected, tt.hosts, tt.rejected, st.Rejects)
			}
			if diff := cmp.Diff(tt.first, hosts[0].NetworkServices[0]); diff != "" {
				t.Errorf("first service (-want +got):\n%s", diff)
			}
			if hosts[0].Host != hosts[0].IPAddress {
				t.Errorf("masscan host %q should be its IP %q", hosts[0].Host, hosts[0].IPAddress)
			}
		})
	}
}

func TestMasscanBanners(t *testing.T) {
	hosts, st, _ := collect(t, ParseMasscan, "testdata/masscan_oD.ndjson")
	if st.Skipped != 1 || st.SkippedBy["closed ports"] != 1 || len(st.Skips) != 1 || st.Skips[0].Line == 0 {
		t.Errorf("skipped %d %v %+v, want 1 (the closed port) with its line", st.Skipped, st.SkippedBy, st.Skips)
	}
	if s := hosts[1].NetworkServices[0]; s.Service != "http" || !strings.Contains(s.Banner, "nginx") {
		t.Errorf("banner service = %+v", s)
	}
	legacy, _, _ := collect(t, ParseMasscan, "testdata/masscan_legacy.json")
	if s := legacy[1].NetworkServices[0]; s.Service != "http" || s.Banner != "Server: Apache" {
		t.Errorf("legacy banner service = %+v", s)
	}
	if s := legacy[2].NetworkServices[0]; s.Protocol != "udp" || s.Port != 53 {
		t.Errorf("udp service = %+v", s)
	}
}

func TestNaabu(t *testing.T) {
	hosts, st, err := collect(t, ParseNaabu, "testdata/defectdojo_naabu_many_vuln.jsonl")
	if err != nil || st.Rejected != 0 || len(hosts) != 8 {
		t.Fatalf("hosts %d, stats %+v, err %v", len(hosts), st, err)
	}
	want := host.Service{Port: 3000, Protocol: "tcp", FirstSeen: 1785456000, LastSeen: 1785456000}
	if diff := cmp.Diff(want, hosts[0].NetworkServices[0]); diff != "" {
		t.Errorf("service (-want +got):\n%s", diff)
	}
}

func TestNaabuVariants(t *testing.T) {
	in := `{"host":"Scan.Example.com","ip":"192.0.2.4","port":{"Port":8443,"Protocol":0,"TLS":true},"timestamp":"2024-01-01T00:00:00Z"}
{"ip":"192.0.2.4","port":"22","protocol":"tcp"}
{"ip":"192.0.2.4","port":70000}
{"host":"x.example.com"}
`
	var hosts []host.Host
	st, err := ParseNaabu(strings.NewReader(in), func(h host.Host) error { hosts = append(hosts, h); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{3, 4}, rejectLines(st)); diff != "" {
		t.Errorf("rejected lines (-want +got):\n%s", diff)
	}
	if h := hosts[0]; h.Host != "scan.example.com" || h.IPAddress != "192.0.2.4" || h.NetworkServices[0].Service != "tls" || h.DNS.A[0] != "192.0.2.4" {
		t.Errorf("named host = %+v", h)
	}
}

func TestPDNS(t *testing.T) {
	hosts, st, err := collect(t, ParsePDNS, "testdata/pdns_cof.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{9, 10}, rejectLines(st)); diff != "" {
		t.Errorf("rejected lines (-want +got):\n%s\n%v", diff, st.Rejects)
	}
	if st.Skipped != 1 || st.SkippedBy["unsupported record types"] != 1 {
		t.Errorf("skipped %d %v, want 1 (SOA)", st.Skipped, st.SkippedBy)
	}
	merged := map[string]host.Host{}
	for _, h := range hosts {
		merged[h.Host] = host.Merge(merged[h.Host], h)
	}
	ex := merged["example.com"]
	if diff := cmp.Diff(host.DNS{A: []string{}, AAAA: []string{}, CNAME: []string{}, MX: []string{"mx1.example.com", "mx2.example.com"}, NS: []string{"ns1.example.org"}, PTR: []string{}, TXT: []string{`"v=spf1 -all"`}}, ex.DNS); diff != "" {
		t.Errorf("example.com dns (-want +got):\n%s", diff)
	}
	mail := merged["mail.example.com"]
	if mail.IPAddress == "" || len(mail.DNS.A) != 1 || len(mail.DNS.AAAA) != 1 || mail.FirstSeen != 1400000000 || mail.LastSeen != 1510000000 || !mail.HasIPv6 {
		t.Errorf("mail.example.com = %+v", mail)
	}
	if ptr := merged["192.0.2.10"]; len(ptr.DNS.PTR) != 1 || ptr.DNS.PTR[0] != "mail.example.com" {
		t.Errorf("PTR host = %+v", ptr)
	}
	if n := merged["numeric.example.com"]; n.FirstSeen != 1200000000 || n.LastSeen != 1200000100 {
		t.Errorf("numeric rrtype with zone times = %+v", n)
	}
	if w := merged["www.example.com"]; len(w.DNS.CNAME) != 1 {
		t.Errorf("CNAME host = %+v", w)
	}
}

func TestPTRAddr(t *testing.T) {
	tests := []struct{ in, want string }{
		{"10.2.0.192.in-addr.arpa.", "192.0.2.10"},
		{"b.a.9.8.7.6.5.0.4.0.0.0.3.0.0.0.2.0.0.0.1.0.0.0.0.0.0.0.1.2.3.4.IP6.ARPA", "4321:0:1:2:3:4:567:89ab"},
		{"1.2.3.in-addr.arpa", ""},
		{"300.2.0.192.in-addr.arpa", ""},
		{"example.com", ""},
	}
	for _, tt := range tests {
		got, ok := ptrAddr(tt.in)
		if !ok {
			got = ""
		}
		if got != tt.want {
			t.Errorf("ptrAddr(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNativeRoundTrip(t *testing.T) {
	in := []host.Host{
		{Host: "www.example.com", IPAddress: "192.0.2.1", HTTPStatusCode: 200, NetworkServices: []host.Service{{Port: 443, Protocol: "tcp", Service: "https", FirstSeen: 5, LastSeen: 6}}, FirstSeen: 5, LastSeen: 6},
		{Host: "2001:db8::1", Tags: []string{"ipv6"}},
	}
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	for _, h := range in {
		if err := enc.Encode(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Flush(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "null") {
		t.Errorf("export contains null: %s", buf.String())
	}
	var got []host.Host
	st, err := ParseNative(&buf, func(h host.Host) error { got = append(got, h); return nil })
	if err != nil || st.Rejected != 0 {
		t.Fatalf("stats %+v err %v", st, err)
	}
	want := make([]host.Host, len(in))
	for i, h := range in {
		n, _ := host.Normalize(h.Host)
		h.Host, h.Domain, h.TLD, h.Subdomain = n.Host, n.Domain, n.TLD, n.Subdomain
		if n.IP {
			h.IPAddress = n.Host
		}
		h.Derive()
		want[i] = h
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestNativeRejects(t *testing.T) {
	in := `{"host":"ok.example.com","first_seen":1}
{"host":"ok.example.com","domain":"evil.com","tld":"com"}
{"host":""}
{"host":"x.example.com","ip_address":"nope"}
{"host":"x.example.com","network_ports":[0]}
{"host":"x.example.com","first_seen":1.5}
{"host":"x.example.com","tags":null,"dns":null}
[1,2]
`
	var got []host.Host
	st, err := ParseNative(strings.NewReader(in), func(h host.Host) error { got = append(got, h); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{3, 4, 5, 6, 8}, rejectLines(st)); diff != "" {
		t.Errorf("rejected lines (-want +got):\n%s\n%v", diff, st.Rejects)
	}
	if len(got) != 3 || got[1].Domain != "example.com" || got[2].Tags == nil {
		t.Errorf("hosts = %+v", got)
	}
}

// TestBrokenLineInMillion is the case: one broken line in the
// middle of a 1M-line file; everything else parsed, the line reported.
func TestBrokenLineInMillion(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	const n = 1_000_000
	const bad = n / 2
	pr, pw := io.Pipe()
	go func() {
		w := NewEncoder(pw)
		for i := 1; i <= n; i++ {
			if i == bad {
				fmt.Fprintf(pw, "") // keep ordering through the encoder
				w.Flush()
				io.WriteString(pw, `{"host":"broken.example.com","first_seen":`+"\n")
				continue
			}
			w.Encode(host.Host{Host: fmt.Sprintf("h%d.example.com", i), IPAddress: "192.0.2.1", FirstSeen: int64(i)})
		}
		pw.CloseWithError(w.Flush())
	}()
	// Every host arrives whole and in order: the batches' buffers are
	// reused, and a host must hold nothing of them.
	count, want := 0, 1
	var hosts []host.Host // kept to the end, while the buffers are reused
	st, err := ParseNative(pr, func(h host.Host) error {
		if want == bad {
			want++
		}
		if h.Host != fmt.Sprintf("h%d.example.com", want) || h.FirstSeen != int64(want) || h.IPAddress != "192.0.2.1" {
			return fmt.Errorf("host %d arrived as %s, first seen %d", want, h.Host, h.FirstSeen)
		}
		if count%1000 == 0 {
			hosts = append(hosts, h)
		}
		count++
		want++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range hosts {
		w := 1000*i + 1
		if w >= bad {
			w++
		}
		if h.Host != fmt.Sprintf("h%d.example.com", w) {
			t.Fatalf("host %d kept as %s", w, h.Host)
		}
	}
	if count != n-1 || st.Records != n || st.Rejected != 1 {
		t.Fatalf("emitted %d, stats %+v", count, st)
	}
	if r := st.Rejects[0]; r.Line != bad || r.Offset <= 0 || !strings.Contains(r.Reason, "JSON") {
		t.Errorf("reject = %v, want line %d", r, bad)
	}
}

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", MaxLine+10)
	in := "a\r\n\nbb\n" + long + "\nccc"
	lr := newLineReader(strings.NewReader(in))
	type item struct {
		Line    string
		TooLong bool
		No      int
		Off     int64
	}
	var got []item
	for {
		l, tooLong, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, item{string(l), tooLong, lr.line, lr.start})
	}
	want := []item{{"a", false, 1, 0}, {"", false, 2, 3}, {"bb", false, 3, 4}, {"", true, 4, 7}, {"ccc", false, 5, int64(8 + len(long))}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

func TestEmitErrorStops(t *testing.T) {
	stop := errors.New("store full")
	st, err := ParseMasscan(strings.NewReader("{\"ip\":\"192.0.2.1\",\"port\":1,\"proto\":\"tcp\"}\n{\"ip\":\"192.0.2.2\",\"port\":1}\n"),
		func(host.Host) error { return stop })
	var pe *Error
	if !errors.Is(err, stop) || !errors.As(err, &pe) || pe.Line != 1 || st.Hosts != 0 {
		t.Errorf("err = %v, stats %+v", err, st)
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range Formats() {
		got, err := ParseFormat(strings.ToUpper(string(f)))
		if err != nil || got != f {
			t.Errorf("ParseFormat(%q) = %q, %v", f, got, err)
		}
	}
	if _, err := ParseFormat("csv"); err == nil {
		t.Error("ParseFormat(csv) succeeded")
	}
}
