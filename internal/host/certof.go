package host

import (
	"slices"

	"github.com/periscope-oss/periscope/internal/cert"
)

// CertOf is the host object's summary of c: what a host that presented c
// (an active scan) or that c was issued for (a certificate file or CT
// entry) shows as its cert_object.
func CertOf(c cert.Certificate) Cert {
	ips := make([]string, 0, len(c.IPAddresses))
	for _, a := range c.IPAddresses {
		ips = append(ips, a.String())
	}
	return Cert{
		SubjectCommonName: c.SubjectCN, SubjectOrg: c.SubjectOrg,
		IssuerCommonName: c.IssuerCN, IssuerOrg: c.IssuerOrg,
		NotBefore: c.NotBefore.Unix(), NotAfter: c.NotAfter.Unix(),
		DNSNames: slices.Clone(c.DNSNames), IPAddresses: ips, SerialNumber: c.Serial,
		SHA256Fingerprint: c.SHA256, SHA1Fingerprint: c.SHA1,
		SignatureAlgorithm: c.SignatureAlgorithm,
	}
}
