package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/ingestreport"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/tor"
	"github.com/periscope-oss/periscope/internal/torstore"
)

// The Tor exit list behind /nexus/tor/check-ip: `periscope ingest
// tor-exits FILE...` loads the Tor Project's lists (exit-addresses or the
// bulk list), and serve's --tor-sync-interval keeps the list current from
// --tor-exits-url through the egress dialer.

//go:embed demodata/tor
var torDemoFS embed.FS

// torConfig holds serve's Tor exit list flags.
type torConfig struct {
	SyncInterval time.Duration // 0: no sync
	URL          string
}

func registerTorFlags(fs *flag.FlagSet, getenv config.Getenv) (*torConfig, error) {
	c := &torConfig{URL: tor.DefaultURL}
	if v := getenv("PERISCOPE_TOR_SYNC_INTERVAL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("PERISCOPE_TOR_SYNC_INTERVAL: want a duration such as 1h, got %q", v)
		}
		c.SyncInterval = d
	}
	if v := getenv("PERISCOPE_TOR_EXITS_URL"); v != "" {
		c.URL = v
	}
	fs.DurationVar(&c.SyncInterval, "tor-sync-interval", c.SyncInterval,
		"how often to download the Tor Project's exit list for /nexus/tor/check-ip; 0 disables (env PERISCOPE_TOR_SYNC_INTERVAL)")
	fs.StringVar(&c.URL, "tor-exits-url", c.URL, "where the Tor exit list sync downloads the list (env PERISCOPE_TOR_EXITS_URL)")
	return c, nil
}

// setupTor adds the Tor exit list sync to serve's workers when its
// interval is set.
func setupTor(svc *services) error {
	c := svc.tor
	if c == nil || c.SyncInterval <= 0 {
		return nil
	}
	if c.SyncInterval < time.Minute {
		return errors.New("--tor-sync-interval: at least 1m (the Tor Project publishes the list about hourly)")
	}
	client := feedClient(svc.cfg.Outbound.AllowPrivateTargets, time.Minute)
	sy := &tor.Syncer{Store: torstore.New(svc.store), Client: client, URL: c.URL, Interval: c.SyncInterval, Log: svc.log}
	svc.workers = append(svc.workers, worker{name: "tor-sync", run: sy.Run})
	return nil
}

func addTorIngesters(m map[string]ingester) {
	m["tor-exits"] = ingestTorExits
}

// ingestTorExits loads Tor exit lists (files in either of the Tor
// Project's formats). Every exit of a list is stored: the new ones count
// as inserted, the others as updated (their seen times folded in).
func ingestTorExits(ctx context.Context, e env, st *store.Store, _ *config.Config, o ingestOpts, sources []string) error {
	ts := torstore.New(st)
	start := time.Now()
	rep := ingestreport.Summary{Kind: "tor-exits", Sources: len(sources)}
	defer func() {
		rep.Duration = time.Since(start)
		o.report(e, rep, nil)
	}()
	for _, src := range sources {
		f, err := os.Open(src)
		if err != nil {
			return fmt.Errorf("ingest tor-exits: %w", err)
		}
		exits, err := tor.Read(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("ingest tor-exits: %s: %w", src, err)
		}
		before, err := ts.Count(ctx)
		if err != nil {
			return fmt.Errorf("ingest tor-exits: %w", err)
		}
		if err := ts.Load(ctx, src, exits); err != nil {
			return fmt.Errorf("ingest tor-exits: %w", err)
		}
		after, err := ts.Count(ctx)
		if err != nil {
			return fmt.Errorf("ingest tor-exits: %w", err)
		}
		rep.Read += len(exits)
		rep.Inserted += after - before
		rep.Updated += len(exits) - (after - before)
	}
	return nil
}

// loadTorDemo loads the bundled exit list (see demodata/tor/README.md).
func loadTorDemo(ctx context.Context, svc *services) error {
	f, err := torDemoFS.Open("demodata/tor/exit-addresses_2024-03-12.txt")
	if err != nil {
		return err
	}
	defer f.Close()
	exits, err := tor.Read(f)
	if err != nil {
		return fmt.Errorf("tor demo: %w", err)
	}
	return torstore.New(svc.store).Load(ctx, "demo: exit-addresses_2024-03-12", exits)
}
