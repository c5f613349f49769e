package monitor

import (
	"context"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/store"
)

// CertResult reports what IngestCerts did with a batch.
type CertResult struct {
	Certs store.CertStats
	// Hosts is what the certificates' names did to the host index.
	Hosts store.HostStats
	// Links counts new certificate links to organizations.
	Links int
	// Match is what matching the names against the brands did.
	Match Result
}

// IngestCerts stores a batch of certificates (each once, by SHA-256), adds
// every name they cover to the host index as an observation, links each
// certificate to the organizations whose domains it covers, and matches the
// names against every monitored brand.
func (m *Monitor) IngestCerts(ctx context.Context, batch []store.SeenCert) (CertResult, error) {
	var res CertResult
	if len(batch) == 0 {
		return res, nil
	}
	cs, err := m.store.UpsertCertificates(ctx, batch)
	if err != nil {
		return res, err
	}
	res.Certs = cs
	now := m.store.Now().Unix()
	var hosts []host.Host
	var names []string
	var links []store.CertLink
	seenName := map[string]bool{}
	for _, sc := range batch {
		seen := sc.Seen
		if seen == 0 {
			seen = now
		}
		hs := sc.Cert.Hosts()
		l, err := m.CertLinks(ctx, cs.IDs[sc.Cert.SHA256], hs, seen)
		if err != nil {
			return res, err
		}
		links = append(links, l...)
		for _, h := range hs {
			hosts = append(hosts, host.Host{Host: h, FirstSeen: seen, LastSeen: seen})
			if !seenName[h] {
				seenName[h] = true
				names = append(names, h)
			}
		}
	}
	if res.Hosts, err = m.store.UpsertHosts(ctx, hosts); err != nil {
		return res, err
	}
	if res.Links, err = m.store.LinkCertificates(ctx, links); err != nil {
		return res, err
	}
	res.Match, err = m.ObserveNames(ctx, names)
	return res, err
}
