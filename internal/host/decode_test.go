package host_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hostgen"
)

// v2 is what DecodeJSON must answer: encoding/json/v2 with case-insensitive
// member names.
func v2(b []byte) (host.Host, error) {
	var h host.Host
	err := jsonv2.Unmarshal(b, &h, jsonv2.MatchCaseInsensitiveNames(true))
	return h, err
}

// sameAsV2 fails t unless DecodeJSON and, where it takes b, the fast
// reader alone agree with v2 on b: the same host, or both an error (the
// same error, since DecodeJSON's errors are v2's).
func sameAsV2(t testing.TB, b []byte) (fast bool) {
	t.Helper()
	want, wantErr := v2(b)
	var got host.Host
	gotErr := host.DecodeJSON(b, &got)
	if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
		t.Fatalf("%q: DecodeJSON error %v, v2 %v", b, gotErr, wantErr)
	}
	if gotErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: DecodeJSON\n%#v\nv2\n%#v", b, got, want)
	}
	var f host.Host
	if !host.DecodeFast(b, &f) {
		return false
	}
	if wantErr != nil {
		t.Fatalf("%q: the fast reader took what v2 refuses (%v)", b, wantErr)
	}
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("%q: fast reader\n%#v\nv2\n%#v", b, f, want)
	}
	return true
}

// Every host the store writes and every generated native line takes the
// fast path and decodes as v2 decodes it.
func TestDecodeJSONFastOnCanonicalHosts(t *testing.T) {
	n := 0
	hostgen.New(3000, 11, 1795000000).All(func(h host.Host) error {
		b, err := h.CanonicalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !sameAsV2(t, b) {
			t.Fatalf("not read by the fast path: %s", b)
		}
		n++
		return nil
	})
	if n != 3000 {
		t.Fatalf("%d hosts", n)
	}
	// Strings encoding/json escapes (HTML, U+2028, control bytes) and
	// replaces (invalid UTF-8), and the numbers it writes in exponent form.
	for _, s := range []string{`"quoted" \back\slash/`, "<script>&amp;</script>", "tab\tnew\nline\rcr\bbs\fff",
		"\x00\x01\x1f\x7f", "bad \xff\xfe utf-8", "line\u2028para\u2029", "ümlaut ✓ 日本"} {
		h := host.Host{Host: "x.example.com", HTTPTitle: s, Tags: []string{s},
			NetworkServices: []host.Service{{Port: 1, Banner: s}},
			IPMetadata:      host.IPMetadata{LocationLatitude: 1e-7, LocationLongitude: -1e21}}
		b, err := h.CanonicalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !sameAsV2(t, b) {
			t.Fatalf("not read by the fast path: %s", b)
		}
	}
}

// oddLines are inputs the fast reader must leave to v2 or read as v2 does.
var oddLines = []string{
	``, `null`, `{}`, ` {} `, `{"host":"a"}x`, `{"host":"a"}{}`, `[]`, `"x"`, `{"host":"a",}`, `{"host" "a"}`,
	`{"host":"a","host":"b"}`, `{"host":"a","HOST":"b"}`, `{"Host":"a"}`, `{"hOst":"a"}`,
	`{"host":null}`, `{"tags":null}`, `{"tags":["a",null]}`, `{"tags":[]}`, `{"dns":{}}`, `{"dns":{"a":[]}}`,
	`{"unknown":1,"host":"a"}`, `{"unknown":{"x":[1,{"y":null}]},"host":"a"}`,
	`{"host":"\ud83d\ude00"}`, `{"host":"\ud800"}`, `{"host":"\u00e9\u0041\/"}`, `{"host":"\x"}`, `{"host":"\u12"}`,
	"{\"host\":\"a\xffb\"}", "{\"host\":\"tab\there\"}", `{"host":"é"}`,
	`{"http_status_code":1.0}`, `{"http_status_code":1e2}`, `{"http_status_code":-0}`, `{"http_status_code":01}`,
	`{"http_status_code":-}`, `{"http_status_code":9223372036854775808}`, `{"http_status_code":"200"}`,
	`{"first_seen":-9223372036854775808}`, `{"ip_metadata":{"location_latitude":1e400}}`,
	`{"ip_metadata":{"location_latitude":-0.0}}`, `{"ip_metadata":{"location_latitude":1.}}`,
	`{"ip_metadata":{"location_latitude":.5}}`, `{"ip_metadata":{"location_latitude":1E+2}}`,
	`{"ip_metadata":{"asn":"13335"}}`, `{"is_live":"true"}`, `{"is_live":tru}`, `{"is_live":1}`,
	`{"network_ports":[80,443,80]}`, `{"network_ports":[80.5]}`, `{"network_services":[{"port":80,"port":81}]}`,
	`{"network_services":[{}, {"protocol":"udp"}]}`, `{"cert_object":{"dns_names":["a","b"]},"cert_object":{}}`,
	`{"cloud":{"provider":"aws","region":"us-east-1","Region":"x"}}`, "\t{\r\n\"host\" :\t\"a\" , \"tags\" : [ \"x\" , \"y\" ] }\n",
	`{"host":"a"`, `{"host":"a`, `{"tags":["a"`, `{"cloud":{"provider":"a"}`,
}

