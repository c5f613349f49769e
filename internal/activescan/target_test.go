package activescan_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/periscope-oss/periscope/internal/activescan"
	"github.com/periscope-oss/periscope/internal/periscope"
)

func TestParseTarget(t *testing.T) {
	for _, c := range []struct {
		typ, in, wantType, want, code string
	}{
		{"", "Example.COM.", "domain", "example.com", ""},
		{"", "8.8.4.7", "host", "8.8.4.7", ""},
		{"", "8.8.4.7/24", "ip_range", "8.8.4.0/24", ""},
		{"", "2001:4860::/32", "ip_range", "2001:4860::/32", ""},
		{"host", "WWW.example.com", "host", "www.example.com", ""},
		{"ip_range", "8.8.8.8", "ip_range", "8.8.8.8/32", ""},
		{"", "10.0.0.0/8", "", "", periscope.EInvalid},
		{"", "127.0.0.1", "", "", periscope.EInvalid},
		{"ip_range", "0.0.0.0/0", "", "", periscope.EInvalid},
		{"host", "::ffff:8.8.8.8", "", "", periscope.EInvalid},
		{"host", "fe80::1%eth0", "", "", periscope.EInvalid},
		{"", "http://example.com/", "", "", periscope.EInvalid},
		{"", "", "", "", periscope.EMissing},
		{"", "exa\x00mple.com", "", "", periscope.EInvalid},
		{"", "exa\xffmple.com", "", "", periscope.EInvalid},
		{"subnet", "8.8.8.0/24", "", "", periscope.EInvalid},
	} {
		got, err := activescan.ParseTarget(c.typ, c.in, false)
		if code := periscope.ErrorCode(err); err != nil && code != c.code || err == nil && c.code != "" {
			t.Errorf("ParseTarget(%q, %q) error %v, want code %q", c.typ, c.in, err, c.code)
			continue
		}
		if err == nil && (got.Type != c.wantType || got.Value != c.want) {
			t.Errorf("ParseTarget(%q, %q) = %s %s, want %s %s", c.typ, c.in, got.Type, got.Value, c.wantType, c.want)
		}
	}
	if _, err := activescan.ParseTarget("", "127.0.0.1", true); err != nil {
		t.Errorf("allow-private refused loopback: %v", err)
	}
}

func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"example.com", "8.8.8.8", "8.8.8.0/24", "::1", "a..b", "xn--bcher-kva.de"} {
		f.Add("", s)
	}
	f.Fuzz(func(t *testing.T, typ, s string) {
		got, err := activescan.ParseTarget(typ, s, false)
		if err != nil {
			if periscope.ErrorCode(err) == periscope.EInternal {
				t.Fatalf("internal error for %q: %v", s, err)
			}
			return
		}
		if !utf8.ValidString(got.Value) || strings.ContainsRune(got.Value, 0) || got.Value == "" {
			t.Fatalf("ParseTarget(%q) = %q", s, got.Value)
		}
		again, err := activescan.ParseTarget(got.Type, got.Value, false)
		if err != nil || again.Value != got.Value {
			t.Fatalf("not idempotent: %q -> %q -> %q (%v)", s, got.Value, again.Value, err)
		}
	})
}
