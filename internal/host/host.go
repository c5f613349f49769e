// Package host is the model of the internet host index: one Host per FQDN
// (or per bare IP when no name is known), built by merging observations
// from many sources (scanners, passive DNS, HTTP probes, imports).
//
// The JSON encoding of Host is the host object of docs/api.md "Internet host index" and internal/api/openapi/hosts.json: every list
// encodes as [] (never null), every integer as a JSON integer, and
// ip_address is omitted when unknown.
package host

import (
	"net/netip"
	"slices"
	"strings"
)

// Host is one indexed host. Times are Unix epoch seconds; 0 means unknown.
type Host struct {
	Host      string `json:"host"`
	Domain    string `json:"domain"`
	TLD       string `json:"tld"`
	Subdomain string `json:"subdomain"`
	IPAddress string `json:"ip_address,omitempty"`

	IsLive       bool `json:"is_live"`
	IsResolvable bool `json:"is_resolvable"`
	IsCloud      bool `json:"is_cloud"`
	IsCDN        bool `json:"is_cdn"`
	IsCloudflare bool `json:"is_cloudflare"`
	HasIPv6      bool `json:"has_ipv6"`
	HasPrivateIP bool `json:"has_private_ip"`

	CDN   string `json:"cdn"`
	Cloud Cloud  `json:"cloud"`
	DNS   DNS    `json:"dns"`

	HTTPStatusCode int    `json:"http_status_code"`
	HTTPTitle      string `json:"http_title"`

	IPMetadata IPMetadata `json:"ip_metadata"`

	NetworkPorts    []int     `json:"network_ports"`
	NetworkServices []Service `json:"network_services"`
	Products        []string  `json:"products"`
	Tags            []string  `json:"tags"`
	Web             []string  `json:"web"`
	Categories      []string  `json:"categories"`
	URLs            []string  `json:"urls"`
	// Extracted holds artefacts pulled from the host's content, by kind
	// (e.g. "emails"); {} when none is known.
	Extracted Extracted `json:"extracted"`
	Cert      Cert      `json:"cert_object"`

	FirstSeen int64 `json:"first_seen"`
	LastSeen  int64 `json:"last_seen"`
}

// Cloud is the cloud provider and region hosting the host's IP.
type Cloud struct {
	Provider string `json:"provider"`
	Region   string `json:"region"`
}

// DNS holds the host's DNS records by type. PTR holds the reverse names of
// the host's IP addresses.
type DNS struct {
	A     []string `json:"a"`
	AAAA  []string `json:"aaaa"`
	CNAME []string `json:"cname"`
	MX    []string `json:"mx"`
	NS    []string `json:"ns"`
	PTR   []string `json:"ptr"`
	TXT   []string `json:"txt"`
}

// Empty reports whether d holds no record.
func (d DNS) Empty() bool {
	return len(d.A)+len(d.AAAA)+len(d.CNAME)+len(d.MX)+len(d.NS)+len(d.PTR)+len(d.TXT) == 0
}

// NonNil returns d with every nil list made empty, so it encodes as [].
func (d DNS) NonNil() DNS {
	for _, l := range []*[]string{&d.A, &d.AAAA, &d.CNAME, &d.MX, &d.NS, &d.PTR, &d.TXT} {
		if *l == nil {
			*l = []string{}
		}
	}
	return d
}

// IPMetadata is the network and geographic data of the host's IP.
type IPMetadata struct {
	ASN               int     `json:"asn"`
	Organization      string  `json:"organization"`
	ISP               string  `json:"isp"`
	CountryCode       string  `json:"country_code"`
	CountryName       string  `json:"country_name"`
	CityName          string  `json:"city_name"`
	Region            string  `json:"region"`
	PostalCode        string  `json:"postal_code"`
	LocationLatitude  float64 `json:"location_latitude"`
	LocationLongitude float64 `json:"location_longitude"`
}

// Service is one open port and what answered on it.
type Service struct {
	Port      int    `json:"port"`
	Protocol  string `json:"protocol"` // "tcp" or "udp"
	Service   string `json:"service"`
	Product   string `json:"product"`
	Version   string `json:"version"`
	Banner    string `json:"banner"`
	FirstSeen int64  `json:"first_seen"`
	LastSeen  int64  `json:"last_seen"`
}

