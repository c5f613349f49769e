package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/brand"
	"github.com/periscope-oss/periscope/internal/brandingest"
	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/brandwatch"
	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/hostingest"
	"github.com/periscope-oss/periscope/internal/ingestreport"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/wire"
)

// brandConfig is the configuration of brand protection: the typosquatting
// word lists, the CT logs serve follows and the polling intervals.
type brandConfig struct {
	Dictionary string        // dictionary fuzzer word list (dnstwist format)
	TLDs       string        // tld-swap suffix list (dnstwist format)
	CTLogs     string        // comma-separated RFC 6962 log URLs serve follows
	CTPoll     time.Duration // wait between get-sth calls once caught up
	Poll       time.Duration // how often the monitor re-reads organizations' domains
}

// registerBrandFlags adds brand protection's flags, with environment
// fallbacks, to serve's flag set. An environment value that is not a
// positive duration is an error naming the variable.
func registerBrandFlags(fs *flag.FlagSet, getenv config.Getenv) (*brandConfig, error) {
	c := &brandConfig{}
	env := func(name string) string { return getenv(name) }
	var bad error
	dur := func(name string, def time.Duration) time.Duration {
		v := getenv(name)
		if v == "" {
			return def
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			bad = fmt.Errorf("%s must be a positive duration such as 30s (got %q)", name, v)
			return def
		}
		return d
	}
	fs.StringVar(&c.Dictionary, "brand-dictionary", env("PERISCOPE_BRAND_DICTIONARY"), "word list for the dictionary typosquatting fuzzer (env PERISCOPE_BRAND_DICTIONARY)")
	fs.StringVar(&c.TLDs, "brand-tlds", env("PERISCOPE_BRAND_TLDS"), "suffix list for the tld-swap typosquatting fuzzer (env PERISCOPE_BRAND_TLDS)")
	fs.StringVar(&c.CTLogs, "ct-logs", env("PERISCOPE_CT_LOGS"), "comma-separated Certificate Transparency log URLs to follow (env PERISCOPE_CT_LOGS)")
	fs.DurationVar(&c.CTPoll, "ct-poll", dur("PERISCOPE_CT_POLL", time.Minute), "wait between tree-head polls of a caught-up CT log (env PERISCOPE_CT_POLL)")
	fs.DurationVar(&c.Poll, "brand-poll", dur("PERISCOPE_BRAND_POLL", 30*time.Second), "how often the brand monitor re-reads organizations' domains (env PERISCOPE_BRAND_POLL)")
	return c, bad
}

// validate checks the parsed flags.
func (c *brandConfig) validate() error {
	if c.CTPoll <= 0 {
		return fmt.Errorf("--ct-poll must be positive (got %s)", c.CTPoll)
	}
	if c.Poll <= 0 {
		return fmt.Errorf("--brand-poll must be positive (got %s)", c.Poll)
	}
	return nil
}

// brandOptions reads the word lists of c.
func (c *brandConfig) brandOptions() (brand.Options, error) {
	var o brand.Options
	read := readWordList
	var err error
	if o.Typo.Dictionary, err = read(c.Dictionary, "brand-dictionary"); err != nil {
		return o, err
	}
	if o.Typo.TLDs, err = read(c.TLDs, "brand-tlds"); err != nil {
		return o, err
	}
	return o, nil
}

// newBrandWatcher builds the brand watcher of a command.
func newBrandWatcher(c *brandConfig, st *store.Store, log *slog.Logger) (*brandwatch.Watcher, error) {
	o, err := c.brandOptions()
	if err != nil {
		return nil, err
	}
	return brandwatch.New(st, wire.Hosts(st, wire.NewLedger(st)), brandstore.New(st), brandwatch.Options{Brand: o, Poll: c.Poll, Log: log}), nil
}

// brandConfigFromEnv is the configuration of `ingest`, which takes the
// word lists from the environment only.
func brandConfigFromEnv(getenv config.Getenv) *brandConfig {
	return &brandConfig{Dictionary: getenv("PERISCOPE_BRAND_DICTIONARY"), TLDs: getenv("PERISCOPE_BRAND_TLDS")}
}

// addBrandIngesters registers the kinds of brand protection (docs/ingest.md).
func addBrandIngesters(m map[string]ingester) {
	for _, kind := range []string{brandingest.Certs, brandingest.CT, brandingest.Certstream, brandingest.Zone} {
		m[kind] = func(ctx context.Context, e env, st *store.Store, _ *config.Config, o ingestOpts, sources []string) error {
			return ingestBrand(ctx, e, o, kind, st, sources)
		}
	}
}

// ingestBrand loads sources of one brand-protection kind and prints the
// totals.
func ingestBrand(ctx context.Context, e env, o ingestOpts, kind string, st *store.Store, sources []string) error {
	mon, err := newBrandWatcher(brandConfigFromEnv(e.getenv), st, nil)
	if err != nil {
		return fmt.Errorf("ingest %s: %w", kind, err)
	}
	if err := mon.Reconcile(ctx); err != nil {
		return fmt.Errorf("ingest %s: load monitored domains: %w", kind, err)
	}
	b := brandingest.New(mon, st)
	b.HTTPClient = o.feeds
	prog := newProgress(e.stderr, 0) // the readers open their files (and logs) themselves
	b.Progress = func(s hostingest.Summary) { prog.update(hostCounts(s)) }
	read, _ := b.Source(kind)
	firstErr := eachSource(ctx, e.stderr, sources, func(src string) error {
		err := read(ctx, src)
		if err == nil {
			err = b.Flush(ctx)
		}
		return err
	})
	prog.done()
	b.Finish()
	o.report(e, brandReport(kind, len(sources), b, len(mon.Brands())), b.Skips)
	return firstErr
}

// brandReport is the shared summary of a brand-protection ingest:
// certificates (domains for zone files) read and stored, text between
// certificates skipped, and what the names did to the host index and the
// brand monitor.
func brandReport(kind string, sources int, b *brandingest.Run, brands int) ingestreport.Summary {
	r := hostReport(kind, sources, b.Sum)
	r.SkippedBy = nil
	r.Skipped = 0
	r.Skip("blocks of text between certificates", b.Sum.Skipped)
	r.Extra = map[string]int{
		"host_names_inserted": b.Hosts.Inserted, "host_names_updated": b.Hosts.Updated,
		"organization_links": b.Links, "monitored_domains": brands,
		"brand_matches": b.Match.Matched, "brand_findings_new": b.Match.Inserted, "brand_findings_updated": b.Match.Updated,
	}
	return r
}

// ctLogs splits the --ct-logs value.
func ctLogs(s string) []string {
	var out []string
	for _, u := range strings.Split(s, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}
