// Package whoislookup is the WHOIS lookup service: RDAP first, port 43
// where a TLD has no RDAP, cached in whoisstore, rate-limited per upstream
// host, concurrent lookups of one domain sharing one upstream query.
package whoislookup

import (
	"strings"

	"github.com/periscope-oss/periscope/internal/asset"
	"github.com/periscope-oss/periscope/internal/periscope"
	"golang.org/x/net/publicsuffix"
)

// Normalize turns user input into the registered domain to look up and its
// TLD: IDNA to ASCII and lower case as organization assets are (asset.Domain:
// IPs, URLs, public suffixes alone and invalid names are refused), then
// reduced to the name registered under its ICANN suffix, since that is what
// registries answer for (www.google.com → google.com; a name under a
// private suffix such as foo.github.io → github.io).
func Normalize(input string) (domain, tld string, err error) {
	d, err := asset.Domain(strings.TrimSpace(input))
	if err != nil {
		return "", "", err
	}
	labels := strings.Split(d, ".")
	suffix := ""
	for i := len(labels) - 1; i >= 1; i-- {
		cand := strings.Join(labels[i:], ".")
		if ps, icann := publicsuffix.PublicSuffix(cand); ps == cand && icann {
			suffix = cand
		}
	}
	if suffix == "" {
		suffix = labels[len(labels)-1]
	}
	if d == suffix {
		return "", "", periscope.Errorf(periscope.EInvalid, "domain: %q is a public suffix, not a registrable domain", input)
	}
	rest := strings.TrimSuffix(d, "."+suffix)
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		rest = rest[i+1:]
	}
	return rest + "." + suffix, labels[len(labels)-1], nil
}
