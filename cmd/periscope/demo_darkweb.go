package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/periscope-oss/periscope/internal/breach"
	"github.com/periscope-oss/periscope/internal/breachgen"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// darkwebDemoDomains are the reserved domains the demo breach data is
// spread over; the demo enterprise organization claims the first, the OEM
// organization the second (a domain has one owner), so each sees its own
// records' secrets in clear and the other's masked.
var darkwebDemoDomains = []string{"example.com", "example.org", "mail.example.com", "example.net"}

// darkwebDemoSeed fixes the demo data: loading again adds nothing.
const darkwebDemoSeed = 2606

// loadDarkwebDemo writes a small synthetic set in every layout and ingests
// it through the same parsers and store path as `periscope ingest`.
func loadDarkwebDemo(ctx context.Context, svc *services, accounts demoAccounts) error {
	if svc.dw == nil {
		return nil
	}
	for name, dom := range map[string]string{"enterprise": "example.com", "oem": "example.org"} {
		a := accounts[name]
		if a.OrgID == "" {
			continue
		}
		asset := periscope.Asset{OrganizationID: a.OrgID, AccountID: a.Account.ID, Kind: periscope.AssetDomain, Value: dom}
		if _, err := svc.store.AddAsset(ctx, asset); err != nil {
			svc.log.Warn("dark-web demo: domain not added", "domain", dom, "err", err)
		}
	}
	dir, err := os.MkdirTemp("", "periscope-darkweb-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	g := breachgen.New(darkwebDemoSeed, darkwebDemoDomains...)
	write := func(name string, fn func(f *os.File) error) (string, error) {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			return "", err
		}
		if err := fn(f); err != nil {
			f.Close()
			return "", err
		}
		return p, f.Close()
	}
	type job struct {
		kind, name string
		fn         func(f *os.File) error
		o          breach.Options
	}
	jobs := []job{
		{"breaches", "breaches.json", func(f *os.File) error { return g.Breaches(f) }, breach.Options{}},
		{"combolist", "combo.txt", func(f *os.File) error { return g.Combolist(f, 60) }, breach.Options{Breach: "ExampleCombo2024", BreachDate: "2024-03-01"}},
		{"breach-csv", "dump.csv", func(f *os.File) error { return g.CSV(f, 80, false) }, breach.Options{Breach: "SampleShop2021", BreachDate: "2021-02-15"}},
		{"breach-csv", "dump.tsv", func(f *os.File) error { return g.CSV(f, 40, true) }, breach.Options{Breach: "TestGame2022"}},
		{"dehashed", "dehashed-v1.json", func(f *os.File) error { return g.DeHashed(f, 30, false) }, breach.Options{}},
		{"dehashed", "dehashed-v2.ndjson", func(f *os.File) error { return g.DeHashed(f, 30, true) }, breach.Options{}},
	}
	r := &darkwebRun{dw: svc.dw, norm: svc.dw.Normalizer()}
	for _, j := range jobs {
		p, err := write(j.name, j.fn)
		if err != nil {
			return err
		}
		if err := r.source(ctx, j.kind, p, j.o); err != nil {
			return fmt.Errorf("dark-web demo: %w", err)
		}
	}
	logs := filepath.Join(dir, "stealer")
	if err := g.Stealer(logs, 3, 5); err != nil {
		return err
	}
	if err := r.source(ctx, "stealer", logs, breach.Options{Breach: "ExampleStealer2025"}); err != nil {
		return fmt.Errorf("dark-web demo: %w", err)
	}
	svc.log.Info("demo dark-web records loaded", "read", r.sum.Read, "added", r.sum.Added, "already_stored", r.sum.Duplicates, "rejected", r.sum.Rejected)
	return nil
}

// darkwebCurls are the demo's dark-web examples.
func darkwebCurls(base, ent, oem string) []string {
	c := func(key, rest string) string {
		return fmt.Sprintf("curl -s -H 'X-API-KEY: %s' %s", key, rest)
	}
	return []string{
		c(oem, "-H 'Content-Type: application/json' -d '{\"query\":\"example.org\",\"type\":\"domain\"}' "+base+"/api/v1/oem/darkweb/search"),
		c(oem, "-H 'Content-Type: application/json' -d '{\"query\":\"example.com\",\"type\":\"domain\",\"from\":\"01-01-2020\"}' "+base+"/api/v1/oem/darkweb/search"),
		c(ent, base+"/api/v1/enterprise/darkweb/compromised-credentials?per_page=5"),
		c(ent, "'"+base+"/api/v1/enterprise/darkweb/discovered-emails?q=mail.example.com'"),
	}
}
