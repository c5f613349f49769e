package enrich

import (
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
	"github.com/oschwald/maxminddb-golang/v2"
)

func TestGeoDBMaxMindLayouts(t *testing.T) {
	geo, err := OpenGeoDB(GeoPaths{
		CityDB: "testdata/GeoIP2-City-Test.mmdb",
		ASNDB:  "testdata/GeoLite2-ASN-Test.mmdb",
		ISPDB:  "testdata/GeoIP2-ISP-Test.mmdb",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer geo.Close()
	// Expected values are from the MaxMind-DB source-data JSON the test
	// databases were built from.
	tests := []struct {
		ip   string
		want IPInfo
	}{
		// The ISP database also covers this network.
		{"214.78.120.5", IPInfo{ASN: 721, Organization: "DoD Network Information Center", CountryCode: "US", CountryName: "United States", City: "San Diego", Region: "California", PostalCode: "92105", Latitude: 32.7405, Longitude: -117.0935}},
		{"2001:480:10::1", IPInfo{CountryCode: "US", CountryName: "United States", City: "San Diego", Region: "California", PostalCode: "92101", Latitude: 32.7203, Longitude: -117.1552}},
		{"1.0.0.1", IPInfo{ASN: 15169, Organization: "Google Inc."}},
		{"2600:6000::1", IPInfo{ASN: 237, Organization: "Merit Network Inc."}},
		{"192.0.2.1", IPInfo{}},
	}
	for _, tt := range tests {
		got, err := geo.Lookup(netip.MustParseAddr(tt.ip))
		if err != nil {
			t.Errorf("Lookup(%s): %v", tt.ip, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Lookup(%s) mismatch (-want +got):\n%s", tt.ip, diff)
		}
	}
}

// TestRecordDecoderMatchesGenericDecoding walks every network of each test
// database and checks the hand-written decoder against the library's
// generic map decoding.
func TestRecordDecoderMatchesGenericDecoding(t *testing.T) {
	files, err := filepath.Glob("testdata/*.mmdb")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test databases: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			r, err := maxminddb.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			n := 0
			for res := range r.Networks() {
				if err := res.Err(); err != nil {
					t.Fatal(err)
				}
				var rec mmdbRecord
				if err := res.Decode(&rec); err != nil {
					t.Fatalf("%s: %v", res.Prefix(), err)
				}
				var m map[string]any
				if err := res.Decode(&m); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(fromMap(m), rec.IPInfo); diff != "" {
					t.Fatalf("%s mismatch (-generic +decoder):\n%s", res.Prefix(), diff)
				}
				n++
			}
			if n == 0 {
				t.Fatal("no networks")
			}
		})
	}
}

// fromMap extracts IPInfo from a generically decoded MaxMind record.
func fromMap(m map[string]any) IPInfo {
	var in IPInfo
	str := func(m map[string]any, path ...string) string {
		var v any = m
		for _, p := range path {
			mm, ok := v.(map[string]any)
			if !ok {
				return ""
			}
			v = mm[p]
		}
		s, _ := v.(string)
		return s
	}
	in.City = str(m, "city", "names", "en")
	in.CountryCode = str(m, "country", "iso_code")
	in.CountryName = str(m, "country", "names", "en")
	if in.CountryCode == "" && in.CountryName == "" {
		in.CountryCode = str(m, "registered_country", "iso_code")
		in.CountryName = str(m, "registered_country", "names", "en")
	}
	if subs, ok := m["subdivisions"].([]any); ok && len(subs) > 0 {
		if s, ok := subs[0].(map[string]any); ok {
			in.Region = str(s, "names", "en")
		}
	}
	in.PostalCode = str(m, "postal", "code")
	if loc, ok := m["location"].(map[string]any); ok {
		in.Latitude, _ = loc["latitude"].(float64)
		in.Longitude, _ = loc["longitude"].(float64)
	}
	flat := m
	if traits, ok := m["traits"].(map[string]any); ok {
		// Enterprise databases keep network data under traits.
		flat = traits
	}
	if asn, ok := flat["autonomous_system_number"].(uint64); ok {
		in.ASN = int(asn)
	}
	in.Organization = str(flat, "autonomous_system_organization")
	if in.Organization == "" {
		in.Organization = str(flat, "organization")
	}
	in.ISP = str(flat, "isp")
	return in
}

func writeMMDB(t *testing.T, dbType string, records map[string]mmdbtype.Map) string {
	t.Helper()
	tree, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: dbType, RecordSize: 24})
	if err != nil {
		t.Fatal(err)
	}
	for cidr, rec := range records {
		_, network, err := net.ParseCIDR(cidr)
		if err != nil {
			t.Fatal(err)
		}
		if err := tree.Insert(network, rec); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), dbType+".mmdb")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tree.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestGeoDBIPinfoLayouts builds small databases in IPinfo's flat layouts
