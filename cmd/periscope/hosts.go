package main

import (
	"compress/gzip"
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/periscope-oss/periscope/internal/hostingest"
	"github.com/periscope-oss/periscope/internal/scan"
)

// setupHosts builds the host ingest path of serve: the enricher is built
// once at start (a missing MMDB file or a bad range directory stops the
// start with a clear error) and shared by the demo loader and the
// capabilities that observe hosts.
func setupHosts(ctx context.Context, svc *services) error {
	in, err := newHostIngester(svc.cfg, svc.store, svc.ledger)
	if err != nil {
		return fmt.Errorf("host index: %w", err)
	}
	svc.hosts = in
	svc.deps.Enrich = in.Enricher // /nexus/ip-lookup describes addresses with it
	svc.closers = append(svc.closers, in.Enricher.Close)
	return nil
}

//go:embed demodata/hosts
var hostDemoFiles embed.FS

// demoGeneratedHosts is the bundled generated internet (native NDJSON,
// gzip).
const demoGeneratedHosts = "generated.ndjson.gz"

// hostDemoFormats maps the bundled files to their formats.
var hostDemoFormats = map[string]scan.Format{
	".xml": scan.Nmap, ".jsonl": scan.HTTPX, ".ndjson": scan.Masscan,
}

// loadHostsDemo ingests the bundled real scanner outputs and a generated
// internet of 5,000 hosts (generated.ndjson.gz, seed 1: the documented demo
// domains megacorp.com, globex.com and initech.io hold a share of them).
// The hosts are generated once and bundled, so the binary carries no
// generator; see demodata/hosts/README.md for the command that remakes them.
func loadHostsDemo(ctx context.Context, svc *services) (hostingest.Summary, error) {
	var total hostingest.Summary
	entries, err := fs.ReadDir(hostDemoFiles, "demodata/hosts")
	if err != nil {
		return total, err
	}
	for _, en := range entries {
		name := en.Name()
		f, ok := hostDemoFormats[path.Ext(name)]
		if !ok {
			continue
		}
		if strings.HasPrefix(name, "pdns") {
			f = scan.PDNS
		}
		file, err := hostDemoFiles.Open("demodata/hosts/" + name)
		if err != nil {
			return total, err
		}
		sum, err := svc.hosts.Ingest(ctx, f, name, file, nil)
		file.Close()
		total.Add(sum)
		if err != nil {
			return total, err
		}
	}
	// The generated hosts go through the native NDJSON path, as an
	// `export hosts` file would.
	file, err := hostDemoFiles.Open("demodata/hosts/" + demoGeneratedHosts)
	if err != nil {
		return total, err
	}
	defer file.Close()
	zr, err := gzip.NewReader(file)
	if err != nil {
		return total, fmt.Errorf("%s: %w", demoGeneratedHosts, err)
	}
	sum, err := svc.hosts.Ingest(ctx, scan.Native, demoGeneratedHosts, zr, nil)
	total.Add(sum)
	return total, err
}

// hostsCurls are the demo's example requests of the host index.
func hostsCurls(base, free, oem string) []string {
	c := func(key, rest string) string {
		return fmt.Sprintf("curl -s -H 'X-API-KEY: %s' %s", key, rest)
	}
	return []string{
		c(free, base+"/api/v1/domain/megacorp.com/subdomains"),
		c(free, `-X POST -d '{"product":"nginx","country":"DE"}' `+base+"/api/v1/global/search"),
		c(free, base+"/api/v1/host/scanme.nmap.org"),
		c(oem, `-X POST -d '{"query":"initech.io"}' `+base+"/api/v1/oem/attack-surface/search"),
	}
}