// Cert summarises the TLS certificate the host presented. NotBefore and
// NotAfter are Unix epoch seconds.
type Cert struct {
	SubjectCommonName  string   `json:"subject_common_name"`
	SubjectOrg         string   `json:"subject_organization"`
	IssuerCommonName   string   `json:"issuer_common_name"`
	IssuerOrg          string   `json:"issuer_organization"`
	NotBefore          int64    `json:"not_before"`
	NotAfter           int64    `json:"not_after"`
	DNSNames           []string `json:"dns_names"`
	SerialNumber       string   `json:"serial_number"`
	SHA256Fingerprint  string   `json:"sha256_fingerprint"`
	SHA1Fingerprint    string   `json:"sha1_fingerprint"`
	MD5Fingerprint     string   `json:"md5_fingerprint"`
	SignatureAlgorithm string   `json:"signature_algorithm"`
	SubjectCountry     string   `json:"subject_country"`
	SubjectProvince    string   `json:"subject_province"`
	SubjectLocality    string   `json:"subject_locality"`
	IssuerCountry      string   `json:"issuer_country"`
	IssuerSerialNumber string   `json:"issuer_serial_number"`
	IssuerString       string   `json:"issuer_string"` // the issuer's distinguished name
	IPAddresses        []string `json:"ip_addresses"`
	EmailAddresses     []string `json:"email_addresses"`
	// IsValidHostname reports whether the certificate names the host
	// (its common name or a DNS name, a wildcard covering one label).
	IsValidHostname bool   `json:"is_valid_hostname"`
	RemoteIPAddress string `json:"remote_ip_address"` // the address that presented it
}

// Extracted maps a kind of artefact to the values found, each list a
// sorted set.
type Extracted map[string][]string

// MarshalJSON encodes the host object of docs/api.md "Internet host index" and internal/api/openapi/hosts.json from a derived copy of
// h (see Derive), so lists are [] and flags agree with the data.
func (h Host) MarshalJSON() ([]byte, error) {
	return h.CanonicalJSON()
}

// CanonicalJSON is MarshalJSON called directly: encoding/json compacts and
// re-validates what a Marshaler returns, which doubles the cost of encoding
// a host on the store's hot path. The bytes are encoding/json's, written by
// appendJSON.
func (h Host) CanonicalJSON() ([]byte, error) {
	return h.AppendCanonicalJSON(make([]byte, 0, 2048))
}

// AppendCanonicalJSON appends CanonicalJSON's bytes to b.
func (h Host) AppendCanonicalJSON(b []byte) ([]byte, error) {
	h.Derive()
	return appendJSON(b, &h)
}