// (field names as in IPinfo's documentation) and reads them back.
func TestGeoDBIPinfoLayouts(t *testing.T) {
	location := writeMMDB(t, "ipinfo standard_location.mmdb", map[string]mmdbtype.Map{
		"8.8.8.0/24": {
			"city": mmdbtype.String("Mountain View"), "region": mmdbtype.String("California"),
			"country": mmdbtype.String("US"), "lat": mmdbtype.String("37.4056"), "lng": mmdbtype.String("-122.0775"),
			"postal_code": mmdbtype.String("94043"), "timezone": mmdbtype.String("America/Los_Angeles"),
		},
	})
	asn := writeMMDB(t, "ipinfo standard_asn.mmdb", map[string]mmdbtype.Map{
		"8.8.8.0/24": {"asn": mmdbtype.String("AS15169"), "name": mmdbtype.String("Google LLC"), "domain": mmdbtype.String("google.com"), "type": mmdbtype.String("hosting")},
	})
	lite := writeMMDB(t, "ipinfo_lite.mmdb", map[string]mmdbtype.Map{
		"1.1.1.0/24": {
			"country": mmdbtype.String("Australia"), "country_code": mmdbtype.String("AU"),
			"continent": mmdbtype.String("Oceania"), "asn": mmdbtype.String("AS13335"), "as_name": mmdbtype.String("Cloudflare, Inc."),
		},
	})
	geo, err := OpenGeoDB(GeoPaths{CityDB: location, ASNDB: asn, ISPDB: lite})
	if err != nil {
		t.Fatal(err)
	}
	defer geo.Close()
	tests := []struct {
		ip   string
		want IPInfo
	}{
		{"8.8.8.8", IPInfo{ASN: 15169, Organization: "Google LLC", CountryCode: "US", City: "Mountain View", Region: "California", PostalCode: "94043", Latitude: 37.4056, Longitude: -122.0775}},
		{"1.1.1.1", IPInfo{ASN: 13335, Organization: "Cloudflare, Inc.", CountryCode: "AU", CountryName: "Australia"}},
	}
	for _, tt := range tests {
		got, err := geo.Lookup(netip.MustParseAddr(tt.ip))
		if err != nil {
			t.Errorf("Lookup(%s): %v", tt.ip, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Lookup(%s) mismatch (-want +got):\n%s", tt.ip, diff)
		}
	}
}

func TestGeoDBBadValues(t *testing.T) {
	path := writeMMDB(t, "ipinfo bad", map[string]mmdbtype.Map{
		"8.8.8.0/24": {"lat": mmdbtype.String("north"), "asn": mmdbtype.String("AS-x"), "city": mmdbtype.Uint32(7)},
	})
	geo, err := OpenGeoDB(GeoPaths{CityDB: path})
	if err != nil {
		t.Fatal(err)
	}
	defer geo.Close()
	if _, err := geo.Lookup(netip.MustParseAddr("8.8.8.8")); err == nil {
		t.Error("Lookup of a record with a bad coordinate returned no error")
	}
}

func TestOpenGeoDBErrors(t *testing.T) {
	notMMDB := filepath.Join(t.TempDir(), "x.mmdb")
	if err := os.WriteFile(notMMDB, []byte("not a database"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		paths GeoPaths
		want  []string
	}{
		{"missing", GeoPaths{ASNDB: "/nonexistent/GeoLite2-ASN.mmdb"}, []string{"ASNDB", `"/nonexistent/GeoLite2-ASN.mmdb"`, "does not exist"}},
		{"directory", GeoPaths{CityDB: "testdata"}, []string{"CityDB", "is a directory"}},
		{"not mmdb", GeoPaths{CountryDB: notMMDB}, []string{"CountryDB", "not a readable MMDB file"}},
		{"second bad", GeoPaths{CityDB: "testdata/GeoIP2-City-Test.mmdb", ISPDB: "/nope"}, []string{"ISPDB", "/nope"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := OpenGeoDB(tt.paths)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestParseASN(t *testing.T) {
	for in, want := range map[string]int{"AS15169": 15169, "as1": 1, "4294967295": 4294967295} {
		if got, err := parseASN(in); err != nil || got != want {
			t.Errorf("parseASN(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"AS", "ASx", "-1", "AS4294967296", "AS 1"} {
		if _, err := parseASN(in); err == nil {
			t.Errorf("parseASN(%q) succeeded", in)
		}
	}
}
