package host

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMarshalZeroHost(t *testing.T) {
	b, err := json.Marshal(Host{Host: "example.com", Domain: "example.com", TLD: "com"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"host":"example.com","domain":"example.com","tld":"com","subdomain":"",` +
		`"is_live":false,"is_resolvable":false,"is_cloud":false,"is_cdn":false,"is_cloudflare":false,"has_ipv6":false,"has_private_ip":false,` +
		`"cdn":"","cloud":{"provider":"","region":""},` +
		`"dns":{"a":[],"aaaa":[],"cname":[],"mx":[],"ns":[],"ptr":[],"txt":[]},` +
		`"http_status_code":0,"http_title":"",` +
		`"ip_metadata":{"asn":0,"organization":"","isp":"","country_code":"","country_name":"","city_name":"","region":"","postal_code":"","location_latitude":0,"location_longitude":0},` +
		`"network_ports":[],"network_services":[],"products":[],"tags":[],"web":[],"categories":[],"urls":[],"extracted":{},` +
		`"cert_object":{"subject_common_name":"","subject_organization":"","issuer_common_name":"","issuer_organization":"","not_before":0,"not_after":0,"dns_names":[],"serial_number":"","sha256_fingerprint":"","sha1_fingerprint":"","md5_fingerprint":"","signature_algorithm":"",` +
		`"subject_country":"","subject_province":"","subject_locality":"","issuer_country":"","issuer_serial_number":"","issuer_string":"","ip_addresses":[],"email_addresses":[],"is_valid_hostname":false,"remote_ip_address":""},` +
		`"first_seen":0,"last_seen":0}`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("encoding (-want +got):\n%s", diff)
	}
}

func TestMarshalDerivesAndLeavesCallerAlone(t *testing.T) {
	h := Host{
		Host:      "www.example.com",
		IPAddress: "10.0.0.1",
		CDN:       "cloudflare",
		Cloud:     Cloud{Provider: "aws"},
		DNS:       DNS{A: []string{"10.0.0.2", "10.0.0.1", "10.0.0.2"}, AAAA: []string{"2001:db8::1"}},
		NetworkServices: []Service{
			{Port: 443, Protocol: "tcp", Service: "https"},
			{Port: 22, Service: "ssh"},
		},
		NetworkPorts:   []int{8080},
		HTTPStatusCode: 200,
		FirstSeen:      1700000000,
		LastSeen:       1700000100,
	}
	before := append([]string(nil), h.DNS.A...)
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, h.DNS.A); diff != "" {
		t.Errorf("MarshalJSON changed the caller's slice (-before +after):\n%s", diff)
	}
	var got map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"is_live", "is_resolvable", "is_cloud", "is_cdn", "is_cloudflare", "has_ipv6", "has_private_ip"} {
		if got[k] != true {
			t.Errorf("%s = %v, want true", k, got[k])
		}
	}
	if diff := cmp.Diff([]any{json.Number("22"), json.Number("443"), json.Number("8080")}, got["network_ports"]); diff != "" {
		t.Errorf("network_ports (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"10.0.0.1", "10.0.0.2"}, got["dns"].(map[string]any)["a"]); diff != "" {
		t.Errorf("dns.a (-want +got):\n%s", diff)
	}
	svc := got["network_services"].([]any)[0].(map[string]any)
	if svc["protocol"] != "tcp" || svc["port"] != json.Number("22") {
		t.Errorf("first service = %v, want port 22 with protocol defaulted to tcp", svc)
	}
	if strings.Contains(string(b), "null") || strings.Contains(string(b), "e+") {
		t.Errorf("encoding has null or float exponent: %s", b)
	}
}

func TestMarshalOmitsUnknownIP(t *testing.T) {
	b, err := json.Marshal(Host{Host: "example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"ip_address"`) {
		t.Errorf("ip_address present for unknown IP: %s", b)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	h := Host{
		Host: "a.example.com", Domain: "example.com", TLD: "com", Subdomain: "a", IPAddress: "192.0.2.1",
		DNS:             DNS{A: []string{"192.0.2.1"}, MX: []string{"mx.example.com"}},
		NetworkServices: []Service{{Port: 25, Protocol: "tcp", Service: "smtp", Product: "Postfix", FirstSeen: 1, LastSeen: 2}},
		Cert:            Cert{SubjectCommonName: "a.example.com", DNSNames: []string{"a.example.com"}, NotAfter: 1800000000},
		IPMetadata:      IPMetadata{ASN: 64500, LocationLatitude: 52.1, LocationLongitude: 4.3},
		FirstSeen:       1, LastSeen: 2,
	}
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var got Host
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := h
	want.Derive()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestMerge(t *testing.T) {
	tests := []struct {
		name     string
		old, new Host
		want     Host
	}{
		{
			name: "later observation lacking fields erases nothing",
			old: Host{
				Host: "www.example.com", Domain: "example.com", TLD: "com", Subdomain: "www",
				IPAddress: "192.0.2.1", HTTPStatusCode: 200, HTTPTitle: "Home", CDN: "fastly",
				DNS:        DNS{A: []string{"192.0.2.1"}},
				IPMetadata: IPMetadata{ASN: 64500, CountryCode: "NL", LocationLatitude: 52, LocationLongitude: 4},
				Web:        []string{"Nginx"}, Tags: []string{"login"},
				Cert:      Cert{SubjectCommonName: "www.example.com", SHA256Fingerprint: "aa", DNSNames: []string{"www.example.com"}},
				FirstSeen: 100, LastSeen: 200,
			},
			new: Host{Host: "www.example.com", NetworkPorts: []int{22}, FirstSeen: 300, LastSeen: 300},
			want: Host{
				Host: "www.example.com", Domain: "example.com", TLD: "com", Subdomain: "www",
				IPAddress: "192.0.2.1", HTTPStatusCode: 200, HTTPTitle: "Home", CDN: "fastly",
				IsLive: true, IsResolvable: true, IsCDN: true,
				DNS:          DNS{A: []string{"192.0.2.1"}, AAAA: []string{}, CNAME: []string{}, MX: []string{}, NS: []string{}, PTR: []string{}, TXT: []string{}},
				IPMetadata:   IPMetadata{ASN: 64500, CountryCode: "NL", LocationLatitude: 52, LocationLongitude: 4},
				NetworkPorts: []int{22}, NetworkServices: []Service{}, Products: []string{},
				Web: []string{"Nginx"}, Tags: []string{"login"},
				Categories: []string{}, URLs: []string{}, Extracted: Extracted{},
				Cert: Cert{SubjectCommonName: "www.example.com", SHA256Fingerprint: "aa", DNSNames: []string{"www.example.com"},
					IPAddresses: []string{}, EmailAddresses: []string{}, IsValidHostname: true},
				FirstSeen: 100, LastSeen: 300,
			},
		},
		{
			name: "newer non-empty scalars win, lists union, older first_seen kept",
			old: Host{
				Host: "example.com", IPAddress: "192.0.2.1", HTTPTitle: "Old", HTTPStatusCode: 301,
				DNS:       DNS{A: []string{"192.0.2.1"}, NS: []string{"ns1.example.net"}},
				Products:  []string{"nginx"},
				FirstSeen: 500, LastSeen: 600,
			},
			new: Host{
				Host: "example.com", IPAddress: "192.0.2.9", HTTPTitle: "New", HTTPStatusCode: 200,
				DNS:       DNS{A: []string{"192.0.2.9", "192.0.2.1"}, NS: []string{"ns2.example.net"}},
				Products:  []string{"apache", "nginx"},
				Cloud:     Cloud{Provider: "gcp", Region: "europe-west4"},
				FirstSeen: 400, LastSeen: 450,
			},
			want: Host{
				Host: "example.com", IPAddress: "192.0.2.9", HTTPTitle: "New", HTTPStatusCode: 200,
				IsLive: true, IsResolvable: true, IsCloud: true,
				Cloud:        Cloud{Provider: "gcp", Region: "europe-west4"},
				DNS:          DNS{A: []string{"192.0.2.1", "192.0.2.9"}, AAAA: []string{}, CNAME: []string{}, MX: []string{}, NS: []string{"ns1.example.net", "ns2.example.net"}, PTR: []string{}, TXT: []string{}},
				NetworkPorts: []int{}, NetworkServices: []Service{},
				Products: []string{"apache", "nginx"}, Tags: []string{}, Web: []string{},
				Categories: []string{}, URLs: []string{}, Extracted: Extracted{},
				Cert:      Cert{DNSNames: []string{}, IPAddresses: []string{}, EmailAddresses: []string{}},
				FirstSeen: 400, LastSeen: 600,
			},
		},
		{
			name: "services merge by port and protocol",
			old: Host{Host: "192.0.2.1", NetworkServices: []Service{
				{Port: 80, Protocol: "tcp", Service: "http", Product: "nginx", Version: "1.20", FirstSeen: 100, LastSeen: 200},
				{Port: 53, Protocol: "udp", Service: "domain", FirstSeen: 100, LastSeen: 100},
			}},
			new: Host{Host: "192.0.2.1", NetworkServices: []Service{
				{Port: 80, Protocol: "tcp", Version: "1.24", Banner: "HTTP/1.1 200", FirstSeen: 50, LastSeen: 300},
				{Port: 53, Protocol: "tcp", FirstSeen: 300, LastSeen: 300},
			}},
			want: Host{
				Host: "192.0.2.1", IsLive: true,
				DNS:          DNS{A: []string{}, AAAA: []string{}, CNAME: []string{}, MX: []string{}, NS: []string{}, PTR: []string{}, TXT: []string{}},
				NetworkPorts: []int{53, 80},
				NetworkServices: []Service{
					{Port: 53, Protocol: "tcp", FirstSeen: 300, LastSeen: 300},
					{Port: 53, Protocol: "udp", Service: "domain", FirstSeen: 100, LastSeen: 100},
					{Port: 80, Protocol: "tcp", Service: "http", Product: "nginx", Version: "1.24", Banner: "HTTP/1.1 200", FirstSeen: 50, LastSeen: 300},
				},
				Products: []string{}, Tags: []string{}, Web: []string{}, Categories: []string{}, URLs: []string{}, Extracted: Extracted{},
				Cert: Cert{DNSNames: []string{}, IPAddresses: []string{}, EmailAddresses: []string{}},
			},
		},
		{
			name: "a new certificate replaces the old names",
			old:  Host{Host: "example.com", Cert: Cert{SHA256Fingerprint: "aa", IssuerOrg: "Old CA", DNSNames: []string{"old.example.com"}}},
			new:  Host{Host: "example.com", Cert: Cert{SHA256Fingerprint: "bb", DNSNames: []string{"new.example.com"}}},
			want: Host{
				Host:         "example.com",
				DNS:          DNS{A: []string{}, AAAA: []string{}, CNAME: []string{}, MX: []string{}, NS: []string{}, PTR: []string{}, TXT: []string{}},
				NetworkPorts: []int{}, NetworkServices: []Service{}, Products: []string{}, Tags: []string{}, Web: []string{},
				Categories: []string{}, URLs: []string{}, Extracted: Extracted{},
				Cert: Cert{SHA256Fingerprint: "bb", DNSNames: []string{"new.example.com"}, IPAddresses: []string{}, EmailAddresses: []string{}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Merge(tt.old, tt.new)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Merge (-want +got):\n%s", diff)
			}
			// Merging the same observation again changes nothing.
			if diff := cmp.Diff(got, Merge(got, tt.new)); diff != "" {
				t.Errorf("Merge not idempotent (-once +twice):\n%s", diff)
			}
		})
	}
}

func TestMergeFirstSeenIgnoresUnknown(t *testing.T) {
	got := Merge(Host{Host: "example.com"}, Host{Host: "example.com", FirstSeen: 10, LastSeen: 10})
	if got.FirstSeen != 10 || got.LastSeen != 10 {
		t.Errorf("first/last seen = %d/%d, want 10/10", got.FirstSeen, got.LastSeen)
	}
}

// is_valid_hostname follows from the certificate's names: an exact name or
// a wildcard covering one label, without case.
func TestDeriveValidHostname(t *testing.T) {
	for _, tt := range []struct {
		host string
		cert Cert
		want bool
	}{
		{"www.example.com", Cert{SubjectCommonName: "www.example.com"}, true},
		{"WWW.example.com", Cert{DNSNames: []string{"www.EXAMPLE.com"}}, true},
		{"a.example.com", Cert{DNSNames: []string{"*.example.com"}}, true},
		{"a.b.example.com", Cert{DNSNames: []string{"*.example.com"}}, false},
		{"example.com", Cert{DNSNames: []string{"*.example.com"}}, false},
		{"example.com", Cert{DNSNames: []string{"*."}}, false},
		{"other.org", Cert{SubjectCommonName: "example.com", DNSNames: []string{"www.example.com"}}, false},
		{"example.com", Cert{}, false},
		{"example.com", Cert{IsValidHostname: true}, true}, // an observed true stays
	} {
		h := Host{Host: tt.host, Cert: tt.cert}
		h.Derive()
		if h.Cert.IsValidHostname != tt.want {
			t.Errorf("%s with %+v: is_valid_hostname %v, want %v", tt.host, tt.cert, h.Cert.IsValidHostname, tt.want)
		}
	}
}
