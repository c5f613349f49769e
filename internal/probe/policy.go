package probe

import "net/netip"

// PublicOnly allows only addresses reachable on the public internet (unless
// AllowPrivate, for labs and tests): no loopback, private, link-local,
// shared (CGNAT), benchmarking, documentation, multicast, reserved or
// unspecified address, IPv4 given as IPv6 included. The SSRF-safe dialer
// checks again at connect time; this check lets a scan skip such names
// before spending a connection and count them.
type PublicOnly struct {
	AllowPrivate bool
}

// nonPublic are the special-purpose ranges (IANA IPv4 and IPv6
// special-purpose registries) that are not globally reachable.
var nonPublic = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
		"172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16",
		"198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
		"::/128", "::1/128", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001::/23",
		"2001:db8::/32", "2002::/16", "fc00::/7", "fe80::/10", "ff00::/8",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// Allowed reports whether addr may be probed.
func (p PublicOnly) Allowed(addr netip.Addr) bool {
	if !addr.IsValid() {
		return false
	}
	if p.AllowPrivate {
		return true
	}
	return Public(addr)
}

// Public reports whether addr is globally reachable.
func Public(addr netip.Addr) bool {
	addr = addr.Unmap()
	if !addr.IsValid() || addr.Zone() != "" {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(addr) {
			return false
		}
	}
	return true
}

// PublicPrefix reports whether every address of p is globally reachable.
func PublicPrefix(p netip.Prefix) bool {
	p = p.Masked()
	for _, np := range nonPublic {
		if np.Overlaps(p) {
			return false
		}
	}
	return Public(p.Addr())
}
