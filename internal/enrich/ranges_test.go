package enrich

import (
	"bufio"
	"bytes"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseDefaultFiles parses every embedded provider file (the real
// published files, see testdata/README.md) and checks the record count and
// one known record.
func TestParseDefaultFiles(t *testing.T) {
	tests := []struct {
		path  string
		count int
		first Range
	}{
		{"data/aws-ip-ranges.json.gz", 8971 + 4373, Range{netip.MustParsePrefix("3.4.12.4/32"), Info{"aws", "eu-west-1", "AMAZON", KindCloud}, priorityUmbrella}},
		{"data/google-cloud-ip-ranges.json.gz", 782, Range{netip.MustParsePrefix("34.1.208.0/20"), Info{"google", "africa-south1", "Google Cloud", KindCloud}, priorityVendor}},
		{"data/microsoft-azure-ip-ranges.json.gz", 90493, Range{netip.MustParsePrefix("4.145.74.52/30"), Info{"azure", "", "ActionGroup", KindCloud}, priorityVendor}},
		{"data/oracle-cloud-ip-ranges.json.gz", 896, Range{netip.MustParsePrefix("129.80.0.0/16"), Info{"oracle", "us-ashburn-1", "OCI", KindCloud}, priorityVendor}},
		{"data/fastly-ip-ranges.json.gz", 21, Range{netip.MustParsePrefix("23.235.32.0/20"), Info{"fastly", "", "", KindCDN}, priorityVendor}},
		{"data/github-ip-ranges.json.gz", 5959 - 5314 - 185, Range{netip.MustParsePrefix("192.30.252.0/22"), Info{"github", "", "hooks", 0}, priorityVendor}},
		{"data/zscaler-cloud-ip-ranges.json.gz", 80, Range{netip.MustParsePrefix("8.25.203.0/24"), Info{"zscaler", "", "", KindCloud}, priorityVendor}},
		{"data/cdncheck_sources_data.json.gz", 132091, Range{netip.MustParsePrefix("185.143.232.0/22"), Info{"arvancloud", "", "", KindCDN}, priorityCompiled}},
		{"data/cloudflare-v4-ip-ranges.txt.gz", 15, Range{netip.MustParsePrefix("173.245.48.0/20"), Info{"cloudflare", "", "", KindCDN | KindWAF}, priorityVendor}},
		{"data/cloudflare-v6-ip-ranges.txt.gz", 7, Range{netip.MustParsePrefix("2400:cb00::/32"), Info{"cloudflare", "", "", KindCDN | KindWAF}, priorityVendor}},
		{"data/akamai-v4-ip-ranges.txt.gz", 19, Range{netip.MustParsePrefix("23.32.0.0/11"), Info{"akamai", "", "", KindCDN}, priorityVendor}},
		{"data/akamai-v6-ip-ranges.txt.gz", 3, Range{netip.MustParsePrefix("2a02:26f0::/32"), Info{"akamai", "", "", KindCDN}, priorityVendor}},
		{"data/digitalocean.csv.gz", 1182, Range{netip.MustParsePrefix("5.101.96.0/21"), Info{"digitalocean", "NL-NH", "", KindCloud}, priorityVendor}},
		{"data/linode.txt.gz", 4552, Range{netip.MustParsePrefix("2600:3c00::/32"), Info{"linode", "US-TX", "", KindCloud}, priorityVendor}},
	}
	sources := map[string]RangeSource{}
	for _, s := range DefaultRanges() {
		sources[s.Path] = s
	}
	if len(sources) != len(tests) {
		t.Fatalf("DefaultRanges has %d files, test covers %d", len(sources), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			src, ok := sources[tt.path]
			if !ok {
				t.Fatalf("%s is not a default source", tt.path)
			}
			ranges, skipped, err := loadSource(defaultFiles, src)
			if err != nil {
				t.Fatal(err)
			}
			if len(skipped) != 0 {
				t.Errorf("skipped %d records, first: %v", len(skipped), skipped[0])
			}
			if len(ranges) != tt.count {
				t.Errorf("got %d ranges, want %d", len(ranges), tt.count)
			}
			if len(ranges) > 0 {
				if diff := cmp.Diff(tt.first, ranges[0], cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
					t.Errorf("first range mismatch (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestParseSkipsBadRecords(t *testing.T) {
	tests := []struct {
		file     string
		format   Format
		provider string
		want     []string // prefixes kept
		skipped  []string // positions of skipped records
	}{
		{"testdata/cidr-list-bad.txt", FormatCIDRList, "cloudflare", []string{"173.245.48.0/20", "2400:cb00::/32", "1.2.3.4/32"}, []string{"line 4", "line 5"}},
		{"testdata/geofeed-bad.csv", FormatGeofeed, "digitalocean", []string{"5.101.96.0/21", "2600:3c00::/32"}, []string{"line 2"}},
		{"testdata/aws-bad.json", FormatAWS, "", []string{"3.5.140.0/22", "3.5.140.0/22", "2600:1f69:7400::/40"}, []string{"offset 172", "offset 230", "offset 247"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, err := os.Open(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			ranges, skipped, err := Parse(tt.format, tt.file, tt.provider, 0, f)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range ranges {
				got = append(got, r.Prefix.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("kept prefixes (-want +got):\n%s", diff)
			}
			var pos []string
			for _, s := range skipped {
				pos = append(pos, s.Pos)
				if s.Reason == "" {
					t.Errorf("skipped record %v has no reason", s)
				}
			}
			if diff := cmp.Diff(tt.skipped, pos); diff != "" {
				t.Errorf("skipped positions (-want +got):\n%s\n%v", diff, skipped)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	truncated, err := os.ReadFile("testdata/aws-truncated.json")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		format   Format
		provider string
		input    string
		wantErr  string
	}{
		{"truncated", FormatAWS, "", string(truncated), "parse aws ranges truncated"},
		{"not json", FormatGoogle, "", "173.245.48.0/20\n", "parse google ranges"},
		{"array at top", FormatAzure, "", "[]", `expected "{"`},
		{"missing list", FormatAWS, "", `{"syncToken":"1"}`, `no "prefixes" array`},
		{"missing hub", FormatZscaler, "", `{"hubPrefixes":{"a":1}}`, `no "hubPrefixes" array`},
		{"no sections", FormatCDNCheck, "", `{"common":{}}`, `no "cdn"`},
		{"unknown format", Format("nope"), "", "", `unknown range format "nope"`},
		{"no provider", FormatCIDRList, "", "1.2.3.0/24", "needs a provider name"},
		{"long line", FormatCIDRList, "x", strings.Repeat("1", 70000), "line 1: bufio.Scanner: token too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Parse(tt.format, tt.name, tt.provider, 0, strings.NewReader(tt.input))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Parse error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestParsePrefix(t *testing.T) {
	tests := []struct {
		in, want, err string
	}{
		{"10.1.2.3/8", "10.0.0.0/8", ""},
		{" 1.2.3.4 ", "1.2.3.4/32", ""},
		{"2001:db8::1", "2001:db8::1/128", ""},
		{"::ffff:10.0.0.0/104", "10.0.0.0/8", ""},
		{"::ffff:0.0.0.0/95", "", "shorter than /96"},
		{"fe80::1%eth0/64", "", "invalid prefix"},
		{"", "", "empty prefix"},
		{"1.2.3.0/-1", "", "invalid prefix"},
	}
	for _, tt := range tests {
		got, err := parsePrefix(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parsePrefix(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got.String() != tt.want {
			t.Errorf("parsePrefix(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	formats := []Format{FormatAWS, FormatGoogle, FormatAzure, FormatOracle, FormatFastly, FormatGitHub, FormatZscaler, FormatCDNCheck, FormatCIDRList, FormatGeofeed}
	for _, name := range []string{"testdata/aws-bad.json", "testdata/aws-truncated.json", "testdata/cidr-list-bad.txt", "testdata/geofeed-bad.csv"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		for i := range formats {
			f.Add(uint8(i), b)
		}
	}
	// A slice of each embedded file keeps the seeds small but real.
	for i, s := range DefaultRanges() {
		file, err := defaultFiles.Open(s.Path)
		if err != nil {
			f.Fatal(err)
		}
		r, err := maybeGunzip(bufio.NewReader(file))
		if err != nil {
			f.Fatal(err)
		}
		head := make([]byte, 2048)
		n, _ := r.Read(head)
		file.Close()
		f.Add(uint8(i), head[:n])
	}
	f.Add(uint8(7), []byte(`{"cdn":{"x":["1.2.3.0/24",5,{}]},"waf":{"y":"no"},"cloud":[]}`))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		format := formats[int(which)%len(formats)]
		ranges, _, err := Parse(format, "fuzz", "p", 0, bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, r := range ranges {
			if !r.Prefix.IsValid() || r.Prefix != r.Prefix.Masked() {
				t.Fatalf("invalid or unmasked prefix %v", r.Prefix)
			}
		}
		table := NewTable(ranges)
		for _, r := range ranges {
			if _, ok := table.Lookup(r.Prefix.Addr()); !ok {
				t.Fatalf("table misses %v", r.Prefix)
			}
		}
	})
}
