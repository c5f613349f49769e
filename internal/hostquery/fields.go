package hostquery

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// Kind is the type of a field's values.
type Kind int

// The field kinds.
const (
	KindText Kind = iota // a string (global search: a string or an array of strings)
	KindInt              // an integer (global search: an integer or an array of them)
	KindBool             // true or false
	KindDate             // a UTC day, YYYY-MM-DD (query language only)
)

// Field is one searchable field: a global-search filter name, one of its
// aliases, or a Shodan spelling of the same meaning.
type Field struct {
	Name string // as written
	Kind Kind
	// Term is the index field the value is looked up in; empty for the
	// fields with a meaning of their own (see Leaf).
	Term string
	// Canonical is the global-search filter this name means.
	Canonical string
}

// Fields maps every field name to its meaning. The global-search filters
// (POST /global/search, docs/api.md "Internet host index") are the names whose
// Canonical is themselves or an alias of theirs; the Shodan spellings
// (net, hostname, org, http.title, http.status, ssl.cert.*) and last_seen
// are taken by the query language only.
var Fields = map[string]Field{}

// globalFilters are the names POST /global/search takes as body fields.
var globalFilters = map[string]bool{}

func def(name string, kind Kind, term, canonical string, global bool) {
	if canonical == "" {
		canonical = name
	}
	Fields[name] = Field{Name: name, Kind: kind, Term: term, Canonical: canonical}
	globalFilters[name] = global
}

func init() {
	g := func(name string, kind Kind, term, canonical string) { def(name, kind, term, canonical, true) }
	g("country", KindText, "", "") // a code or an English name
	g("country_code", KindText, hoststore.TermCountry, "")
	g("product", KindText, hoststore.TermProduct, "")
	g("organization", KindText, hoststore.TermOrg, "")
	g("asn", KindInt, hoststore.TermASN, "")
	g("port", KindInt, hoststore.TermPort, "")
	g("tag", KindText, hoststore.TermTag, "")
	g("tags", KindText, hoststore.TermTag, "tag")
	g("tech", KindText, hoststore.TermTech, "")
	g("technology", KindText, hoststore.TermTech, "tech")
	g("cloud_provider", KindText, hoststore.TermCloud, "")
	g("cloud_region", KindText, hoststore.TermRegion, "")
	g("cdn", KindText, hoststore.TermCDN, "")
	g("domain", KindText, "", "")
	g("host", KindText, "", "")
	g("subdomain", KindText, "", "")
	g("tld", KindText, hoststore.TermTLD, "")
	g("ip", KindText, "", "")
	g("ip_address", KindText, "", "ip")
	g("service", KindText, hoststore.TermService, "")
	g("city", KindText, hoststore.TermCity, "")
	g("city_name", KindText, hoststore.TermCity, "city")
	g("http_title", KindText, "", "")
	g("http_status_code", KindInt, hoststore.TermStatus, "")
	g("http_favicon_hash", KindText, "", "")
	g("dns_a", KindText, "", "")
	g("dns_aaaa", KindText, "", "")
	g("dns_cname", KindText, hoststore.TermDNSCNAME, "")
	g("dns_mx", KindText, hoststore.TermDNSMX, "")
	g("dns_txt", KindText, hoststore.TermDNSTXT, "")
	g("dns_ptr", KindText, hoststore.TermDNSPTR, "")
	g("dns_ns", KindText, hoststore.TermDNSNS, "")
	g("is_cloud", KindBool, string(hoststore.FlagCloud), "")
	g("is_live", KindBool, string(hoststore.FlagLive), "")
	g("is_resolvable", KindBool, string(hoststore.FlagResolvable), "")
	g("is_cdn", KindBool, string(hoststore.FlagCDN), "")
	g("is_cloudflare", KindBool, string(hoststore.FlagCloudflare), "")
	g("has_ipv6", KindBool, string(hoststore.FlagIPv6), "")
	g("has_private_ip", KindBool, string(hoststore.FlagPrivateIP), "")
	g("cert_issuer_common_name", KindText, hoststore.TermCertIssuerCN, "")
	g("cert_issuer_organization", KindText, hoststore.TermCertIssuerOrg, "")
	g("cert_subject_common_name", KindText, hoststore.TermCertSubjectCN, "")
	g("cert_subject_organization", KindText, hoststore.TermCertSubjectOrg, "")
	g("cert_sha256_fingerprint", KindText, hoststore.TermCertSHA256, "")
	g("cert_sha1_fingerprint", KindText, hoststore.TermCertSHA1, "")
	g("cert_md5_fingerprint", KindText, hoststore.TermCertMD5, "")
	g("cert_serial_number", KindText, hoststore.TermCertSerial, "")
	g("cert_dns_names", KindText, hoststore.TermCertDNSName, "")
	g("cert_dns_name", KindText, hoststore.TermCertDNSName, "cert_dns_names")

	// The query language's own names: Shodan's spellings of the same
	// meanings, and the last-seen date.
	q := func(name string, kind Kind, term, canonical string) { def(name, kind, term, canonical, false) }
	q("org", KindText, hoststore.TermOrg, "organization")
	q("hostname", KindText, "", "subdomain")
	q("net", KindText, "", "net")
	q("http.title", KindText, "", "http_title")
	q("http.status", KindInt, hoststore.TermStatus, "http_status_code")
	q("ssl.cert.subject.cn", KindText, hoststore.TermCertSubjectCN, "cert_subject_common_name")
	q("ssl.cert.issuer.cn", KindText, hoststore.TermCertIssuerCN, "cert_issuer_common_name")
	q("ssl.cert.issuer.o", KindText, hoststore.TermCertIssuerOrg, "cert_issuer_organization")
	q("ssl.cert.fingerprint", KindText, hoststore.TermCertSHA256, "cert_sha256_fingerprint")
	q("cert_issuer", KindText, hoststore.TermCertIssuerOrg, "cert_issuer_organization")
	q("last_seen", KindDate, "", "last_seen")
}

