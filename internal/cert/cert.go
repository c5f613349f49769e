// Package cert turns X.509 certificates (DER, PEM bundles, directories of
// them) into Certificate summaries: the fields Periscope stores and searches
// (names, issuer, subject, validity, fingerprints), keyed by the SHA-256 of
// the DER encoding so that each certificate is stored once.
//
// Parsing first uses crypto/x509 and falls back to the more lenient parser of
// github.com/google/certificate-transparency-go/x509, which accepts
// certificates the standard library rejects (negative serial numbers,
// malformed extensions) as long as the structure can be read.
package cert

import (
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"strings"
	"time"

	ctx509 "github.com/google/certificate-transparency-go/x509"
)

// oidCTPoison is the RFC 6962 §3.1 precertificate poison extension.
var oidCTPoison = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 11129, 2, 4, 3}

// Certificate is the summary of one X.509 certificate or precertificate.
type Certificate struct {
	// SHA256 is the lower-case hex SHA-256 of Raw: the certificate's identity.
	SHA256 string
	// SHA1 is the lower-case hex SHA-1 of Raw, for display and lookups.
	SHA1 string

	SubjectCN  string
	SubjectOrg string
	IssuerCN   string
	IssuerOrg  string

	// Serial is the serial number in lower-case hex, with a leading "-" for
	// the (invalid but real) negative serial numbers.
	Serial string

	NotBefore time.Time
	NotAfter  time.Time

	// DNSNames are the SAN DNS names, lower case, without a trailing dot,
	// deduplicated, in certificate order. Wildcards ("*.example.com") are
	// kept as written; Hosts gives the names with wildcards removed.
	DNSNames    []string
	IPAddresses []netip.Addr

	// IsPrecert reports a precertificate: the RFC 6962 poison extension is
	// present, or the certificate came from a CT precert_entry.
	IsPrecert bool
	IsCA      bool

	SignatureAlgorithm string

	// Raw is the DER encoding the fingerprints were computed over.
	Raw []byte
}

// Hosts returns the host names the certificate covers: its DNS names, and the
// subject common name when it looks like a host name, with any wildcard label
// removed ("*.example.com" gives "example.com"), deduplicated.
func (c Certificate) Hosts() []string {
	seen := make(map[string]bool, len(c.DNSNames)+1)
	out := make([]string, 0, len(c.DNSNames)+1)
	add := func(name string) {
		base, _ := WildcardBase(name)
		if base == "" || seen[base] {
			return
		}
		seen[base] = true
		out = append(out, base)
	}
	for _, n := range c.DNSNames {
		add(n)
	}
	if cn := NormalizeName(c.SubjectCN); looksLikeHostname(cn) {
		add(cn)
	}
	return out
}

// WildcardBase returns the name without a leading "*." label and whether it
// had one: "*.example.com" gives ("example.com", true).
func WildcardBase(name string) (base string, wildcard bool) {
	if rest, ok := strings.CutPrefix(name, "*."); ok {
		return rest, true
	}
	return name, false
}

// NormalizeName lower-cases a DNS name and removes surrounding space and a
// trailing dot.
func NormalizeName(name string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(name)), ".")
}

// looksLikeHostname reports whether s could be a DNS name: at least two
// labels of letters, digits, '-', '_' or a leading '*' label. Common names
// such as "GitHub CA" or e-mail addresses are not.
func looksLikeHostname(s string) bool {
	if len(s) == 0 || len(s) > 253 || !strings.Contains(s, ".") {
		return false
	}
	for i, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		if label == "*" && i == 0 {
			continue
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

// Parse parses one DER-encoded certificate. It tries crypto/x509 first and,
// when that rejects the input, the lenient certificate-transparency-go
// parser; the error names both causes when neither can read it.
func Parse(der []byte) (Certificate, error) {
	if len(der) == 0 {
		return Certificate{}, errors.New("parse certificate: empty input")
	}
	std, stdErr := x509.ParseCertificate(der)
	if stdErr == nil {
		return fromStd(std), nil
	}
	lax, laxErr := ctx509.ParseCertificate(der)
	if lax == nil {
		return Certificate{}, fmt.Errorf("parse certificate: %w (lenient parser: %v)", stdErr, laxErr)
	}
	// A non-nil certificate with NonFatalErrors is what we want: readable,
	// if not valid.
	return fromCT(lax), nil
}

func fromStd(c *x509.Certificate) Certificate {
	out := base(c.Raw)
	out.SubjectCN = c.Subject.CommonName
	out.SubjectOrg = first(c.Subject.Organization)
	out.IssuerCN = c.Issuer.CommonName
	out.IssuerOrg = first(c.Issuer.Organization)
	out.Serial = serialHex(c.SerialNumber)
	out.NotBefore = c.NotBefore.UTC()
	out.NotAfter = c.NotAfter.UTC()
	out.DNSNames = normalizeNames(c.DNSNames)
	out.IPAddresses = addrs(c.IPAddresses)
	out.IsCA = c.BasicConstraintsValid && c.IsCA
	out.SignatureAlgorithm = c.SignatureAlgorithm.String()
	for _, ext := range c.Extensions {
		if ext.Id.Equal(oidCTPoison) {
			out.IsPrecert = true
		}
	}
	return out
}

func fromCT(c *ctx509.Certificate) Certificate {
	out := base(c.Raw)
	out.SubjectCN = c.Subject.CommonName
	out.SubjectOrg = first(c.Subject.Organization)
	out.IssuerCN = c.Issuer.CommonName
	out.IssuerOrg = first(c.Issuer.Organization)
	out.Serial = serialHex(c.SerialNumber)
	out.NotBefore = c.NotBefore.UTC()
	out.NotAfter = c.NotAfter.UTC()
	out.DNSNames = normalizeNames(c.DNSNames)
	out.IPAddresses = addrs(c.IPAddresses)
	out.IsCA = c.BasicConstraintsValid && c.IsCA
	out.SignatureAlgorithm = c.SignatureAlgorithm.String()
	out.IsPrecert = c.IsPrecertificate()
	return out
}

func base(raw []byte) Certificate {
	s256 := sha256.Sum256(raw)
	s1 := sha1.Sum(raw)
	return Certificate{
		SHA256: hex.EncodeToString(s256[:]),
		SHA1:   hex.EncodeToString(s1[:]),
		Raw:    raw,
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func serialHex(n *big.Int) string {
	if n == nil {
		return ""
	}
	if n.Sign() < 0 {
		return "-" + new(big.Int).Neg(n).Text(16)
	}
	return n.Text(16)
}

func normalizeNames(names []string) []string {
	out := make([]string, 0, len(names))
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		n = NormalizeName(n)
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		out = append(out, n)
	}
	return out
}

func addrs(ips []net.IP) []netip.Addr {
	out := make([]netip.Addr, 0, len(ips))
	for _, ip := range ips {
		if a, ok := netip.AddrFromSlice(ip); ok {
			out = append(out, a.Unmap())
		}
	}
	return out
}
