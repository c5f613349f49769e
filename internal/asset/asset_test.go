package asset

import (
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/periscope"
)

func TestDomain(t *testing.T) {
	good := map[string]string{
		"Example.COM":         "example.com",
		"example.com.":        "example.com",
		"www.example.co.uk":   "www.example.co.uk",
		"bücher.de":           "xn--bcher-kva.de",
		"xn--bcher-kva.de":    "xn--bcher-kva.de",
		"sub.acme.io":         "sub.acme.io",
		"münchen.example.com": "xn--mnchen-3ya.example.com",
		"a-b.example.org":     "a-b.example.org",
	}
	for in, want := range good {
		got, err := Domain(in)
		if err != nil || got != want {
			t.Errorf("Domain(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	bad := []string{
		"", "exa mple.com", "http://example.com", "example.com/path", "1.2.3.4", "::1",
		"co.uk", "com", "example..com", ".example.com", "example.invalidtld",
		strings.Repeat("a", 60) + "." + strings.Repeat("b", 60) + "." + strings.Repeat("c", 60) + "." + strings.Repeat("d", 60) + "." + strings.Repeat("e", 60) + ".com",
		strings.Repeat("a", 64) + ".com", "-bad.com", "user@example.com", "example.com:443",
	}
	for _, in := range bad {
		if got, err := Domain(in); err == nil {
			t.Errorf("Domain(%q) = %q, want an error", in, got)
		} else if c := periscope.ErrorCode(err); c != periscope.EInvalid && c != periscope.EMissing {
			t.Errorf("Domain(%q) code %q", in, c)
		}
	}
}

func TestIPRange(t *testing.T) {
	good := map[string]string{
		"8.8.8.8":        "8.8.8.8/32",
		"8.8.8.0/24":     "8.8.8.0/24",
		"8.8.8.7/24":     "8.8.8.0/24",
		"1.0.0.0/16":     "1.0.0.0/16",
		"2606:4700::/48": "2606:4700::/48",
		"2606:4700::1":   "2606:4700::1/128",
	}
	for in, want := range good {
		got, err := IPRange(in, DefaultLimits)
		if err != nil || got.String() != want {
			t.Errorf("IPRange(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	bad := []string{
		"", "10.0.0.0/8", "10.1.2.3", "192.168.1.0/24", "172.16.5.0/24", "127.0.0.1",
		"169.254.1.0/24", "100.64.0.0/16", "224.0.0.1", "192.0.2.0/24", "198.51.100.7",
		"203.0.113.0/24", "8.0.0.0/8", "2606::/16", "fe80::1", "::1", "fc00::/8",
		"2001:db8::/48", "ff02::1", "not-an-ip", "8.8.8.8/33", "::ffff:8.8.8.8",
		"0.0.0.0/0", "255.255.255.255",
	}
	for _, in := range bad {
		if got, err := IPRange(in, DefaultLimits); err == nil {
			t.Errorf("IPRange(%q) = %v, want an error", in, got)
		}
	}
}

// TestIPRangePrivate: with AllowPrivate (--allow-private-targets) internal
// space may be claimed, within the same size caps; reserved space may not.
// Without it the error is the one public-only deployments always gave.
func TestIPRangePrivate(t *testing.T) {
	lim := DefaultLimits
	lim.AllowPrivate = true
	good := map[string]string{
		"127.0.0.1":      "127.0.0.1/32",
		"10.1.2.3/16":    "10.1.0.0/16",
		"192.168.1.0/24": "192.168.1.0/24",
		"172.16.5.0/24":  "172.16.5.0/24",
		"100.64.0.0/16":  "100.64.0.0/16",
		"169.254.1.0/24": "169.254.1.0/24",
		"::1":            "::1/128",
		"fd12:3456::/48": "fd12:3456::/48",
		"fe80::/64":      "fe80::/64",
		"8.8.8.0/24":     "8.8.8.0/24",
	}
	for in, want := range good {
		got, err := IPRange(in, lim)
		if err != nil || got.String() != want {
			t.Errorf("IPRange(%q, private) = %v, %v; want %s", in, got, err, want)
		}
		if _, err := IPRange(in, DefaultLimits); in != "8.8.8.0/24" && (err == nil || !strings.Contains(err.Error(), "is not public unicast space (it overlaps")) {
			t.Errorf("IPRange(%q, public only) = %v, want the public-space error", in, err)
		}
	}
	for _, in := range []string{"10.0.0.0/8", "172.0.0.0/8", "224.0.0.1", "192.0.2.0/24", "0.0.0.1", "255.255.255.255",
		"198.18.0.0/16", "2001:db8::/48", "ff02::1", "::", "::ffff:10.0.0.1", "fc00::/7"} {
		if got, err := IPRange(in, lim); err == nil {
			t.Errorf("IPRange(%q, private) = %v, want an error", in, got)
		}
	}
}

func FuzzDomain(f *testing.F) {
	for _, s := range []string{"example.com", "bücher.de", "co.uk", "a..b", "xn--"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Domain(s)
		if err != nil {
			return
		}
		again, err := Domain(got)
		if err != nil || again != got {
			t.Fatalf("Domain not idempotent: %q -> %q -> %q, %v", s, got, again, err)
		}
	})
}
