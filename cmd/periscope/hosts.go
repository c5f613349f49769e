package main

import (
	"compress/gzip"
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/hostingest"
	"github.com/periscope-oss/periscope/internal/hoststore"
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
	svc.onServer = append(svc.onServer, func(srv *api.Server) error {
		return srv.Registry().Register(newPostingCacheCollector(svc.hostIndex))
	})
	return nil
}

// postingCacheCollector reports what the host query posting cache holds
// against its budget (--posting-cache-mib), read at scrape time.
type postingCacheCollector struct {
	hs                          *hoststore.Store
	budget, used, fields, terms *prometheus.Desc
}

func newPostingCacheCollector(hs *hoststore.Store) *postingCacheCollector {
	return &postingCacheCollector{hs: hs,
		budget: prometheus.NewDesc("periscope_host_posting_cache_budget_bytes", "The host query posting cache's budget (--posting-cache-mib); 0 when it is off.", nil, nil),
		used:   prometheus.NewDesc("periscope_host_posting_cache_bytes", "Bytes of decoded posting lists the host query posting cache holds (emptied by every host write).", nil, nil),
		fields: prometheus.NewDesc("periscope_host_posting_cache_fields", "Whole fields (every value, for facets) the host query posting cache holds.", nil, nil),
		terms:  prometheus.NewDesc("periscope_host_posting_cache_terms", "Single terms the host query posting cache holds.", nil, nil),
	}
}

func (c *postingCacheCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.budget, c.used, c.fields, c.terms} {
		ch <- d
	}
}

func (c *postingCacheCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.hs.PostingCacheStats()
	ch <- prometheus.MustNewConstMetric(c.budget, prometheus.GaugeValue, float64(st.Budget))
	ch <- prometheus.MustNewConstMetric(c.used, prometheus.GaugeValue, float64(st.Used))
	ch <- prometheus.MustNewConstMetric(c.fields, prometheus.GaugeValue, float64(st.Fields))
	ch <- prometheus.MustNewConstMetric(c.terms, prometheus.GaugeValue, float64(st.Terms))
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
