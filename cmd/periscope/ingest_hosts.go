package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/cli"
	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/hostingest"
	"github.com/periscope-oss/periscope/internal/ingestreport"
	"github.com/periscope-oss/periscope/internal/scan"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/wire"
)

// newHostIngester builds the host ingest path shared by `ingest` and
// `serve`: the enricher from the configuration (a missing MMDB file is an
// error) and the store, its writes recorded in the change ledger l. The caller sets the observer (the brand monitor).
func newHostIngester(cfg *config.Config, st *store.Store, l *wire.Ledger) (*hostingest.Ingester, error) {
	e, err := hostingest.NewEnricher(hostingest.Config{
		GeoIPCity: cfg.GeoIPCity, GeoIPASN: cfg.GeoIPASN, CloudRanges: cfg.CloudRanges,
	})
	if err != nil {
		return nil, err
	}
	return &hostingest.Ingester{Store: wire.Hosts(st, l), Enricher: e, KeepPrivate: cfg.KeepPrivate}, nil
}

// bulkGCPercent is the Go collector's target during a host ingest (the
// default is 100): a bulk load allocates fast and keeps a few batches
// live, and collecting half as often gives a 1M-host ingest on two cores
// about a tenth more speed (BENCHMARKS.md) for about a third more memory
// (0.9 → 1.2 GB). GOGC in the environment wins.
const bulkGCPercent = 200

// ingestHostsAs returns the ingester of one host-index input format.
func ingestHostsAs(f scan.Format) ingester {
	return func(ctx context.Context, e env, st *store.Store, cfg *config.Config, o ingestOpts, sources []string) error {
		in, err := newHostIngester(cfg, st, wire.NewLedger(st))
		if err != nil {
			return fmt.Errorf("ingest %s: %w", f, err)
		}
		defer in.Enricher.Close()
		defer cli.TuneGC(e.getenv, bulkGCPercent)()
		// <observe:brand>: every stored name is matched against the
		// monitored brands.
		mon, err := newBrandWatcher(brandConfigFromEnv(e.getenv), st, nil)
		if err != nil {
			return fmt.Errorf("ingest %s: %w", f, err)
		}
		in.Observe = func(ctx context.Context, names []string) error {
			_, err := mon.ObserveNames(ctx, names)
			return err
		}
		return ingestHostSources(ctx, e, o, st, in, f, sources)
	}
}

func ingestHostSources(ctx context.Context, e env, o ingestOpts, st *store.Store, in *hostingest.Ingester, f scan.Format, sources []string) error {
	files, err := expandSources(sources)
	if err != nil {
		return err
	}
	bulk, err := startBulkLoad(ctx, e, st)
	if err != nil {
		return fmt.Errorf("ingest %s: %w", f, err)
	}
	total, firstErr := ingestEach(ctx, e, files, hostCounts, func(src string, wrap func(io.Reader) io.Reader, progress func(hostingest.Summary)) (hostingest.Summary, error) {
		return ingestHostSource(ctx, o.feeds, in, f, src, wrap, progress)
	})
	o.report(e, hostReport(string(f), len(files), total), total.Skips)
	if total.Staged > 0 {
		fmt.Fprintf(e.stderr, "indexed the terms of a first load at its end: %d posting rows in %s\n", total.Staged, total.StageTime.Round(time.Millisecond))
	}
	// Built even when the load was interrupted: what it stored is there
	// to be searched.
	if err := bulk.finish(context.WithoutCancel(ctx)); err != nil && firstErr == nil {
		firstErr = err
	}
	if total.Inserted+total.Updated > 0 {
		analyze := in.Store.AnalyzeHosts
		if bulk.first() {
			// A first load leaves every page of the new tables to
			// vacuum: done now, not by autovacuum under the first
			// searches (PostgreSQL; nothing on SQLite).
			analyze = in.Store.VacuumHosts
		}
		if err := analyze(context.WithoutCancel(ctx)); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// bulkLoad is an ingest into an empty host index: the indexes it does not
// read are dropped at its start and built at its end
// (wire.DeferHostIndexes, docs/ingest.md#a-first-load).
type bulkLoad struct {
	e        env
	st       *store.Store
	deferred []string
	stop     func()
}

// startBulkLoad defers the host indexes when no host is stored, and keeps
// the deferral's heartbeat (for other machines' processes: PostgreSQL)
// until finish.
func startBulkLoad(ctx context.Context, e env, st *store.Store) (*bulkLoad, error) {
	names, err := wire.DeferHostIndexes(ctx, st)
	if err != nil {
		return nil, err
	}
	b := &bulkLoad{e: e, st: st, deferred: names, stop: func() {}}
	if len(names) > 0 && !st.Dialect().SingleProcess() {
		hctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			t := time.NewTicker(store.StaleDeferral / 5)
			defer t.Stop()
			for {
				select {
				case <-hctx.Done():
					return
				case <-t.C:
					st.TouchDeferredIndexes(hctx, names) // a missed beat is caught up by the next
				}
			}
		}()
		b.stop = func() { cancel(); <-done }
	}
	return b, nil
}

// first reports whether the load began on an empty host index.
func (b *bulkLoad) first() bool { return len(b.deferred) > 0 }

// finish builds the deferred indexes.
func (b *bulkLoad) finish(ctx context.Context) error {
	b.stop()
	if len(b.deferred) == 0 {
		return nil
	}
	start := time.Now()
	fmt.Fprintf(b.e.stderr, "building the indexes deferred by a first load: %s\n", strings.Join(b.deferred, ", "))
	if _, err := b.st.RestoreIndexes(ctx, b.deferred...); err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	fmt.Fprintf(b.e.stderr, "built in %s\n", time.Since(start).Round(time.Millisecond))
	return nil
}

func ingestHostSource(ctx context.Context, client *http.Client, in *hostingest.Ingester, f scan.Format, src string, wrap func(io.Reader) io.Reader, progress func(hostingest.Summary)) (hostingest.Summary, error) {
	var r io.ReadCloser
	if isURL(src) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
		if err != nil {
			return hostingest.Summary{Source: src}, fmt.Errorf("fetch %s: %w", src, err)
		}
		resp, err := client.Do(req)
		if err != nil {
			return hostingest.Summary{Source: src}, fmt.Errorf("fetch %s: %w", src, err)
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return hostingest.Summary{Source: src}, fmt.Errorf("fetch %s: HTTP %s", src, resp.Status)
		}
		r = resp.Body
	} else {
		file, err := os.Open(src)
		if err != nil {
			return hostingest.Summary{Source: src}, err
		}
		r = file
	}
	defer r.Close()
	return in.Ingest(ctx, f, src, wrap(r), progress)
}

