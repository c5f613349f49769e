// Package asset validates and normalises the assets an organization claims:
// domains (IDNA to ASCII, lower case, under a public suffix) and public IP
// ranges (docs/api.md "Organizations and assets").
package asset

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/periscope-oss/periscope/internal/periscope"
	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

var domainProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.ValidateLabels(true),
	idna.StrictDomainName(true),
	idna.VerifyDNSLength(true),
)

// Domain normalises s as an organization domain: IDNA to ASCII, lower case,
// trailing dot removed. It must be a registrable name under a public suffix
// (or a name below one). The error is an *periscope.Error naming the rule.
func Domain(s string) (string, error) {
	bad := func(format string, args ...any) error {
		return periscope.Errorf(periscope.EInvalid, "domain: "+format, args...)
	}
	if s == "" {
		return "", periscope.Errorf(periscope.EMissing, "domain is required.")
	}
	if len(s) > 1024 {
		return "", bad("longer than 253 characters")
	}
	if strings.ContainsAny(s, " \t\r\n/\\:?#@") {
		return "", bad("%q must be a bare domain name: no spaces, scheme, port, path or user", s)
	}
	s = strings.TrimSuffix(s, ".")
	if _, err := netip.ParseAddr(s); err == nil {
		return "", bad("%q is an IP address; add it as an ip_range", s)
	}
	ascii, err := domainProfile.ToASCII(s)
	if err != nil {
		return "", bad("%q is not a valid domain name (%v)", s, idnaReason(err))
	}
	ascii = strings.ToLower(ascii)
	if len(ascii) > 253 {
		return "", bad("longer than 253 characters")
	}
	for _, l := range strings.Split(ascii, ".") {
		if l == "" {
			return "", bad("%q has an empty label", s)
		}
	}
	suffix, icann := publicsuffix.PublicSuffix(ascii)
	if suffix == ascii {
		return "", bad("%q is a public suffix, not a registrable domain", s)
	}
	if !icann && !strings.Contains(suffix, ".") {
		// The list's default rule ("*") matched: the TLD is not a known suffix.
		return "", bad("%q is not under a known public suffix", s)
	}
	return ascii, nil
}

func idnaReason(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		return msg[i+2:]
	}
	return msg
}

// Limits caps the size of IP ranges (the smallest prefix length allowed)
// and says whether internal address space may be claimed.
type Limits struct {
	MinPrefixV4 int // default 16
	MinPrefixV6 int // default 48
	// AllowPrivate admits ranges of internal space (private-use, shared
	// CGNAT, loopback, link-local, unique-local), so an operator can
	// monitor an internal network: serve's --allow-private-targets.
	// Multicast, documentation and other reserved space stay refused.
	AllowPrivate bool
}

// DefaultLimits are the caps of docs/api.md "Organizations and assets".
var DefaultLimits = Limits{MinPrefixV4: 16, MinPrefixV6: 48}

// internal is the address space of an organization's own network, claimable
// only with Limits.AllowPrivate; reserved is never claimable.
var (
	internal = mustPrefixes(
		"10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.168.0.0/16",
		"::1/128", "fc00::/7", "fe80::/10",
	)
	reserved = mustPrefixes(
		"0.0.0.0/8", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24",
		"198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
		"::/128", "::ffff:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64",
		"2001::/23", "2001:db8::/32", "2002::/16", "3fff::/20", "fec0::/10", "ff00::/8",
	)
)

func mustPrefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// IPRange parses s as a public unicast CIDR (a bare address is a /32 or /128)
// and returns its canonical form. Private, loopback, link-local, CGNAT and
// unique-local space is refused unless lim.AllowPrivate; multicast,
// documentation and other reserved space always is, and so is a range
// larger than the limits allow.
func IPRange(s string, lim Limits) (netip.Prefix, error) {
	bad := func(format string, args ...any) (netip.Prefix, error) {
		return netip.Prefix{}, periscope.Errorf(periscope.EInvalid, "ip_range: "+format, args...)
	}
	if s == "" {
		return netip.Prefix{}, periscope.Errorf(periscope.EMissing, "ip_range is required.")
	}
	s = strings.TrimSpace(s)
	var p netip.Prefix
	if strings.Contains(s, "/") {
		var err error
		if p, err = netip.ParsePrefix(s); err != nil {
			return bad("%q is not a CIDR", truncate(s))
		}
	} else {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return bad("%q is not an IP address or CIDR", truncate(s))
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if p.Addr().Zone() != "" {
		return bad("%q has a zone", truncate(s))
	}
	if p.Addr().Is4In6() {
		return bad("%q is an IPv4-mapped IPv6 range; give the IPv4 form", s)
	}
	p = p.Masked()
	for _, r := range reserved {
		if r.Overlaps(p) {
			return bad("%s is not public unicast space (it overlaps %s)", p, r)
		}
	}
	inside := false
	for _, r := range internal {
		if !r.Overlaps(p) {
			continue
		}
		if !lim.AllowPrivate || p.Bits() < r.Bits() {
			return bad("%s is not public unicast space (it overlaps %s)", p, r)
		}
		inside = true
	}
	min := lim.MinPrefixV4
	if p.Addr().Is6() {
		min = lim.MinPrefixV6
	}
	if p.Bits() < min {
		return bad("%s is larger than the allowed /%d", p, min)
	}
	if p.Addr().Is6() && !inside && !netip.MustParsePrefix("2000::/3").Contains(p.Addr()) {
		return bad("%s is not global unicast IPv6 space", p)
	}
	return p, nil
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// Overlap reports whether the two canonical ranges overlap, for conflict checks.
func Overlap(a, b string) bool {
	pa, err1 := netip.ParsePrefix(a)
	pb, err2 := netip.ParsePrefix(b)
	return err1 == nil && err2 == nil && pa.Overlaps(pb)
}

// String is for error messages.
func String(p netip.Prefix) string { return fmt.Sprint(p) }
