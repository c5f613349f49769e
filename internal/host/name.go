package host

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// Name is a normalised host name and its parts.
type Name struct {
	// Host is the ASCII (punycode), lower-case name without trailing dot,
	// or the canonical text of an IP address.
	Host string
	// Domain is the registrable domain (eTLD+1), "" for an IP.
	Domain string
	// TLD is the public suffix ("com", "co.uk", "github.io"), "" for an IP.
	TLD string
	// Subdomain is Host without ".Domain" ("www", "a.b"), "" for the apex
	// and for an IP.
	Subdomain string
	// IP is true when Host is an IP address.
	IP bool
}

// ErrInvalidName is wrapped by every error Normalize returns.
var ErrInvalidName = errors.New("invalid host name")

// nameProfile is the IDNA profile for host names. Underscores are allowed
// (StrictDomainName off) because real DNS holds _dmarc, _sip._tcp and
// similar names; other characters are checked by hand afterwards.
var nameProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.ValidateLabels(true),
	idna.StrictDomainName(false),
	idna.VerifyDNSLength(true),
)

// maxNameInput bounds the work done on hostile input before IDNA mapping.
const maxNameInput = 1024

// Normalize validates and normalises a host name: surrounding white space
// and one trailing dot are removed, the name is mapped to lower-case ASCII
// (IDNA, punycode), and split into registrable domain, public suffix and
// subdomain with the public suffix list. An IP address (optionally in
// brackets) is accepted and returned in canonical form with IP set and the
// domain parts empty. Names equal to a public suffix ("co.uk"), single-label
// names ("localhost") and wildcards are rejected. Errors wrap ErrInvalidName.
func Normalize(name string) (Name, error) {
	bad := func(reason string) (Name, error) {
		return Name{}, fmt.Errorf("%w %q: %s", ErrInvalidName, truncate(name, 80), reason)
	}
	s := strings.TrimSpace(name)
	if s == "" {
		return bad("empty")
	}
	if len(s) > maxNameInput {
		return bad("longer than 253 characters")
	}
	s = strings.TrimSuffix(s, ".")
	if ip, ok := parseIP(s); ok {
		return Name{Host: ip, IP: true}, nil
	}
	ascii := strings.ToLower(s)
	// Plain ASCII names (nearly all input) skip IDNA: lower-casing is all
	// its mapping would do, and checkLabel gives more precise reasons.
	if !isASCII(s) || strings.Contains(ascii, "xn--") {
		if isASCII(s) {
			if reason := checkLabels(ascii); reason != "" {
				return bad(reason)
			}
		}
		if !utf8.ValidString(s) {
			return bad("not valid UTF-8")
		}
		a, err := nameProfile.ToASCII(s)
		if err != nil {
			return bad(idnaReason(err))
		}
		ascii = strings.ToLower(a)
		// The result must itself be a valid IDNA name, so that normalising
		// is idempotent.
		if again, err := nameProfile.ToASCII(ascii); err != nil || again != ascii {
			return bad("not a valid internationalised name")
		}
	}
	if reason := checkLabels(ascii); reason != "" {
		return bad(reason)
	}
	dot := strings.LastIndexByte(ascii, '.')
	if dot < 0 {
		return bad("single-label name, not fully qualified")
	}
	if strings.Trim(ascii[dot+1:], "0123456789") == "" {
		return bad("numeric top-level label (an IP address?)")
	}
	suffix, icann := publicsuffix.PublicSuffix(ascii)
	if suffix == ascii {
		if icann || !strings.Contains(suffix, ".") {
			return bad("is a public suffix, not a host")
		}
		// A private-section suffix (github.io, s3.amazonaws.com) is also
		// a real host: split it at the nearest ICANN suffix above it.
		suffix = icannSuffix(ascii)
	}
	domain := ascii
	if suffix != ascii {
		rest := strings.TrimSuffix(ascii, "."+suffix)
		domain = rest[strings.LastIndexByte(rest, '.')+1:] + "." + suffix
	}
	sub := strings.TrimSuffix(strings.TrimSuffix(ascii, domain), ".")
	return Name{Host: ascii, Domain: domain, TLD: suffix, Subdomain: sub}, nil
}

// icannSuffix returns the ICANN public suffix of name's parent domains,
// falling back to the last label.
func icannSuffix(name string) string {
	for p := name; ; {
		i := strings.IndexByte(p, '.')
		if i < 0 {
			return p
		}
		p = p[i+1:]
		if s, icann := publicsuffix.PublicSuffix(p); icann {
			return s
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// checkLabels returns why name is not a valid ASCII host name, or "".
func checkLabels(name string) string {
	if len(name) > 253 {
		return "longer than 253 characters"
	}
	for l := range strings.SplitSeq(name, ".") {
		if reason := checkLabel(l); reason != "" {
			return reason
		}
	}
	return ""
}

func checkLabel(l string) string {
	if l == "" {
		return "empty label"
	}
	if len(l) > 63 {
		return "label longer than 63 characters"
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_':
		case c == '-':
			if i == 0 || i == len(l)-1 {
				return "label starts or ends with a hyphen"
			}
		case c == '*':
			return "wildcard label"
		default:
			return fmt.Sprintf("character %q not allowed", c)
		}
	}
	return ""
}

// parseIP accepts "1.2.3.4", "2001:db8::1" and "[2001:db8::1]" (zones are
// rejected) and returns the canonical text; IPv4-mapped IPv6 becomes IPv4.
func parseIP(s string) (string, bool) {
	if len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
		s = s[1 : len(s)-1]
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return "", false
	}
	return a.Unmap().String(), true
}

func idnaReason(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		return msg[i+2:]
	}
	return msg
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// ReverseKey returns the reversed-label key of a normalised host name, used
// to keep the hosts of a domain together in an ordered index:
// "www.example.com" becomes "com.example.www". Labels are joined by "."
// in reverse order and nothing else changes. Every host strictly below
// example.com has a key starting with "com.example." (see ReversePrefix) and
// the apex itself has the key "com.example", so a range scan of
// [key == "com.example"] ∪ [key has prefix "com.example."] yields the domain
// and all its subdomains and nothing else ("com.example-shop" does not
// match because the prefix ends with the dot). An IP address is returned
// unchanged.
func ReverseKey(name string) string {
	if _, ok := parseIP(name); ok {
		return name
	}
	var b strings.Builder
	b.Grow(len(name))
	for end := len(name); end >= 0; {
		i := strings.LastIndexByte(name[:end], '.')
		b.WriteString(name[i+1 : end])
		if i < 0 {
			break
		}
		b.WriteByte('.')
		end = i
	}
	return b.String()
}

// ReversePrefix returns the key prefix shared by every host strictly below
// domain: ReverseKey(domain) + ".".
func ReversePrefix(domain string) string {
	return ReverseKey(domain) + "."
}
