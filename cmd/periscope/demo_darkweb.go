package main

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/darkwebingest"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// darkwebDemoDomains are the reserved domains the demo breach data is
// spread over; the demo enterprise organization claims the first, the OEM
// organization the second (a domain has one owner). Neither claim is
// verified (verifying example.com would let active monitoring probe it),
// so both see the records masked, with masked_reason domain_not_verified
// under their own domain; `periscope org authorize-domain` shows them.
var darkwebDemoDomains = []string{"example.com", "example.org", "mail.example.com", "example.net"}

// darkwebDemoSeed fixes the demo data: loading again adds nothing.
const darkwebDemoSeed = 2606

//go:embed demodata/darkweb
var darkwebDemoFS embed.FS

// darkwebDemoFile is one bundled demo input and how it is ingested.
type darkwebDemoFile struct {
	kind, name string
	o          darkweb.Options
}

// darkwebDemoFiles are the bundled files in ingest order (the catalogue
// first, so records take their breach dates from it).
var darkwebDemoFiles = []darkwebDemoFile{
	{"breaches", "breaches.json", darkweb.Options{}},
	{"combolist", "combo.txt", darkweb.Options{Breach: "ExampleCombo2024", BreachDate: "2024-03-01"}},
	{"breach-csv", "dump.csv", darkweb.Options{Breach: "SampleShop2021", BreachDate: "2021-02-15"}},
	{"breach-csv", "dump.tsv", darkweb.Options{Breach: "TestGame2022"}},
	{"dehashed", "dehashed-v1.json", darkweb.Options{}},
	{"dehashed", "dehashed-v2.ndjson", darkweb.Options{}},
	{"stealer", "stealer", darkweb.Options{Breach: "ExampleStealer2025"}},
	{"breach-csv", "forum.csv", darkweb.Options{Breach: "ExampleForum2019", Map: map[string]string{"notes": "cve"}}}, // posts naming CVEs
}

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return sub
}

// loadDarkwebDemo ingests a small synthetic set in every layout through
// the same parsers and store path as `periscope ingest`.
func loadDarkwebDemo(ctx context.Context, svc *services, accounts demoAccounts) error {
	if svc.dw == nil {
		return nil
	}
	// The files are bundled (demodata/darkweb, written by internal/darkwebgen
	// with darkwebDemoSeed; demo_darkweb_test.go keeps them equal), so the
	// shipped binary carries no generator. They are copied out because the
	// stealer kind reads a folder.
	dir, err := os.MkdirTemp("", "periscope-darkweb-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := os.CopyFS(dir, mustSub(darkwebDemoFS, "demodata/darkweb")); err != nil {
		return fmt.Errorf("dark-web demo: %w", err)
	}
	r := darkwebingest.New(svc.dw)
	for _, j := range darkwebDemoFiles {
		if err := r.Source(ctx, j.kind, filepath.Join(dir, j.name), j.o); err != nil {
			return fmt.Errorf("dark-web demo: %w", err)
		}
	}
	sum := r.Summary()
	svc.log.Info("demo dark-web records loaded", "read", sum.Read, "added", sum.Added, "already_stored", sum.Duplicates, "rejected", sum.Rejected)
	// The organizations claim their domains after the records are in: the
	// demo's own records are the state the organizations start from, not
	// news for their compromised_credential alerts (those go by ingest
	// time after the domain's baseline), however long the load took.
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
		c(oem, "-H 'Content-Type: application/json' -d '{\"query\":\"CVE-2021-44228\",\"type\":\"cve\"}' "+base+"/api/v1/oem/darkweb/search"),
		c(ent, base+"/api/v1/enterprise/darkweb/compromised-credentials?per_page=5"),
		c(ent, "'"+base+"/api/v1/enterprise/darkweb/discovered-emails?q=mail.example.com'"),
	}
}
