package darkweb

import "strings"

// Why a record's secrets (its password and hashes) are masked: the API's
// masked_reason.
const (
	// MaskedNotVerified: the record is under a domain the caller's
	// organizations claim, but whose ownership is not proven (no DNS TXT
	// verification, no operator authorisation).
	MaskedNotVerified = "domain_not_verified"
	// MaskedNotClaimed: the record is under none of the caller's
	// organizations' domains.
	MaskedNotClaimed = "domain_not_claimed"
)

// Claim is a domain an account's organization claims, and whether its
// ownership is proven (verified by DNS TXT or authorised by the operator).
type Claim struct {
	Domain   string
	Verified bool
}

// Disclosure decides who sees a record's secrets in clear. A claim alone
// proves nothing (anyone may claim gmail.com): secrets are shown for
// records under a verified domain of the caller's organizations, or for
// every record when the operator allowed the account all of them
// (`account update --reveal-secrets`). Every other record is masked, with
// the reason.
type Disclosure struct {
	all        bool
	verified   []string
	unverified []string
}

// NewDisclosure is the policy for an account the operator allowed every
// record (all) or not, with its organizations' domain claims.
func NewDisclosure(all bool, claims []Claim) Disclosure {
	d := Disclosure{all: all}
	for _, c := range claims {
		dom := strings.ToLower(c.Domain)
		if c.Verified {
			d.verified = append(d.verified, dom)
		} else {
			d.unverified = append(d.unverified, dom)
		}
	}
	return d
}

// RevealAll is the policy that shows every record's secrets.
func RevealAll() Disclosure { return Disclosure{all: true} }

// Claimed lists the domains the caller's organizations claim, verified or
// not: what the enterprise listings cover (masked where not verified).
func (d *Disclosure) Claimed() []string {
	out := make([]string, 0, len(d.verified)+len(d.unverified))
	return append(append(out, d.verified...), d.unverified...)
}

// Decide reports whether r's secrets may be shown and, when not, why
// (MaskedNotVerified or MaskedNotClaimed). A record is under a domain by
// its email's domain, its domain or its URL's host.
func (d *Disclosure) Decide(r *Record) (clear bool, reason string) {
	if d.all {
		return true, ""
	}
	if len(d.verified) == 0 && len(d.unverified) == 0 {
		return false, MaskedNotClaimed
	}
	_, emailHost, _ := strings.Cut(r.Email, "@")
	// The URL is parsed only when the email and the domain are under no
	// verified domain (a page holds up to 1,000 records).
	if Under(emailHost, d.verified) || Under(r.Domain, d.verified) {
		return true, ""
	}
	urlHost := URLHost(r.URL)
	if Under(urlHost, d.verified) {
		return true, ""
	}
	if Under(emailHost, d.unverified) || Under(r.Domain, d.unverified) || Under(urlHost, d.unverified) {
		return false, MaskedNotVerified
	}
	return false, MaskedNotClaimed
}

// Under reports whether host is one of domains (lower case) or below one.
func Under(host string, domains []string) bool {
	if host == "" {
		return false
	}
	host = strings.ToLower(host)
	for _, d := range domains {
		if host == d || len(host) > len(d) && host[len(host)-len(d)-1] == '.' && strings.HasSuffix(host, d) {
			return true
		}
	}
	return false
}