// IsGlobalFilter reports whether name is a POST /global/search filter.
func IsGlobalFilter(name string) bool { return globalFilters[name] }

// Leaf returns the condition of one field and one value: exactly what the
// global-search filter of that name means (the Shodan spellings are
// aliases). Int and bool values arrive as their decimal text and "true" /
// "false"; net takes a CIDR block or an address. The error, for a value the
// field cannot take, is an invalid_parameter naming the field.
func Leaf(name, v string) (hoststore.Cond, error) {
	f, ok := Fields[name]
	if !ok {
		return hoststore.Cond{}, periscope.Errorf(periscope.EInvalid, "%q is not a search filter.", periscope.Clip(name, 64))
	}
	term := f.Term
	switch f.Kind {
	case KindBool:
		b, err := strconv.ParseBool(v)
		if err != nil || v != "true" && v != "false" {
			return hoststore.Cond{}, periscope.Errorf(periscope.EInvalid, "%s must be true or false.", name)
		}
		return hoststore.Cond{Kind: hoststore.CondTerm, Term: hoststore.FlagTerm(hoststore.HostFlag(term), b)}, nil
	case KindInt:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > 1<<32 {
			return hoststore.Cond{}, periscope.Errorf(periscope.EInvalid, "%s must be an integer (got %q).", name, periscope.Clip(v, 64))
		}
		return hoststore.Cond{Kind: hoststore.CondTerm, Term: hoststore.Term(term, strconv.FormatInt(n, 10))}, nil
	case KindDate:
		return hoststore.Cond{}, periscope.Errorf(periscope.EInvalid, "%s takes a date or a range of dates.", name)
	}
	switch f.Canonical {
	case "country":
		if len(v) == 2 {
			term = hoststore.TermCountry
		} else {
			term = hoststore.TermCountryName
		}
	case "domain":
		n, err := host.Normalize(v)
		if err != nil || n.IP {
			return hoststore.Cond{}, periscope.Errorf(periscope.EInvalid, "domain must be a domain name (got %q).", periscope.Clip(v, 64))
		}
		if n.Host != n.Domain {
			// A name below a registrable domain.
			return hoststore.Cond{Kind: hoststore.CondUnder, Text: n.Host}, nil
		}
		v, term = n.Domain, hoststore.TermDomain
	case "host", "subdomain":
		n, err := host.Normalize(v)
		if err != nil {
			return hoststore.Cond{}, periscope.Errorf(periscope.EInvalid, "%s must be a host name or IP address (got %q).", name, periscope.Clip(v, 64))
		}
		if f.Canonical == "host" {
			return hoststore.Cond{Kind: hoststore.CondName, Text: n.Host}, nil
		}
		return hoststore.Cond{Kind: hoststore.CondUnder, Text: n.Host}, nil
	case "ip", "dns_a", "dns_aaaa":
		a, err := netip.ParseAddr(v)
		if err != nil {
			return hoststore.Cond{}, periscope.Errorf(periscope.EInvalid, "%s must be an IP address (got %q).", name, periscope.Clip(v, 64))
		}
		v, term = a.Unmap().String(), hoststore.TermIP
	case "net":
		p, err := netPrefix(v)
		if err != nil {
			return hoststore.Cond{}, err
		}
		return hoststore.Cond{Kind: hoststore.CondIPRange, Prefix: p}, nil
	case "http_title":
		return hoststore.Cond{Kind: hoststore.CondTitle, Text: v}, nil
	case "http_favicon_hash":
		return hoststore.Cond{}, periscope.Errorf(periscope.EInvalid, "http_favicon_hash is not indexed: none of the supported inputs carries favicon hashes.")
	}
	return hoststore.Cond{Kind: hoststore.CondTerm, Term: hoststore.Term(term, v)}, nil
}

// netPrefix parses the value of net: a CIDR block or one address.
func netPrefix(v string) (netip.Prefix, error) {
	bad := periscope.Errorf(periscope.EInvalid, "net must be a CIDR block or an IP address (got %q).", periscope.Clip(v, 64))
	var p netip.Prefix
	if a, err := netip.ParseAddr(v); err == nil {
		p = netip.PrefixFrom(a, a.BitLen())
	} else if p, err = netip.ParsePrefix(v); err != nil {
		return p, bad
	}
	if p.Addr().Zone() != "" {
		return p, bad
	}
	if a := p.Addr(); a.Is4In6() {
		if p.Bits() < 96 {
			return p, bad
		}
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}

// facetFields maps each facet name to its index field: every field whose
// values are index terms of one field (country: its codes; domain: its
// registrable domains).
func facetTerm(name string) (string, bool) {
	f, ok := Fields[name]
	if !ok {
		return "", false
	}
	switch f.Canonical {
	case "country":
		return hoststore.TermCountry, true
	case "domain":
		return hoststore.TermDomain, true
	}
	switch f.Term {
	case "", hoststore.TermCertSubjectCN, hoststore.TermCertDNSName:
		// Self-answered terms are not all in the posting lists.
		return "", false
	}
	if f.Kind == KindBool {
		return "", false
	}
	return f.Term, true
}

// FacetValue turns a facet's indexed value into what a client sends back
// as the field's value: country codes upper-case, the rest as indexed.
func facetDisplay(name, v string) string {
	if f := Fields[name]; f.Canonical == "country" || f.Canonical == "country_code" {
		return strings.ToUpper(v)
	}
	return v
}
