// Package rdap looks domains (and IP networks and AS numbers) up over RDAP
// (RFC 9082/9083), finding the server through IANA's bootstrap registries
// (RFC 9224).
//
// github.com/openrdap/rdap (MIT) resolves through the module proxy, but it
// is not used: its bootstrap client fetches and caches IANA's files on disk
// by itself, where Periscope keeps them in its database and refreshes them
// from one owned worker, and every request must go through the egress
// dialer with a per-host rate limit and at most one related-link hop. What
// is left, decoding the few RDAP members the lookup reports, is a page of
// encoding/json; taking the library for that would add its CLI's
// dependencies to the module graph for little.
package rdap

import (
	"embed"
	"encoding/json"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

//go:embed bootstrap/*.json
var bundled embed.FS

// Kinds of bootstrap registry, named as IANA names the files.
const (
	KindDNS  = "dns"
	KindIPv4 = "ipv4"
	KindIPv6 = "ipv6"
	KindASN  = "asn"
)

// Kinds lists every registry kind.
var Kinds = []string{KindDNS, KindIPv4, KindIPv6, KindASN}

// IANAURL returns where IANA publishes the registry of kind.
func IANAURL(kind string) string { return "https://data.iana.org/rdap/" + kind + ".json" }

// Registry is one bootstrap file: services are [entries, urls] pairs.
type Registry struct {
	Description string       `json:"description"`
	Publication string       `json:"publication"`
	Version     string       `json:"version"`
	Services    [][][]string `json:"services"`
}

// ParseRegistry decodes and checks one bootstrap file.
func ParseRegistry(b []byte) (*Registry, error) {
	var r Registry
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("rdap bootstrap: %w", err)
	}
	if len(r.Services) == 0 {
		return nil, fmt.Errorf("rdap bootstrap: no services")
	}
	for i, s := range r.Services {
		if len(s) < 2 || len(s[len(s)-1]) == 0 {
			return nil, fmt.Errorf("rdap bootstrap: service %d malformed", i)
		}
	}
	return &r, nil
}

// Bootstrap holds the four registries.
type Bootstrap struct {
	DNS, IPv4, IPv6, ASN *Registry
}

// Bundled returns the snapshot built into the binary.
func Bundled() *Bootstrap {
	b := &Bootstrap{}
	for _, k := range Kinds {
		raw, err := bundled.ReadFile("bootstrap/" + k + ".json")
		if err != nil {
			panic(err) // a build defect, caught by tests
		}
		r, err := ParseRegistry(raw)
		if err != nil {
			panic(err)
		}
		b.Set(k, r)
	}
	return b
}

// BundledRaw returns the bundled file of kind.
func BundledRaw(kind string) []byte {
	raw, _ := bundled.ReadFile("bootstrap/" + kind + ".json")
	return raw
}

// Set replaces the registry of kind.
func (b *Bootstrap) Set(kind string, r *Registry) {
	switch kind {
	case KindDNS:
		b.DNS = r
	case KindIPv4:
		b.IPv4 = r
	case KindIPv6:
		b.IPv6 = r
	case KindASN:
		b.ASN = r
	}
}

// urls puts https first: the plain-http mirrors some RIRs list are a
// downgrade.
func urls(list []string) []string {
	var https, other []string
	for _, u := range list {
		if strings.HasPrefix(u, "https://") {
			https = append(https, u)
		} else {
			other = append(other, u)
		}
	}
	return append(https, other...)
}

// DomainURLs returns the base URLs serving domain (longest matching label
// suffix wins), or nil.
func (b *Bootstrap) DomainURLs(domain string) []string {
	if b.DNS == nil {
		return nil
	}
	domain = strings.ToLower(strings.TrimSuffix(domain, "."))
	best, bestLen := []string(nil), -1
	for _, s := range b.DNS.Services {
		for _, suffix := range s[0] {
			suffix = strings.ToLower(suffix)
			if (domain == suffix || strings.HasSuffix(domain, "."+suffix)) && len(suffix) > bestLen {
				best, bestLen = s[len(s)-1], len(suffix)
			}
		}
	}
	return urls(best)
}

// IPURLs returns the base URLs serving ip, or nil.
func (b *Bootstrap) IPURLs(ip netip.Addr) []string {
	reg := b.IPv4
	if ip.Is6() && !ip.Is4In6() {
		reg = b.IPv6
	}
	ip = ip.Unmap()
	if reg == nil {
		return nil
	}
	best, bestBits := []string(nil), -1
	for _, s := range reg.Services {
		for _, p := range s[0] {
			pfx, err := netip.ParsePrefix(p)
			if err == nil && pfx.Contains(ip) && pfx.Bits() > bestBits {
				best, bestBits = s[len(s)-1], pfx.Bits()
			}
		}
	}
	return urls(best)
}

// ASNURLs returns the base URLs serving AS number n, or nil.
func (b *Bootstrap) ASNURLs(n uint32) []string {
	if b.ASN == nil {
		return nil
	}
	for _, s := range b.ASN.Services {
		for _, r := range s[0] {
			lo, hi, _ := strings.Cut(r, "-")
			if hi == "" {
				hi = lo
			}
			l, err1 := strconv.ParseUint(lo, 10, 32)
			h, err2 := strconv.ParseUint(hi, 10, 32)
			if err1 == nil && err2 == nil && uint64(n) >= l && uint64(n) <= h {
				return urls(s[len(s)-1])
			}
		}
	}
	return nil
}
