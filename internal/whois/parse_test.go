package whois

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func readDir(t testing.TB, dir string) map[string]string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", dir, "*.txt"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no testdata in %s: %v", dir, err)
	}
	out := map[string]string{}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(n)] = string(b)
	}
	return out
}

func TestNotFoundCorpus(t *testing.T) {
	for name, raw := range readDir(t, "notfound") {
		if rec := Parse(raw); !rec.NotFound {
			t.Errorf("%s: not recognised as not found:\n%.300s", name, raw)
		}
	}
}

func TestFoundCorpus(t *testing.T) {
	var noReg, noCreated, noExp, noNS int
	for name, raw := range readDir(t, "found") {
		rec := Parse(raw)
		if rec.NotFound {
			t.Errorf("%s: recognised as not found", name)
		}
		if rec.Raw != raw && strings.ToValidUTF8(raw, "") == raw {
			t.Errorf("%s: raw text not kept", name)
		}
		if rec.Registrar == "" {
			noReg++
		}
		if rec.CreatedAt.IsZero() {
			noCreated++
		}
		if rec.ExpiresAt.IsZero() {
			noExp++
		}
		if len(rec.NameServers) == 0 {
			noNS++
		}
	}
	t.Logf("found corpus: without registrar %d, created %d, expires %d, name servers %d", noReg, noCreated, noExp, noNS)
}

func TestParseRecords(t *testing.T) {
	day := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	for _, tc := range []struct {
		file string
		want Record
	}{
		{"com_google.com.txt", Record{Domain: "google.com", Registrar: "MarkMonitor, Inc.", RegistrarIANAID: "292",
			CreatedAt: day("1997-09-15T07:00:00Z"), UpdatedAt: day("2019-09-09T15:39:04Z"), ExpiresAt: day("2028-09-13T07:00:00Z"),
			Status:      []string{"clientUpdateProhibited", "clientTransferProhibited", "clientDeleteProhibited", "serverUpdateProhibited", "serverTransferProhibited", "serverDeleteProhibited"},
			NameServers: []string{"ns1.google.com", "ns2.google.com", "ns3.google.com", "ns4.google.com"}, DNSSEC: "unsigned",
			RegistrantOrg: "Google LLC", RegistrantCountry: "US"}},
		{"it_google.it.txt", Record{Domain: "google.it", Registrar: "MARKMONITOR-REG",
			CreatedAt: day("1999-12-10T00:00:00Z"), UpdatedAt: day("2019-05-07T01:04:50Z"), ExpiresAt: day("2020-04-21T00:00:00Z"),
			Status: []string{"ok"}, NameServers: []string{"ns1.google.com", "ns2.google.com", "ns3.google.com", "ns4.google.com"}, DNSSEC: "no",
			RegistrantOrg: "Google Ireland Holdings Unlimited Company"}},
		{"pl_google.pl.txt", Record{Domain: "google.pl", Registrar: "Markmonitor, Inc.",
			CreatedAt: day("2002-09-19T13:00:00Z"), UpdatedAt: day("2021-08-17T11:43:34Z"), ExpiresAt: day("2022-09-18T14:00:00Z"),
			NameServers: []string{"ns1.google.com"}, DNSSEC: "unsigned"}},
		{"hk_git.hk.txt", Record{Domain: "git.hk", Registrar: "WEST263 INTERNATIONAL LIMITED",
			CreatedAt: day("2017-07-11T00:00:00Z"), ExpiresAt: day("2020-07-11T00:00:00Z"), Status: []string{"Active"},
			NameServers: []string{"f1g1ns1.dnspod.net", "f1g1ns2.dnspod.net"}, DNSSEC: "unsigned"}},
	} {
		b, err := os.ReadFile(filepath.Join("testdata", "found", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		got := Parse(string(b))
		got.Raw = ""
		if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.file, diff)
		}
	}
}

func TestParseDate(t *testing.T) {
	for in, want := range map[string]string{
		"2019-09-09T08:39:04-0700":       "2019-09-09T15:39:04Z",
		"2001-06-14-T10:32:43Z":          "2001-06-14T10:32:43Z",
		"30.6.2006 00:00:00":             "2006-06-30T00:00:00Z",
		"2002.09.19 13:00:00":            "2002-09-19T13:00:00Z",
		"15-Sep-1997":                    "1997-09-15T00:00:00Z",
		"2003-08-18 11:20:09 (GMT+0:00)": "2003-08-18T11:20:09Z",
		"31 May 1999":                    "1999-05-31T00:00:00Z",
		"12/18/2001":                     "2001-12-18T00:00:00Z",
	} {
		got, ok := ParseDate(in)
		if !ok || got.Format(time.RFC3339) != want {
			t.Errorf("ParseDate(%q) = %v, %v; want %s", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "never", "Registry fee due on 30th April each year"} {
		if got, ok := ParseDate(bad); ok {
			t.Errorf("ParseDate(%q) = %v, want failure", bad, got)
		}
	}
}

func TestLimited(t *testing.T) {
	if !Limited("%% Query rate limit exceeded. Reduced information.\n") {
		t.Error("rate-limit text not recognised")
	}
	for name, raw := range readDir(t, "found") {
		if Limited(raw) {
			t.Errorf("%s: a real record recognised as a rate-limit refusal", name)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, raw := range readDir(f, "found") {
		f.Add(raw)
	}
	for _, raw := range readDir(f, "notfound") {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		rec := Parse(raw)
		if !utf8.ValidString(rec.Raw) {
			t.Fatal("raw not valid UTF-8")
		}
		for _, ns := range rec.NameServers {
			if !looksLikeHost(ns) {
				t.Fatalf("name server %q is not a host name", ns)
			}
		}
		_ = Referral(raw)
	})
}

func BenchmarkParse(b *testing.B) {
	corpus := readDir(b, "found")
	var size int64
	for _, raw := range corpus {
		size += int64(len(raw))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, raw := range corpus {
			Parse(raw)
		}
	}
	b.ReportMetric(float64(len(corpus)), "records/op")
}
