package hoststore

import (
	"slices"
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/host"
)

// A host's terms: values trimmed and lower-cased (ASCII and not), empty
// and over-long values left out, repeats once, self-answered terms (its
// own address, its own name in its certificate) left out, sorted.
func TestHostTerms(t *testing.T) {
	long := strings.Repeat("a", maxTermLen)
	h := host.Host{
		Host: "www.example.com", Domain: "example.com", TLD: "com", IPAddress: "192.0.2.1",
		DNS:          host.DNS{A: []string{"192.0.2.1", "192.0.2.2"}, TXT: []string{long, long + "b", " "}},
		IPMetadata:   host.IPMetadata{ASN: 64500, Organization: " Example Ltd ", ISP: "Example Ltd", CountryCode: "DE", CityName: "München"},
		NetworkPorts: []int{443, 80},
		NetworkServices: []host.Service{{Port: 443, Protocol: "tcp", Service: "https", Product: "NGINX"},
			{Port: 80, Protocol: "tcp", Service: "http", Product: "nginx"}},
		Web:  []string{"ÄÖÜ Tech", "Bootstrap"},
		Cert: host.Cert{SubjectCommonName: "WWW.example.com", DNSNames: []string{"www.example.com", "Example.com"}, IssuerOrg: "Let's Encrypt"},
	}
	want := []string{"asn:64500", "cc:de", "city:münchen", "d:example.com", "iorg:let's encrypt", "ip:192.0.2.2",
		"org:example ltd", "port:443", "port:80", "prod:nginx", "san:example.com", "svc:http", "svc:https",
		"tech:bootstrap", "tech:äöü tech", "tld:com", "txt:" + long}
	slices.Sort(want)
	if got := hostTerms(h); !slices.Equal(got, want) {
		t.Errorf("hostTerms:\n got %q\nwant %q", got, want)
	}
}
