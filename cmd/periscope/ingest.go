package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/cli"
	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/darkwebingest"
	"github.com/periscope-oss/periscope/internal/ingestreport"
	"github.com/periscope-oss/periscope/internal/store"
)

// ingester loads one kind of input into the store.
type ingester func(ctx context.Context, e env, st *store.Store, cfg *config.Config, o ingestOpts, sources []string) error

// ingestOpts are what every kind's ingest shares: how it prints its
// summary (ingestreport: text, or JSON with --json) and the logger that
// writes each skipped record's position at --log-level debug.
type ingestOpts struct {
	json bool
	log  *slog.Logger
	// feeds downloads the sources given as URLs (feedClient).
	feeds *http.Client
}

// report prints a kind's summary on stdout and, at --log-level debug,
// each listed skipped record with its position and reason.
func (o ingestOpts) report(e env, s ingestreport.Summary, skips []string) {
	for _, sk := range skips {
		o.log.Debug("skipped", "kind", s.Kind, "record", sk)
	}
	s.Write(e.stdout, o.json)
}

// ingesters maps the kind names of docs/ingest.md to their loaders. Each
// capability adds its kinds here.
func ingesters() map[string]ingester {
	m := map[string]ingester{}
	// <ingest:vuln>
	addVulnIngesters(m)
	// <ingest:hosts>
	addHostIngesters(m)
	// <ingest:brand>
	addBrandIngesters(m)
	// <ingest:whois>
	addWhoisIngesters(m)
	// <ingest:darkweb>
	addDarkwebIngesters(m)
	// <ingest:tor>
	addTorIngesters(m)
	return m
}

// ingestCacheMiB is SQLite's page cache per connection, for every file,
// during an ingest or a key rotation (the service keeps 64 MiB, and 2 MiB
// for the dark-web file): a bulk writer touches index pages all over the
// file, and a cache that holds them reads and spills less.
const ingestCacheMiB = 256

func cmdIngest(ctx context.Context, e env, args []string) error {
	kinds := ingesters()
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	if len(args) > 0 && cli.IsHelp(args[0]) {
		fmt.Fprint(e.stdout, ingestUsage())
		return cli.ErrHelp
	}
	if len(args) == 0 {
		return cli.Usagef("ingest", "give the kind first (kinds: %s)", strings.Join(names, ", "))
	}
	if strings.HasPrefix(args[0], "-") {
		return cli.Usagef("ingest", "give the kind before the flags, not %q (kinds: %s)", args[0], strings.Join(names, ", "))
	}
	kind, args := args[0], args[1:]
	in, ok := kinds[kind]
	if !ok {
		return cli.Usagef("ingest", "unknown kind %q (kinds: %s)", kind, strings.Join(names, ", "))
	}
	if darkwebingest.IsKind(kind) {
		return ingestDarkweb(ctx, e, kind, args)
	}
	var cfg config.Config
	fs := cli.NewFlags(e.stdout, "ingest "+kind)
	cli.SetUsage(fs, ingestKindUsage(kind))
	cfg.Register(fs, e.getenv)
	registerHostIngestFlags(kind, fs, &cfg, e.getenv)
	if err := cfg.RegisterAllowPrivate(fs, e.getenv); err != nil {
		return err
	}
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the ingest to this file (for benchmarks)")
	asJSON := fs.Bool("json", false, "print the summary as one JSON object on stdout (for scripts; docs/ingest.md)")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return cli.Usagef("ingest "+kind, "give at least one file, directory or URL")
	}
	st, err := cli.Open(ctx, cfg.Database, cli.Opening{Log: e.stderr, LogLevel: cfg.LogLevel, Options: []store.Option{store.PageCacheMiB(ingestCacheMiB)}})
	if err != nil {
		return err
	}
	defer st.Close()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return fmt.Errorf("ingest: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("ingest: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	// A server that never answers must not hang the ingest (a minute for
	// the response to start); a long download may take as long as it needs.
	feeds := feedClient(cfg.Outbound.AllowPrivateTargets, time.Minute)
	feeds.Timeout = 0
	return in(ctx, e, st, &cfg, ingestOpts{json: *asJSON, log: newLogger(e.stderr, cfg.LogLevel), feeds: feeds}, pos)
}
