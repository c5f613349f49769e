package host

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		in   string
		want Name
	}{
		{"www.example.com", Name{Host: "www.example.com", Domain: "example.com", TLD: "com", Subdomain: "www"}},
		{"WWW.Example.COM.", Name{Host: "www.example.com", Domain: "example.com", TLD: "com", Subdomain: "www"}},
		{"  example.com \n", Name{Host: "example.com", Domain: "example.com", TLD: "com"}},
		{"a.b.example.co.uk", Name{Host: "a.b.example.co.uk", Domain: "example.co.uk", TLD: "co.uk", Subdomain: "a.b"}},
		{"bücher.de", Name{Host: "xn--bcher-kva.de", Domain: "xn--bcher-kva.de", TLD: "de"}},
		{"shop.BÜCHER.de", Name{Host: "shop.xn--bcher-kva.de", Domain: "xn--bcher-kva.de", TLD: "de", Subdomain: "shop"}},
		{"_dmarc.example.com", Name{Host: "_dmarc.example.com", Domain: "example.com", TLD: "com", Subdomain: "_dmarc"}},
		{"foo.github.io", Name{Host: "foo.github.io", Domain: "foo.github.io", TLD: "github.io"}},
		{"github.io", Name{Host: "github.io", Domain: "github.io", TLD: "io"}},
		{"s3.amazonaws.com", Name{Host: "s3.amazonaws.com", Domain: "amazonaws.com", TLD: "com", Subdomain: "s3"}},
		{"dc01.sevenkingdoms.local", Name{Host: "dc01.sevenkingdoms.local", Domain: "sevenkingdoms.local", TLD: "local", Subdomain: "dc01"}},
		{"192.0.2.1", Name{Host: "192.0.2.1", IP: true}},
		{"2001:DB8::1", Name{Host: "2001:db8::1", IP: true}},
		{"[2001:db8::1]", Name{Host: "2001:db8::1", IP: true}},
		{"::ffff:192.0.2.1", Name{Host: "192.0.2.1", IP: true}},
	}
	for _, tt := range tests {
		got, err := Normalize(tt.in)
		if err != nil {
			t.Errorf("Normalize(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Normalize(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestNormalizeRejects(t *testing.T) {
	tests := []struct{ in, reason string }{
		{"", "empty"},
		{"   ", "empty"},
		{"com", "single-label"},
		{"localhost", "single-label"},
		{"co.uk", "public suffix"},
		{"*.example.com", "wildcard"},
		{"a..example.com", "empty label"},
		{"-a.example.com", "hyphen"},
		{"a b.example.com", "not allowed"},
		{"http://example.com", "not allowed"},
		{"example.com:443", "not allowed"},
		{strings.Repeat("a", 64) + ".com", "63"},
		{strings.Repeat("a.", 130) + "com", "253"},
		{strings.Repeat("x", 5000), "253"},
		{"fe80::1%eth0", "not allowed"},
	}
	for _, tt := range tests {
		_, err := Normalize(tt.in)
		if err == nil {
			t.Errorf("Normalize(%q) = nil error, want one mentioning %q", tt.in, tt.reason)
			continue
		}
		if !errors.Is(err, ErrInvalidName) {
			t.Errorf("Normalize(%q) error %v does not wrap ErrInvalidName", tt.in, err)
		}
		if !strings.Contains(err.Error(), tt.reason) {
			t.Errorf("Normalize(%q) error %q does not mention %q", tt.in, err, tt.reason)
		}
	}
}

func TestReverseKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"www.example.com", "com.example.www"},
		{"example.com", "com.example"},
		{"a.b.example.co.uk", "uk.co.example.b.a"},
		{"192.0.2.1", "192.0.2.1"},
		{"2001:db8::1", "2001:db8::1"},
	}
	for _, tt := range tests {
		if got := ReverseKey(tt.in); got != tt.want {
			t.Errorf("ReverseKey(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestReversePrefixSelectsDomain(t *testing.T) {
	prefix := ReversePrefix("example.com")
	apex := ReverseKey("example.com")
	tests := []struct {
		name string
		in   bool
	}{
		{"example.com", true},
		{"www.example.com", true},
		{"a.b.example.com", true},
		{"example-shop.com", false},
		{"notexample.com", false},
		{"example.com.evil.net", false},
	}
	for _, tt := range tests {
		k := ReverseKey(tt.name)
		got := k == apex || strings.HasPrefix(k, prefix)
		if got != tt.in {
			t.Errorf("%q (key %q) under example.com = %v, want %v", tt.name, k, got, tt.in)
		}
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"www.example.com", "bücher.de", "co.uk", "1.2.3.4", "[::1]", "a..b", "_x.github.io", "xn--bcher-kva.de", "ＥＸＡＭＰＬＥ.com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := Normalize(s)
		if err != nil {
			return
		}
		again, err := Normalize(n.Host)
		if err != nil {
			t.Fatalf("Normalize(%q) = %q, which does not normalise again: %v", s, n.Host, err)
		}
		if again != n {
			t.Fatalf("not idempotent: %q -> %+v -> %+v", s, n, again)
		}
		if n.IP {
			return
		}
		if n.Host != strings.ToLower(n.Host) || len(n.Host) > 253 {
			t.Fatalf("bad host %q", n.Host)
		}
		if !strings.HasSuffix(n.Domain, "."+n.TLD) {
			t.Fatalf("domain %q not under tld %q", n.Domain, n.TLD)
		}
		want := n.Domain
		if n.Subdomain != "" {
			want = n.Subdomain + "." + n.Domain
		}
		if want != n.Host {
			t.Fatalf("parts %+v do not rebuild the host", n)
		}
		if back := ReverseKey(ReverseKey(n.Host)); back != n.Host {
			t.Fatalf("ReverseKey not an involution: %q -> %q", n.Host, back)
		}
	})
}
