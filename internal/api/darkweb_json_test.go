package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/darkwebstore"
)

// referenceRecord is the wire record as the handlers built it before the
// hand-written encoder (a darkwebRecord for encoding/json), with the
// disclosure rule as it was: the reference the encoder must match.
func referenceRecord(res darkwebstore.Result, d refPolicy) darkwebRecord {
	r := res.Record
	out := darkwebRecord{
		ID: res.ID, Email: r.Email, Username: r.Username, Password: r.Password, HashedPassword: r.HashedPassword,
		HashType: r.HashType, Name: r.Name, Phone: r.Phone, Address: r.Address, IPAddress: r.IP, VIN: r.VIN,
		Domain: r.Domain, DatabaseName: r.Breach, BreachDate: r.BreachDate, DateAdded: res.DateAdded,
		Hostname: r.Hostname, MACAddress: r.MAC, OrgAlias: r.OrgAlias, BIN: r.BIN, URL: r.URL, Source: r.Source,
	}
	if out.Domain == "" {
		_, out.Domain, _ = strings.Cut(r.Email, "@")
	}
	if out.HashedPassword == nil {
		out.HashedPassword = []string{}
	}
	if clear, reason := referenceClear(d, &r); !clear {
		out.Masked, out.MaskedReason = true, reason
		out.Password = darkweb.Mask(out.Password)
		hs := make([]string, len(out.HashedPassword))
		for i, h := range out.HashedPassword {
			hs[i] = darkweb.Mask(h)
		}
		out.HashedPassword = hs
	}
	return out
}

// refPolicy is a disclosure policy spelt out: every record, or the
// verified and the merely claimed domains.
type refPolicy struct {
	all                  bool
	verified, unverified []string
}

func (p refPolicy) disclosure() darkweb.Disclosure {
	var cs []darkweb.Claim
	for _, d := range p.verified {
		cs = append(cs, darkweb.Claim{Domain: d, Verified: true})
	}
	for _, d := range p.unverified {
		cs = append(cs, darkweb.Claim{Domain: d})
	}
	return darkweb.NewDisclosure(p.all, cs)
}

// referenceClear is the disclosure rule written plainly: secrets in clear
// for every record under one of the verified domains by its email's
// domain, its domain or its URL's host; masked "domain_not_verified"
// under a domain only claimed, "domain_not_claimed" otherwise.
func referenceClear(d refPolicy, r *darkweb.Record) (bool, string) {
	if d.all {
		return true, ""
	}
	var hosts []string
	if _, h, ok := strings.Cut(r.Email, "@"); ok {
		hosts = append(hosts, h)
	}
	if r.Domain != "" {
		hosts = append(hosts, r.Domain)
	}
	if h := darkweb.URLHost(r.URL); h != "" {
		hosts = append(hosts, h)
	}
	in := func(doms []string) bool {
		for _, h := range hosts {
			h = strings.ToLower(h)
			for _, dom := range doms {
				if h == dom || strings.HasSuffix(h, "."+dom) {
					return true
				}
			}
		}
		return false
	}
	switch {
	case in(d.verified):
		return true, ""
	case in(d.unverified):
		return false, "domain_not_verified"
	}
	return false, "domain_not_claimed"
}

