package host_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hostgen"
)

// plain is Host without its MarshalJSON: what encoding/json writes.
type plain host.Host

// The hand-written encoding is encoding/json's, byte for byte: on generated
// hosts (every field set somewhere), and on the strings and numbers
// encoding/json treats specially. A field added to Host without appendJSON
// fails here.
func TestCanonicalJSONIsEncodingJSON(t *testing.T) {
	check := func(h host.Host) {
		t.Helper()
		got, err := h.CanonicalJSON()
		if err != nil {
			t.Fatal(err)
		}
		d := h
		d.Derive()
		want, err := json.Marshal(plain(d))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("CanonicalJSON differs from encoding/json:\n got %s\nwant %s", got, want)
		}
	}
	n := 0
	hostgen.New(3000, 7, 1795000000).All(func(h host.Host) error {
		check(h)
		n++
		return nil
	})
	if n != 3000 {
		t.Fatalf("%d generated hosts", n)
	}
	odd := []string{"", `"quoted" \back\slash`, "<script>&amp;</script>", "tab\tnew\nline\rcr\bbs\fff",
		"\x00\x01\x1f\x7f", "bad \xff\xfe utf-8", "line\u2028para\u2029", "ümlaut ✓ 日本", "\xe2\x82"}
	for _, s := range odd {
		check(host.Host{Host: s, HTTPTitle: s, IPAddress: s, Tags: []string{s, s + "x"},
			NetworkServices: []host.Service{{Port: 1, Banner: s}}, Cert: host.Cert{DNSNames: []string{s}}})
	}
	check(host.Host{Host: "a.example.com", Categories: []string{"b", "a"}, URLs: []string{"https://a.example.com/"},
		Extracted: host.Extracted{"emails": {"b@example.com", "a@example.com"}, "<&>": {"x"}, "": {"dropped"}, "none": nil},
		Cert: host.Cert{SubjectCountry: "US", IssuerString: "CN=R10,O=Let's Encrypt,C=US", IPAddresses: []string{"192.0.2.1"},
			EmailAddresses: []string{"ops@example.com"}, IsValidHostname: true, RemoteIPAddress: "192.0.2.1"}})
	for _, f := range []float64{0, math.Copysign(0, -1), 1e-7, -1e-7, 1e-6, 1e21, 1e20, 123.456, -33.8688,
		5e-324, math.MaxFloat64, 51.5, 1e-10} {
		check(host.Host{Host: "x", IPMetadata: host.IPMetadata{LocationLatitude: f, LocationLongitude: -f}})
	}
	if _, err := (host.Host{IPMetadata: host.IPMetadata{LocationLatitude: math.NaN()}}).CanonicalJSON(); err == nil {
		t.Error("NaN encoded")
	}
}
