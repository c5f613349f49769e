package wire

import (
	"context"
	"errors"
	"net/netip"
	"time"

	"github.com/periscope-oss/periscope/internal/alerts"
	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/darkwebstore"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/whoisstore"
)

// The adapters below feed the alert rules (internal/alerts) from the
// capability stores: each reads one store and hands the rules only the
// fields they use, so alerts depends on no store.

// BrandItems reads new brand findings for the brand feed.
func BrandItems(bs *brandstore.Store) func(ctx context.Context, after int64, limit int) ([]alerts.BrandItem, error) {
	return func(ctx context.Context, after int64, limit int) ([]alerts.BrandItem, error) {
		fs, err := bs.FindingsAfter(ctx, after, limit)
		if err != nil {
			return nil, err
		}
		out := make([]alerts.BrandItem, len(fs))
		for i, f := range fs {
			out[i] = alerts.BrandItem{ID: f.ID, OrganizationID: f.OrganizationID, AccountID: f.AccountID, Kind: f.Kind,
				Domain: f.Domain, BaseDomain: f.BaseDomain, Reason: f.Reason, Score: f.Score, DateAdded: f.DateAdded}
		}
		return out, nil
	}
}

// ExpiringCerts lists the organizations' certificates expiring within 31
// days (or expired within the last day) for the expiry feed. A
// certificate is linked to an organization under the name it was found
// by (org_certificates.domain, e.g. www.example.com); its alert names the
// organization's domain asset that covers that name, with the certificate
// name as evidence.
func ExpiringCerts(st *store.Store, bs *brandstore.Store) func(ctx context.Context) ([]alerts.CertItem, error) {
	return func(ctx context.Context) ([]alerts.CertItem, error) {
		t := st.Now()
		cs, err := bs.ExpiringCertificates(ctx, t.Add(-24*time.Hour).Unix(), t.Add(31*24*time.Hour).Unix())
		if err != nil || len(cs) == 0 {
			return nil, err
		}
		assets, err := st.AllAssets(ctx, periscope.AssetDomain)
		if err != nil {
			return nil, err
		}
		out := make([]alerts.CertItem, len(cs))
		for i, c := range cs {
			a, ok := alerts.CoveringAsset(assets, c.OrganizationID, c.Domain)
			if !ok { // the asset was removed since: name the certificate's own domain
				a = periscope.Asset{OrganizationID: c.OrganizationID, AccountID: c.AccountID, Kind: periscope.AssetDomain, Value: c.Domain}
			}
			out[i] = alerts.CertItem{Asset: a, Host: c.Domain, Domain: a.Value, SHA256: c.SHA256, Subject: c.SubjectCN,
				NotAfter: time.Unix(c.NotAfter, 0).UTC()}
		}
		return out, nil
	}
}

// DomainExpiries lists the organizations' domains with the registration
// expiry stored by WHOIS or RDAP lookups, for the expiry feed.
func DomainExpiries(st *store.Store, ws *whoisstore.Store) func(ctx context.Context) ([]alerts.DomainItem, error) {
	return func(ctx context.Context) ([]alerts.DomainItem, error) {
		assets, err := st.AllAssets(ctx, periscope.AssetDomain)
		if err != nil {
			return nil, err
		}
		var out []alerts.DomainItem
		for _, a := range assets {
			r, err := ws.Get(ctx, a.Value)
			if err != nil {
				if errors.Is(err, whoisstore.ErrNotFound) {
					continue // never looked up: nothing known of its expiry
				}
				return nil, err
			}
			if r.ExpiresAt.IsZero() {
				continue
			}
			out = append(out, alerts.DomainItem{Asset: a, Domain: a.Value, Registrar: r.Registrar, Expiry: r.ExpiresAt})
		}
		return out, nil
	}
}

// CredentialSettle is how old an ingested dark-web record must be before
// the credential rule reads it (at most; less when --alert-feed-interval
// is shorter): a loader batch still committing is not skipped.
const CredentialSettle = 30 * time.Second

// DarkwebCredentials reads credential records for the credential rule
// through darkwebstore's enterprise listing (Credentials: records with a
// password or hash under an email domain and its subdomains, by ingest
// date). Only the email and the breach metadata leave this function.
func DarkwebCredentials(dw *darkwebstore.Store) alerts.CredentialList {
	return func(ctx context.Context, domains []string, from, to int64, limit, offset int) ([]alerts.CredentialItem, error) {
		rs, _, err := dw.Credentials(ctx, darkwebstore.ListQuery{Domains: domains, From: from, To: to, Limit: limit, Offset: offset})
		if err != nil {
			return nil, err
		}
		out := make([]alerts.CredentialItem, len(rs))
		for i, r := range rs {
			out[i] = alerts.CredentialItem{ID: r.ID, Email: r.Record.Email, Breach: r.Record.Breach, BreachDate: r.Record.BreachDate,
				Source: r.Record.Source, DateAdded: r.DateAdded}
		}
		return out, nil
	}
}

// HostsInRange walks the hosts whose address is in a block, a page at a
// time, for the vulnerability rule's ranges.
func HostsInRange(hs *hoststore.Store) func(ctx context.Context, p netip.Prefix, fn func(host.Host) error) error {
	return func(ctx context.Context, p netip.Prefix, fn func(host.Host) error) error {
		const page = 1000
		for off := 0; ; off += page {
			res, err := hs.SearchHosts(ctx, hoststore.HostQuery{IPRange: p, Limit: page, Offset: off})
			if err != nil {
				return err
			}
			for _, h := range res.Hosts {
				if err := fn(h); err != nil {
					return err
				}
			}
			if len(res.Hosts) < page {
				return nil
			}
		}
	}
}