func TestDecodeJSONOddLinesAsV2(t *testing.T) {
	fast := 0
	for _, s := range oddLines {
		if sameAsV2(t, []byte(s)) {
			fast++
		}
	}
	if fast == 0 || fast == len(oddLines) {
		t.Fatalf("the fast path took %d of %d odd lines", fast, len(oddLines))
	}
}

// The fast reader never answers differently from v2: whatever it takes, v2
// decodes to the same host.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range oddLines {
		f.Add([]byte(s))
	}
	hostgen.New(20, 5, 1795000000).All(func(h host.Host) error {
		b, _ := json.Marshal(h)
		f.Add(b)
		return nil
	})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 || strings.Count(string(b), "[") > 1000 {
			return
		}
		sameAsV2(t, b)
	})
}

// BenchmarkDecodeJSON decodes generated native lines: the hand-written
// reader (fast) against encoding/json/v2 (v2).
func BenchmarkDecodeJSON(b *testing.B) {
	var lines [][]byte
	size := 0
	hostgen.New(1000, 1, 1795000000).All(func(h host.Host) error {
		l, _ := h.CanonicalJSON()
		lines = append(lines, l)
		size += len(l)
		return nil
	})
	for _, c := range []struct {
		name   string
		decode func([]byte, *host.Host) error
	}{
		{"fast", host.DecodeJSON},
		{"v2", func(l []byte, h *host.Host) error {
			return jsonv2.Unmarshal(l, h, jsonv2.MatchCaseInsensitiveNames(true))
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(size / len(lines)))
			for i := 0; b.Loop(); i++ {
				var h host.Host
				if err := c.decode(lines[i%len(lines)], &h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The FullHunt fields (categories, urls, extracted, the certificate's
// subject and issuer details) decode as v2 decodes them: an empty
// extracted object on the fast path, artefacts through v2.
func TestDecodeJSONFullHuntFields(t *testing.T) {
	h := host.Host{Host: "a.example.com", Categories: []string{"login"}, URLs: []string{"https://a.example.com/login"},
		Cert: host.Cert{SubjectCountry: "US", SubjectProvince: "California", SubjectLocality: "San Francisco",
			IssuerCountry: "US", IssuerSerialNumber: "0a", IssuerString: "CN=R10,O=Let's Encrypt,C=US",
			IPAddresses: []string{"192.0.2.1"}, EmailAddresses: []string{"ops@example.com"}, RemoteIPAddress: "192.0.2.1"}}
	b, err := h.CanonicalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !sameAsV2(t, b) {
		t.Fatalf("not read by the fast path: %s", b)
	}
	h.Extracted = host.Extracted{"emails": {"ops@example.com"}}
	if b, err = h.CanonicalJSON(); err != nil {
		t.Fatal(err)
	}
	if sameAsV2(t, b) {
		t.Fatalf("the fast path took extracted artefacts: %s", b)
	}
	var got host.Host
	if err := host.DecodeJSON(b, &got); err != nil || len(got.Extracted["emails"]) != 1 {
		t.Fatalf("extracted lost: %+v %v", got.Extracted, err)
	}
}
