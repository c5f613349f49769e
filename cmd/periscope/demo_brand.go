package main

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/brandwatch"
	"github.com/periscope-oss/periscope/internal/cert"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hostingest"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/scan"
	"github.com/periscope-oss/periscope/internal/zone"
)

// brandDemo is the bundled brand-protection demo data (see its README.md).
//
//go:embed demodata/brand
var brandDemo embed.FS

// brandDemoDomains are the domains the demo enterprise organization monitors.
var brandDemoDomains = []string{"github.com", "digicert.com", "letsencrypt.org"}

// loadBrandDemo gives the demo enterprise organization its domains, then
// feeds the bundled certificates, host observations and zone file through
// the same paths as `ingest`, so the monitor finds its certificates,
// typosquats and phishing candidates. Loading again changes nothing.
func loadBrandDemo(ctx context.Context, svc *services, accounts demoAccounts) error {
	ent := accounts["enterprise"]
	mon := svc.brandWatch
	if ent.OrgID == "" || mon == nil {
		return nil
	}
	for _, d := range brandDemoDomains {
		a := periscope.Asset{OrganizationID: ent.OrgID, AccountID: ent.Account.ID, Kind: periscope.AssetDomain, Value: d}
		if _, err := svc.store.AddAsset(ctx, a); err != nil {
			return fmt.Errorf("brand demo: add %s: %w", d, err)
		}
	}
	if err := mon.Reconcile(ctx); err != nil {
		return fmt.Errorf("brand demo: %w", err)
	}
	const dir = "demodata/brand"
	entries, err := fs.ReadDir(brandDemo, dir)
	if err != nil {
		return err
	}
	// Certificates first: a name on an organization's own certificate is
	// never its finding, and that rule applies to names matched after the
	// certificate is known.
	var certs []brandstore.SeenCert
	for _, e := range entries {
		name := path.Join(dir, e.Name())
		if !strings.HasSuffix(name, ".pem") {
			continue
		}
		b, err := brandDemo.ReadFile(name)
		if err != nil {
			return err
		}
		if err := cert.Decode(bytes.NewReader(b), name, func(c cert.Certificate) error {
			certs = append(certs, brandstore.SeenCert{Cert: c, Source: "demo"})
			return nil
		}, func(cert.Reject) {}); err != nil {
			return fmt.Errorf("brand demo: %s: %w", name, err)
		}
	}
	if _, err := mon.IngestCerts(ctx, certs); err != nil {
		return fmt.Errorf("brand demo: certificates: %w", err)
	}
	for _, e := range entries {
		name := path.Join(dir, e.Name())
		b, err := brandDemo.ReadFile(name)
		if err != nil {
			return err
		}
		switch {
		case strings.HasSuffix(name, ".ndjson"):
			in := &hostingest.Ingester{Store: hoststore.New(svc.store), Observe: func(ctx context.Context, names []string) error {
				_, err := mon.ObserveNames(ctx, names)
				return err
			}}
			_, err = in.Ingest(ctx, scan.Native, name, bytes.NewReader(b), nil)
		case strings.HasSuffix(name, ".zone"):
			var obs []brandwatch.Observation
			err = zone.Delegations(bytes.NewReader(b), zone.Options{Name: name}, func(d string, ns []string) error {
				obs = append(obs, brandwatch.Observation{Name: d, DNS: host.DNS{NS: ns}})
				return nil
			}, func(*zone.ParseError) {})
			if err == nil {
				_, err = mon.Observe(ctx, obs)
			}
		}
		if err != nil {
			return fmt.Errorf("brand demo: %s: %w", name, err)
		}
	}
	return nil
}
