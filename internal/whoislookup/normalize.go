// Package whoislookup is the WHOIS lookup service: RDAP first, port 43
// where a TLD has no RDAP, cached in whoisstore, rate-limited per upstream
// host, concurrent lookups of one domain sharing one upstream query.
package whoislookup

import (
	"net/netip"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/periscope-oss/periscope/internal/periscope"
	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// domainProfile is asset.Domain's IDNA profile: lookups normalise names the
// way organization assets are normalised.
var domainProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.ValidateLabels(true),
	idna.StrictDomainName(true),
	idna.VerifyDNSLength(true),
)

// Normalize turns user input into the registered domain to look up and its
// TLD: IDNA to ASCII, lower case, trailing dot dropped, as organization
// assets are (asset.Domain), then reduced to the name registered under its
// ICANN suffix, since that is what registries answer for (www.google.com →
// google.com). Unlike asset.Domain, the private part of the public suffix
// list does not count: github.io is a name registered in .io, and
// foo.github.io is looked up as github.io. IPs, URLs, an ICANN suffix alone,
// an unknown TLD and invalid names are refused.
func Normalize(input string) (domain, tld string, err error) {
	bad := func(format string, args ...any) error {
		return periscope.Errorf(periscope.EInvalid, "domain: "+format, args...)
	}
	s := strings.TrimSpace(input)
	if s == "" {
		return "", "", periscope.Errorf(periscope.EMissing, "domain is required.")
	}
	if len(s) > 1024 {
		return "", "", bad("longer than 253 characters")
	}
	if !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl) {
		// IDNA would map invalid bytes to U+FFFD and encode that.
		return "", "", bad("must be UTF-8 text without control characters")
	}
	if strings.ContainsAny(s, " \t\r\n/\\:?#@") {
		return "", "", bad("%q must be a bare domain name: no spaces, scheme, port, path or user", periscope.Clip(s, 64))
	}
	s = strings.TrimSuffix(s, ".")
	if _, err := netip.ParseAddr(s); err == nil {
		return "", "", bad("%q is an IP address; WHOIS lookups take a registered domain name", s)
	}
	d, err := domainProfile.ToASCII(s)
	if err != nil {
		return "", "", bad("%q is not a valid domain name", periscope.Clip(s, 64))
	}
	d = strings.ToLower(d)
	if len(d) > 253 {
		return "", "", bad("longer than 253 characters")
	}
	labels := strings.Split(d, ".")
	for _, l := range labels {
		if l == "" {
			return "", "", bad("%q has an empty label", periscope.Clip(s, 64))
		}
	}
	suffix := ""
	for i := len(labels) - 1; i >= 0; i-- {
		cand := strings.Join(labels[i:], ".")
		if ps, icann := publicsuffix.PublicSuffix(cand); ps == cand && icann {
			suffix = cand
		}
	}
	switch {
	case suffix == "":
		return "", "", bad("%q is not under a known top-level domain", periscope.Clip(s, 64))
	case d == suffix:
		return "", "", bad("%q is a public suffix, not a registrable domain", periscope.Clip(s, 64))
	}
	rest := strings.TrimSuffix(d, "."+suffix)
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		rest = rest[i+1:]
	}
	return rest + "." + suffix, labels[len(labels)-1], nil
}
