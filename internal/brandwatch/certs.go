package brandwatch

import (
	"context"

	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/cert"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
)

// CertResult reports what IngestCerts did with a batch.
type CertResult struct {
	Certs brandstore.CertStats
	// Hosts is what the certificates' names did to the host index.
	Hosts hoststore.HostStats
	// Links counts new certificate links to organizations.
	Links int
	// Match is what matching the names against the brands did.
	Match Result
}

// IngestCerts stores a batch of certificates (each once, by SHA-256), adds
// every name they cover to the host index as an observation, links each
// certificate to the organizations whose domains it covers, and matches the
// names against every monitored brand. The names of a certificate that
// covers an organization's domain are not reported to that organization: a
// CA validated that one holder controls them all (google.com's certificate
// also names google.ca, which is Google's, not a look-alike).
func (m *Watcher) IngestCerts(ctx context.Context, batch []brandstore.SeenCert) (CertResult, error) {
	var res CertResult
	if len(batch) == 0 {
		return res, nil
	}
	cs, err := m.brand.UpsertCertificates(ctx, batch)
	if err != nil {
		return res, err
	}
	res.Certs = cs
	now := m.store.Now().Unix()
	var hosts []host.Host
	var names []string
	var links []brandstore.CertLink
	seenName := map[string]bool{}
	exclude := map[string]map[string]bool{}
	for _, sc := range batch {
		seen := sc.Seen
		if seen == 0 {
			seen = now
		}
		hs := subjectFirst(sc.Cert.Hosts(), sc.Cert.SubjectCN)
		l, err := m.CertLinks(ctx, cs.IDs[sc.Cert.SHA256], hs, seen)
		if err != nil {
			return res, err
		}
		links = append(links, l...)
		for _, link := range l {
			for _, h := range hs {
				if exclude[h] == nil {
					exclude[h] = map[string]bool{}
				}
				exclude[h][link.OrganizationID] = true
			}
		}
		for i, h := range hs {
			obs := host.Host{Host: h, FirstSeen: seen, LastSeen: seen}
			if i == 0 {
				// The name the certificate was issued for carries it, so
				// the certificate search (/nexus/cloud-certs) finds it by
				// any of its names, whether or not an organization
				// watches them; the other names are plain observations
				// (a copy on each would index every name n times).
				obs.Cert = host.CertOf(sc.Cert)
			}
			hosts = append(hosts, obs)
			if !seenName[h] {
				seenName[h] = true
				names = append(names, h)
			}
		}
	}
	if res.Hosts, err = m.hosts.UpsertHostsFrom(ctx, CertSource, hosts); err != nil {
		return res, err
	}
	if res.Links, err = m.brand.LinkCertificates(ctx, links); err != nil {
		return res, err
	}
	st, err := m.ensure(ctx)
	if err != nil {
		return res, err
	}
	res.Match, err = m.match(ctx, st, names, nil, exclude)
	return res, err
}

// subjectFirst moves the subject common name to the front of hosts, so a
// certificate is listed under the name it was issued for.
func subjectFirst(hosts []string, cn string) []string {
	cn, _ = cert.WildcardBase(cert.NormalizeName(cn))
	for i, h := range hosts {
		if h == cn && i > 0 {
			out := append([]string{h}, hosts[:i]...)
			return append(out, hosts[i+1:]...)
		}
	}
	return hosts
}