// expandSources replaces each directory by the regular files below it, in
// name order; URLs and files pass through.
func expandSources(sources []string) ([]string, error) {
	var out []string
	for _, s := range sources {
		if strings.Contains(s, "://") {
			out = append(out, s)
			continue
		}
		fi, err := os.Stat(s)
		if err != nil {
			return nil, fmt.Errorf("ingest: %w", err)
		}
		if !fi.IsDir() {
			out = append(out, s)
			continue
		}
		var files []string
		err = filepath.WalkDir(s, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() && !strings.HasPrefix(d.Name(), ".") {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("ingest: %w", err)
		}
		sort.Strings(files)
		out = append(out, files...)
	}
	return out, nil
}

// hostReport is the shared summary of a host-index (or certificate)
// ingest.
func hostReport(kind string, sources int, s hostingest.Summary) ingestreport.Summary {
	r := ingestreport.Summary{Kind: kind, Sources: sources, Read: s.Read, Inserted: s.Inserted, Updated: s.Updated,
		Unchanged: s.Unchanged, Skipped: s.Skipped, SkippedBy: s.SkippedBy, Duration: s.Duration}
	r.AddRejects(s.Rejected, s.Rejects)
	return r
}

// hostCounts is what a progress line shows of a host ingest.
func hostCounts(s hostingest.Summary) ingestreport.Summary { return hostReport("", 0, s) }

// addHostIngesters registers the kinds of the host index (docs/ingest.md).
func addHostIngesters(m map[string]ingester) {
	m["httpx"] = ingestHostsAs(scan.HTTPX)
	m["nmap"] = ingestHostsAs(scan.Nmap)
	m["masscan"] = ingestHostsAs(scan.Masscan)
	m["naabu"] = ingestHostsAs(scan.Naabu)
	m["pdns"] = ingestHostsAs(scan.PDNS)
	m["hosts"] = ingestHostsAs(scan.Native)
}

// registerHostIngestFlags adds the enrichment flags of serve to the host
// ingest kinds, so `ingest` enriches as `serve` does.
func registerHostIngestFlags(kind string, fs *flag.FlagSet, cfg *config.Config, getenv config.Getenv) {
	switch kind {
	case "httpx", "nmap", "masscan", "naabu", "pdns", "hosts":
	default:
		return
	}
	env := func(name string) string { return getenv(name) }
	fs.StringVar(&cfg.GeoIPCity, "geoip-city", env("PERISCOPE_GEOIP_CITY"), "MMDB file with city/country data (MaxMind, DB-IP or IPinfo layout) (env PERISCOPE_GEOIP_CITY)")
	fs.StringVar(&cfg.GeoIPASN, "geoip-asn", env("PERISCOPE_GEOIP_ASN"), "MMDB file with ASN data (env PERISCOPE_GEOIP_ASN)")
	fs.StringVar(&cfg.CloudRanges, "cloud-ranges", env("PERISCOPE_CLOUD_RANGES"), "directory of provider range files overriding the built-in set (env PERISCOPE_CLOUD_RANGES)")
	fs.BoolVar(&cfg.KeepPrivate, "keep-private", false, "keep records whose host is a private address (10.x, 172.16-31.x, 192.168.x, 127.x, 169.254.x, 100.64/10, fc00::/7); by default they are skipped and counted as \"private address\"")
}