// Derive puts h in canonical form: every list sorted, deduplicated and
// non-nil, services ordered by (port, protocol), network_ports covering every
// service port, and the flags that follow from the data set (is_cloud,
// is_cdn, is_cloudflare, has_ipv6, has_private_ip, is_resolvable, is_live).
// Derived flags are only ever turned on, never off: a flag set by an
// enrichment step stays set.
func (h *Host) Derive() {
	h.DNS.A = sortedSet(h.DNS.A)
	h.DNS.AAAA = sortedSet(h.DNS.AAAA)
	h.DNS.CNAME = sortedSet(h.DNS.CNAME)
	h.DNS.MX = sortedSet(h.DNS.MX)
	h.DNS.NS = sortedSet(h.DNS.NS)
	h.DNS.PTR = sortedSet(h.DNS.PTR)
	h.DNS.TXT = sortedSet(h.DNS.TXT)
	h.Products = sortedSet(h.Products)
	h.Tags = sortedSet(h.Tags)
	h.Web = sortedSet(h.Web)
	h.Categories = sortedSet(h.Categories)
	h.URLs = sortedSet(h.URLs)
	h.Extracted = h.Extracted.canonical()
	h.Cert.DNSNames = sortedSet(h.Cert.DNSNames)
	h.Cert.IPAddresses = sortedSet(h.Cert.IPAddresses)
	h.Cert.EmailAddresses = sortedSet(h.Cert.EmailAddresses)
	if !canonicalServices(h.NetworkServices) {
		h.NetworkServices = mergeServices(nil, h.NetworkServices)
	}
	h.NetworkPorts = sortedSet(h.NetworkPorts)
	for _, s := range h.NetworkServices {
		if _, found := slices.BinarySearch(h.NetworkPorts, s.Port); !found {
			ports := slices.Clone(h.NetworkPorts)
			for _, s := range h.NetworkServices {
				ports = append(ports, s.Port)
			}
			h.NetworkPorts = sortedSet(ports)
			break
		}
	}

	h.IsCloud = h.IsCloud || h.Cloud.Provider != ""
	h.IsCDN = h.IsCDN || h.CDN != ""
	h.IsCloudflare = h.IsCloudflare || strings.EqualFold(h.CDN, "cloudflare") ||
		strings.EqualFold(h.Cloud.Provider, "cloudflare")
	h.IsResolvable = h.IsResolvable || len(h.DNS.A) > 0 || len(h.DNS.AAAA) > 0
	h.IsLive = h.IsLive || h.HTTPStatusCode > 0 || len(h.NetworkPorts) > 0
	h.HasIPv6 = h.HasIPv6 || len(h.DNS.AAAA) > 0 || isIPv6(h.IPAddress)
	h.HasPrivateIP = h.HasPrivateIP || isPrivate(h.IPAddress) ||
		slices.ContainsFunc(h.DNS.A, isPrivate) || slices.ContainsFunc(h.DNS.AAAA, isPrivate)
	h.Cert.IsValidHostname = h.Cert.IsValidHostname || h.Cert.names(h.Host)
}

// names reports whether c names host: its common name or one of its DNS
// names equals host, or is a wildcard ("*.example.com") covering exactly
// one label of it, compared without case.
func (c Cert) names(host string) bool {
	if host == "" {
		return false
	}
	match := func(pattern string) bool {
		if strings.EqualFold(pattern, host) {
			return true
		}
		rest, ok := strings.CutPrefix(pattern, "*.")
		_, parent, dot := strings.Cut(host, ".")
		return ok && dot && rest != "" && strings.EqualFold(rest, parent)
	}
	return match(c.SubjectCommonName) || slices.ContainsFunc(c.DNSNames, match)
}

// canonical returns e without empty kinds, each list a sorted set; never
// nil, so it encodes as {}. e itself is not modified unless it is already
// canonical.
func (e Extracted) canonical() Extracted {
	if e == nil {
		return Extracted{}
	}
	for k, v := range e {
		if k == "" || len(v) == 0 || !slices.Equal(sortedSet(v), v) {
			out := make(Extracted, len(e))
			for k, v := range e {
				if v = sortedSet(v); k != "" && len(v) > 0 {
					out[k] = v
				}
			}
			return out
		}
	}
	return e
}

// canonicalServices reports whether mergeServices(nil, ss) would return ss
// as it is: ordered by (port, protocol) without repeats, every port
// positive and every protocol set. Never nil.
func canonicalServices(ss []Service) bool {
	if ss == nil {
		return false
	}
	for i, s := range ss {
		if s.Port <= 0 || s.Protocol == "" {
			return false
		}
		if i > 0 {
			p := ss[i-1]
			if p.Port > s.Port || (p.Port == s.Port && p.Protocol >= s.Protocol) {
				return false
			}
		}
	}
	return true
}

func isIPv6(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is6() && !a.Is4In6()
}

func isPrivate(s string) bool {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return false
	}
	a = a.Unmap()
	return a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsUnspecified() ||
		cgnat.Contains(a)
}

// cgnat is the shared address space of RFC 6598, private in practice.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// sortedSet returns s sorted and deduplicated, without zero values ("" and
// port 0), and never nil. s itself is not modified: a slice already in that
// form is returned as is, otherwise a sorted copy.
func sortedSet[T int | string](s []T) []T {
	if s == nil {
		return []T{}
	}
	var zero T
	canonical := true
	for i, v := range s {
		if v == zero || (i > 0 && s[i-1] >= v) {
			canonical = false
			break
		}
	}
	if canonical {
		return s
	}
	s = slices.DeleteFunc(slices.Clone(s), func(v T) bool { return v == zero })
	slices.Sort(s)
	return slices.Compact(s)
}
