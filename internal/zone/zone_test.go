package zone

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// readAll returns every record and every parse error of a zone.
func readAll(t testing.TB, r io.Reader, opts Options) ([]Record, []*ParseError) {
	t.Helper()
	z, err := NewReader(r, opts)
	if err != nil {
		t.Fatal(err)
	}
	var recs []Record
	var errs []*ParseError
	for {
		rec, err := z.Next()
		if err == io.EOF {
			return recs, errs
		}
		var pe *ParseError
		if errors.As(err, &pe) {
			errs = append(errs, pe)
			continue
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		recs = append(recs, rec)
	}
}

func TestExampleZone(t *testing.T) {
	data, err := os.ReadFile("testdata/example.zone")
	if err != nil {
		t.Fatal(err)
	}
	want := []Record{
		{Name: "example.com", TTL: 3600, Class: "IN", Type: "SOA", Line: 4,
			RData: []string{"ns1.example.com", "hostmaster.example.com", "2024010101", "7200", "3600", "1209600", "300"}},
		{Name: "example.com", TTL: 3600, Class: "IN", Type: "NS", RData: []string{"ns1.example.com"}, Line: 10},
		{Name: "example.com", TTL: 3600, Class: "IN", Type: "NS", RData: []string{"ns2.example.net"}, Line: 11},
		{Name: "example.com", TTL: 3600, Class: "IN", Type: "MX", RData: []string{"10", "mail.example.com"}, Line: 12},
		{Name: "www.example.com", TTL: 300, Class: "IN", Type: "A", RData: []string{"192.0.2.10"}, Line: 13},
		{Name: "www.example.com", TTL: 600, Class: "IN", Type: "AAAA", RData: []string{"2001:db8::10"}, Line: 14},
		{Name: "mail.example.com", TTL: 3600, Class: "IN", Type: "A", RData: []string{"192.0.2.25"}, Line: 15},
		{Name: "txt.example.com", TTL: 3600, Class: "IN", Type: "TXT", Line: 16,
			RData: []string{"v=spf1 include:_spf.example.com ~all", `semi;colon "quoted" A`}},
		{Name: "_sip._tcp.example.com", TTL: 3600, Class: "IN", Type: "SRV", RData: []string{"10", "60", "5060", "sip.example.com"}, Line: 17},
		{Name: "host.sub.example.com", TTL: 3600, Class: "IN", Type: "CNAME", RData: []string{"www.example.com"}, Line: 19},
		{Name: "host2.sub.example.com", TTL: 3600, Class: "IN", Type: "TYPE65", RData: []string{`\#`, "0"}, Line: 20},
		{Name: "sub.example.com", TTL: 3600, Class: "IN", Type: "NS", RData: []string{"ns1.sub.sub.example.com"}, Line: 21},
		{Name: "other.example.org", TTL: 93600, Class: "CH", Type: "TXT", RData: []string{"multi", "line"}, Line: 23},
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"plain", data},
		{"gzip", gzipped(t, data)},
		{"crlf", bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := readAll(t, bytes.NewReader(tc.data), Options{Name: "example.zone"})
			if len(errs) != 0 {
				t.Errorf("errors: %v", errs)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}

func gzipped(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestBadZone(t *testing.T) {
	f, err := os.Open("testdata/bad.zone")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, errs := readAll(t, f, Options{Name: "bad.zone"})
	var names []string
	for _, r := range recs {
		names = append(names, fmt.Sprintf("%s %s %d", r.Name, r.Type, r.TTL))
	}
	if diff := cmp.Diff([]string{"ok1.bad.example A 300", "ok2.bad.example A 300"}, names); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	want := []struct {
		line int
		msg  string
	}{
		{3, "$INCLUDE is not supported"},
		{5, "quoted string is not closed"},
		{6, "')' without '('"},
		{7, `bad A address "999.1.1.1"`},
		{8, `bad A address "2001:db8::1"`},
		{9, "record has no type"},
		{10, "unsupported directive $GENERATE"},
		{11, `bad record type "A.."`},
		{12, `bad MX preference "ten"`},
		{13, "$ORIGIN takes one name"},
		{14, "label longer than 63"},
		{16, "'(' is never closed"},
	}
	if len(errs) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%v", len(errs), len(want), errs)
	}
	for i, w := range want {
		if errs[i].Line != w.line || !strings.Contains(errs[i].Msg, w.msg) || errs[i].File != "bad.zone" {
			t.Errorf("error %d = %v, want line %d with %q", i, errs[i], w.line, w.msg)
		}
	}
}

func TestNoOrigin(t *testing.T) {
	_, errs := readAll(t, strings.NewReader("www A 192.0.2.1\n@ NS ns.example.\n  A 192.0.2.1\n"), Options{})
	if len(errs) != 3 || !strings.Contains(errs[0].Msg, "no $ORIGIN") || !strings.Contains(errs[2].Msg, "no owner") {
		t.Errorf("errors = %v", errs)
	}
	recs, errs := readAll(t, strings.NewReader("www A 192.0.2.1\n"), Options{Origin: "Example.NET."})
	if len(errs) != 0 || len(recs) != 1 || recs[0].Name != "www.example.net" || recs[0].Class != "IN" {
		t.Errorf("with Origin: %v %v", recs, errs)
	}
}

func TestLongLine(t *testing.T) {
	in := "$ORIGIN x.\na A 192.0.2.1\nb TXT \"" + strings.Repeat("y", maxLine+10) + "\"\nc A 192.0.2.3\n"
	recs, errs := readAll(t, strings.NewReader(in), Options{})
	if len(recs) != 2 || len(errs) != 1 || errs[0].Line != 3 {
		t.Errorf("records %v, errors %v", recs, errs)
	}
}

func TestParseTTL(t *testing.T) {
	tests := []struct {
		in   string
		want uint32
		ok   bool
	}{
		{"0", 0, true}, {"86400", 86400, true}, {"1h30m", 5400, true}, {"1W", 604800, true},
		{"2d3s", 172803, true}, {"h", 0, false}, {"1x", 0, false}, {"99999999999", 0, false},
		{"IN", 0, false}, {"", 0, false}, {"1hh", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseTTL(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseTTL(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestRegisteredDomains(t *testing.T) {
	data, err := os.ReadFile("testdata/tld.zone")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"alpha.test", "bravo.test", "xn--bcher-kva.test", "charlie.test"}
	for _, opts := range []Options{{}, {Origin: "test"}} {
		var got []string
		err := RegisteredDomains(bytes.NewReader(gzipped(t, data)), opts, func(d string) error {
			got = append(got, d)
			return nil
		}, func(pe *ParseError) { t.Errorf("parse error: %v", pe) })
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("origin %q: domains (-want +got):\n%s", opts.Origin, diff)
		}
	}
	stop := errors.New("stop")
	if err := RegisteredDomains(bytes.NewReader(data), Options{}, func(string) error { return stop }, func(*ParseError) {}); err != stop {
		t.Errorf("emit error = %v, want stop", err)
	}
}

func TestCorruptGzip(t *testing.T) {
	gz := gzipped(t, []byte("$ORIGIN x.\na A 192.0.2.1\n"))
	z, err := NewReader(bytes.NewReader(gz[:len(gz)-6]), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, err = z.Next()
		var pe *ParseError
		if err != nil && !errors.As(err, &pe) {
			break
		}
	}
	if err == io.EOF || !strings.Contains(err.Error(), "read zone file") {
		t.Errorf("truncated gzip: err = %v, want a read error", err)
	}
}

func FuzzReader(f *testing.F) {
	for _, name := range []string{"testdata/example.zone", "testdata/bad.zone", "testdata/tld.zone"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		z, err := NewReader(bytes.NewReader(data), Options{Origin: "fuzz."})
		if err != nil {
			return
		}
		for range 100000 {
			rec, err := z.Next()
			if err == io.EOF {
				return
			}
			var pe *ParseError
			if errors.As(err, &pe) {
				continue
			}
			if err != nil {
				return
			}
			if rec.Name == "" || rec.Type == "" || rec.Class == "" {
				t.Fatalf("incomplete record %+v", rec)
			}
		}
		t.Fatal("reader did not reach the end")
	})
}

// BenchmarkRegisteredDomains streams a generated TLD-style zone of 100,000
// delegations (2 NS records and 1 DS each: 300,000 records, about 21 MB).
func BenchmarkRegisteredDomains(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString("example.\t86400\tin\tsoa\ta.nic.example. h.nic.example. 1 2 3 4 5\n")
	const domains = 100000
	for i := range domains {
		fmt.Fprintf(&buf, "dom%d.example.\t172800\tin\tns\tns1.host%d.net.\n", i, i%97)
		fmt.Fprintf(&buf, "dom%d.example.\t172800\tin\tns\tns2.host%d.net.\n", i, i%97)
		fmt.Fprintf(&buf, "dom%d.example.\t86400\tin\tds\t12345 13 2 3490A6806D47F17A34C29E2CE80E8A999FFBE4BE\n", i)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		n := 0
		if err := RegisteredDomains(bytes.NewReader(data), Options{}, func(string) error { n++; return nil }, func(pe *ParseError) { b.Fatal(pe) }); err != nil || n != domains {
			b.Fatalf("%d domains, %v", n, err)
		}
	}
	b.ReportMetric(float64(3*domains*b.N)/b.Elapsed().Seconds(), "records/s")
}

func TestDelegations(t *testing.T) {
	data, err := os.ReadFile("testdata/tld.zone")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = Delegations(bytes.NewReader(gzipped(t, data)), Options{}, func(d string, ns []string) error {
		got = append(got, d+" "+strings.Join(ns, ","))
		return nil
	}, func(pe *ParseError) { t.Errorf("parse error: %v", pe) })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"alpha.test ns1.alpha.test,ns2.alpha.test",
		"bravo.test ns1.dns.example,ns2.dns.example",
		"xn--bcher-kva.test ns1.dns.example",
		"charlie.test ns1.dns.example",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("delegations (-want +got):\n%s", diff)
	}
	stop := errors.New("stop")
	if err := Delegations(bytes.NewReader(data), Options{}, func(string, []string) error { return stop }, func(*ParseError) {}); err != stop {
		t.Errorf("emit error = %v, want stop", err)
	}
}
