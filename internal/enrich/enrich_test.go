package enrich

import (
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func newTestEnricher(t testing.TB) *Enricher {
	t.Helper()
	e, err := New(Config{Geo: GeoPaths{
		CityDB: "testdata/GeoIP2-City-Test.mmdb",
		ASNDB:  "testdata/GeoLite2-ASN-Test.mmdb",
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func TestEnrich(t *testing.T) {
	e := newTestEnricher(t)
	tests := []struct {
		ip     string
		cnames []string
		want   Result
	}{
		{"3.5.140.1", nil, Result{Provider: "aws", Region: "ap-northeast-2", Service: "S3", IsCloud: true, Tags: []string{"aws", "cloud"}}},
		{"13.32.0.1", nil, Result{Provider: "aws", Service: "CLOUDFRONT", CDN: "cloudfront", IsCloud: true, IsCDN: true, Tags: []string{"aws", "cdn", "cloud", "cloudfront"}}},
		{"104.16.0.1", nil, Result{Provider: "cloudflare", CDN: "cloudflare", IsCDN: true, IsWAF: true, IsCloudflare: true, Tags: []string{"cdn", "cloudflare", "waf"}}},
		{"2a06:98c0::1", nil, Result{Provider: "cloudflare", CDN: "cloudflare", IsCDN: true, IsWAF: true, IsCloudflare: true, Tags: []string{"cdn", "cloudflare", "waf"}}},
		{"151.101.1.1", nil, Result{Provider: "fastly", CDN: "fastly", IsCDN: true, Tags: []string{"cdn", "fastly"}}},
		{"34.35.0.1", nil, Result{Provider: "google", Region: "africa-south1", Service: "Google Cloud", IsCloud: true, Tags: []string{"cloud", "google"}}},
		{"129.80.0.1", nil, Result{Provider: "oracle", Region: "us-ashburn-1", Service: "OCI", IsCloud: true, Tags: []string{"cloud", "oracle"}}},
		{"5.101.96.1", nil, Result{Provider: "digitalocean", Region: "NL-NH", IsCloud: true, Tags: []string{"cloud", "digitalocean"}}},
		{"::ffff:23.32.0.1", nil, Result{Geo: IPInfo{ASN: 35994, Organization: "Akamai Technologies, Inc."}, Provider: "akamai", CDN: "akamai", IsCDN: true, Tags: []string{"akamai", "cdn"}}},
		// Not in any range; the CNAME reveals the CDN.
		{"192.0.2.1", []string{"www.example.com.", "e1234.a.AKAMAIEDGE.net."}, Result{CDN: "akamai", IsCDN: true, Tags: []string{"akamai", "cdn"}}},
		{"192.0.2.1", []string{"example.com"}, Result{}},
		// Geo and ASN from the MMDB test databases.
		// 1.0.0.0/24 is Cloudflare's in cdncheck's WAF list; the test ASN
		// database says otherwise, and both are reported.
		{"1.0.0.1", nil, Result{Geo: IPInfo{ASN: 15169, Organization: "Google Inc."}, Provider: "cloudflare", CDN: "cloudflare", IsWAF: true, IsCloudflare: true, Tags: []string{"cloudflare", "waf"}}},
		{"214.78.120.5", nil, Result{Geo: IPInfo{ASN: 721, Organization: "DoD Network Information Center", CountryCode: "US", CountryName: "United States", City: "San Diego", Region: "California", PostalCode: "92105", Latitude: 32.7405, Longitude: -117.0935}}},
	}
	for _, tt := range tests {
		got := e.Enrich(netip.MustParseAddr(tt.ip), tt.cnames)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Enrich(%s, %v) mismatch (-want +got):\n%s", tt.ip, tt.cnames, diff)
		}
	}
}

func TestNewErrors(t *testing.T) {
	_, err := New(Config{Geo: GeoPaths{CityDB: "/missing/GeoLite2-City.mmdb"}})
	if err == nil || !strings.Contains(err.Error(), `CityDB "/missing/GeoLite2-City.mmdb"`) {
		t.Errorf("missing MMDB: error = %v", err)
	}
	_, err = New(Config{Ranges: []RangeSource{{Format: FormatAWS, Path: "/missing/ip-ranges.json"}}})
	if err == nil || !strings.Contains(err.Error(), "/missing/ip-ranges.json") {
		t.Errorf("missing range file: error = %v", err)
	}
	bad := filepath.Join(t.TempDir(), "ip-ranges.json")
	if err := os.WriteFile(bad, []byte(`{"prefixes":[`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = New(Config{Ranges: []RangeSource{{Format: FormatAWS, Path: bad}}})
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("truncated range file: error = %v", err)
	}
}

func TestConfiguredRangesOverrideDefaults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cf.txt")
	if err := os.WriteFile(path, []byte("198.51.100.0/24\nbad\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var skipped []string
	e, err := New(Config{
		Ranges:  []RangeSource{{Format: FormatCIDRList, Provider: "cloudflare", Path: path}},
		Skipped: func(src string, s Skipped) { skipped = append(skipped, src+" "+s.Pos) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Enrich(netip.MustParseAddr("198.51.100.9"), nil); !got.IsCloudflare {
		t.Errorf("configured range not used: %+v", got)
	}
	// The embedded Cloudflare list is replaced, so its prefix now comes
	// only from cdncheck's compiled WAF list.
	if got := e.Enrich(netip.MustParseAddr("173.245.48.1"), nil); got.IsCDN || !got.IsWAF {
		t.Errorf("embedded cloudflare list still loaded: %+v", got)
	}
	if diff := cmp.Diff([]string{path + " line 2"}, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	only, err := New(Config{NoDefaultRanges: true, Ranges: []RangeSource{{Format: FormatCIDRList, Provider: "cloudflare", Path: path}}})
	if err != nil {
		t.Fatal(err)
	}
	if p, _, _, _ := only.Table().Stats(); p != 1 {
		t.Errorf("NoDefaultRanges table has %d prefixes, want 1", p)
	}
}

func TestEnrichConcurrent(t *testing.T) {
	e := newTestEnricher(t)
	want := e.Enrich(netip.MustParseAddr("3.5.140.1"), nil)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				if got := e.Enrich(netip.MustParseAddr("3.5.140.1"), nil); got.Provider != want.Provider {
					t.Errorf("concurrent Enrich = %q", got.Provider)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestCDNForCNAME(t *testing.T) {
	tests := map[string]string{
		"d111111abcdef8.cloudfront.net":          "cloudfront",
		"D111111ABCDEF8.CloudFront.NET.":         "cloudfront",
		"www.example.com.edgekey.net":            "akamai",
		"e123.dscb.akamaiedge.net":               "akamai",
		"dualstack.k.sni.global.fastly.net":      "fastly",
		"example.com.cdn.cloudflare.net":         "cloudflare",
		"myendpoint.azureedge.net":               "azure cdn",
		"x.b-cdn.net":                            "bunnycdn",
		"cloudfront.net":                         "cloudfront",
		"notcloudfront.net":                      "",
		"cloudfront.net.example.com":             "",
		"example.com":                            "",
		"":                                       "",
		".":                                      "",
		"..":                                     "",
		strings.Repeat("a.", 200) + "fastly.net": "",
	}
	for in, want := range tests {
		if got := CDNForCNAME(in); got != want {
			t.Errorf("CDNForCNAME(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzCDNForCNAME(f *testing.F) {
	for _, s := range []string{"a.cloudfront.net", "..", "x.edgekey.net.", "ÄKAMAIEDGE.net"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got := CDNForCNAME(name)
		if got == "" {
			return
		}
		// A match must be a known suffix on a label boundary.
		n := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(name), "."))
		for suffix, cdn := range cnameSuffixes {
			if cdn == got && (n == suffix || strings.HasSuffix(n, "."+suffix)) {
				return
			}
		}
		t.Fatalf("CDNForCNAME(%q) = %q without a matching suffix", name, got)
	})
}

var sink Info

func benchAddrs(n int, v6 bool) []netip.Addr {
	r := rand.New(rand.NewPCG(3, 4))
	addrs := make([]netip.Addr, n)
	for i := range addrs {
		if v6 {
			var b [16]byte
			b[0], b[1] = 0x26, 0x00 // 2600::/8 holds many provider ranges
			for j := 2; j < 16; j++ {
				b[j] = byte(r.IntN(256))
			}
			addrs[i] = netip.AddrFrom16(b)
		} else {
			addrs[i] = netip.AddrFrom4([4]byte{byte(r.IntN(224)), byte(r.IntN(256)), byte(r.IntN(256)), byte(r.IntN(256))})
		}
	}
	return addrs
}

func BenchmarkTableLookup(b *testing.B) {
	ranges, err := LoadRanges(defaultFiles, DefaultRanges(), nil)
	if err != nil {
		b.Fatal(err)
	}
	table := NewTable(ranges)
	prefixes, v4, v6, infos := table.Stats()
	b.Logf("table: %d prefixes, %d IPv4 and %d IPv6 intervals, %d distinct infos", prefixes, v4, v6, infos)
	for _, fam := range []struct {
		name string
		v6   bool
	}{{"v4", false}, {"v6", true}} {
		addrs := benchAddrs(1<<16, fam.v6)
		b.Run(fam.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				sink, _ = table.Lookup(addrs[i&(len(addrs)-1)])
				i++
			}
		})
	}
}

func BenchmarkNewTable(b *testing.B) {
	ranges, err := LoadRanges(defaultFiles, DefaultRanges(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d prefixes", len(ranges))
	for b.Loop() {
		NewTable(ranges)
	}
}

func BenchmarkLoadDefaultRanges(b *testing.B) {
	for b.Loop() {
		if _, err := LoadRanges(defaultFiles, DefaultRanges(), nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEnrich(b *testing.B) {
	e := newTestEnricher(b)
	addrs := benchAddrs(1<<16, false)
	cnames := []string{"www.example.com", "example.com.edgekey.net"}
	i := 0
	for b.Loop() {
		res := e.Enrich(addrs[i&(len(addrs)-1)], cnames)
		sink.Provider = res.Provider
		i++
	}
}