// encodingJSON is how writeJSON encoded a body.
func encodingJSON(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// hardStrings are values whose escaping or masking differs between naive
// encoders: quotes, backslashes, every control character, HTML
// characters, U+2028/U+2029, DEL, multi-byte characters at either end,
// bytes that are not UTF-8, one- and two-character values.
var hardStrings = []string{
	"", "a", "ab", "abc", `p"ss`, `back\slash`, "tab\there", "nl\nx\r\b\f", "<script>&amp;</script>",
	"line\u2028sep\u2029x", "\u2028", "del\x7f", "éclair", "密码密码", "a密", "密", "🔑x🔑", "\xffbad\xfe", "\xff", "x\xff",
	"\x00\x01\x1f", string([]byte{0xe2, 0x80}), "ends with é", "\u00a0nbsp",
}

func hardRecords() []darkwebstore.Result {
	var out []darkwebstore.Result
	for i, s := range hardStrings {
		r := darkweb.Record{
			Email: "user" + fmt.Sprint(i) + "@example.com", Username: s, Password: s, HashType: "sha1", Name: s, Phone: s,
			Address: s, IP: "192.0.2.1", VIN: s, Hostname: s, MAC: s, OrgAlias: s, BIN: s, URL: s, Breach: s,
			BreachDate: "2020-01-02", Source: s,
		}
		switch i % 4 {
		case 0:
			r.HashedPassword = []string{s, "0f0f" + s}
		case 1:
			r.Email = "x@other.example"
			r.Domain = "sub.example.com"
		case 2:
			r.Email = "no-at-sign" + s
			r.URL = "https://login.example.com/" + s
		case 3:
			r.Email = "y@EXAMPLE.org"
			r.HashedPassword = []string{}
		}
		out = append(out, darkwebstore.Result{ID: fmt.Sprintf("%032x", i), Record: r, DateAdded: int64(1700000000 + i)})
	}
	return out
}

// TestDarkwebJSONMatchesEncodingJSON checks the hand-written answers
// byte for byte against encoding/json over the previous wire types, for
// each disclosure (all, by domain, none), small pages and pages large
// enough to be encoded on several cores, with and without a
// vulnerability.
func TestDarkwebJSONMatchesEncodingJSON(t *testing.T) {
	base := hardRecords()
	var big []darkwebstore.Result
	for len(big) < 1000 {
		big = append(big, base...)
	}
	vuln := vulnRecord{CVEID: "CVE-2024-0001", Title: `a "title" <b>&`, CWEs: []string{"CWE-79"}, CVSSV3Score: 9.8}
	vulnJSON, err := appendJSONValue(nil, vuln)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []refPolicy{{all: true}, {verified: []string{"example.com"}}, {verified: []string{"example.org", "other.example"}},
		{unverified: []string{"example.com"}}, {verified: []string{"sub.example.com"}, unverified: []string{"example.com", "example.org"}}, {}} {
		pol := d.disclosure()
		for _, res := range [][]darkwebstore.Result{nil, base[:1], base, big} {
			for _, withVuln := range []bool{false, true} {
				want := []darkwebRecord{}
				for _, f := range res {
					w := referenceRecord(f, d)
					if withVuln {
						v := vuln
						w.Vulnerability = &v
					}
					want = append(want, w)
				}
				var vj []byte
				if withVuln {
					vj = vulnJSON
				}
				got := append(appendDarkwebRecords([]byte(`{"response":`), res, &pol, vj), "}\n"...)
				if diff := cmp.Diff(string(encodingJSON(t, map[string]any{"response": want})), string(got)); diff != "" {
					t.Fatalf("disclosure %+v, %d records, vulnerability %v: (-encoding/json +hand-written)\n%s", d, len(res), withVuln, diff)
				}
			}
		}
	}
}

func TestDiscoveredEmailJSONMatchesEncodingJSON(t *testing.T) {
	for i, s := range hardStrings {
		e := darkwebstore.EmailRow{ID: fmt.Sprintf("%016x", i), Email: s + "@example.com", Domain: s, FirstSeen: 1, LastSeen: int64(i) << 40, BreachDate: s}
		switch i % 3 {
		case 0:
			e.Breaches = []string{s, "B"}
		case 1:
			e.Breaches = []string{}
		}
		want := discoveredEmail{ID: e.ID, Email: e.Email, Domain: e.Domain, DateAdded: e.LastSeen, BreachDate: e.BreachDate,
			Breaches: e.Breaches, FirstSeen: e.FirstSeen, LastSeen: e.LastSeen}
		got := append(appendDiscoveredEmail(nil, &e), '\n')
		if diff := cmp.Diff(string(encodingJSON(t, want)), string(got)); diff != "" {
			t.Fatalf("%q: (-encoding/json +hand-written)\n%s", s, diff)
		}
	}
}

// FuzzAppendJSONString checks the string escaping and the masking against
// encoding/json and darkweb.Mask for any input.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range hardStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(appendJSONString(nil, s))+"\n", string(encodingJSON(t, s)); got != want {
			t.Fatalf("appendJSONString(%q) = %s, encoding/json %s", s, got, want)
		}
		if got, want := string(appendMasked(nil, s))+"\n", string(encodingJSON(t, darkweb.Mask(s))); got != want {
			t.Fatalf("appendMasked(%q) = %s, encoding/json of Mask %s", s, got, want)
		}
	})
}
