package main

import (
	"context"
	"embed"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/darkwebingest"
	"github.com/periscope-oss/periscope/internal/scan"
)

// The demo's alert settings when neither flag nor environment gives one:
// a baseline short enough that the demo's changes (below) alert seconds
// after the start, and a feed interval that reads them soon after.
const (
	demoAlertBaseline = 10 * time.Second
	demoAlertFeed     = 5 * time.Second
)

// demoChangesFS holds the demo's changes (see demodata/changes/README.md).
//
//go:embed demodata/changes
var demoChangesFS embed.FS

// demoAlertSettings gives serve --demo its short alert baseline and feed
// interval, unless --alert-baseline, --alert-feed-interval or their
// environment variables were given (fs is parsed).
func demoAlertSettings(fs *flag.FlagSet, getenv config.Getenv, c *alertsConfig) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["alert-baseline"] && getenv("PERISCOPE_ALERT_BASELINE") == "" {
		c.Baseline = demoAlertBaseline
	}
	if !set["alert-feed-interval"] && getenv("PERISCOPE_ALERT_FEED_INTERVAL") == "" {
		c.FeedInterval = demoAlertFeed
	}
}

// demoChanges is serve --demo's worker that makes news for the demo
// enterprise organization's example.com once its baseline is over: a first
// observation of vpn.example.com at once, then, after the baseline, the
// next scan (port 3389 opened on it; git.example.com appears, running a
// product a critical CVE of the bundled NVD sample names) and credentials
// of a new breach under the domain. They go through the same ingest paths
// as `periscope ingest`, and the alert rules raise new_open_port,
// new_subdomain_discovered, new_vulnerability and compromised_credential
// alerts from them. Loading again (a restart on the same database, or
// another instance taking the lease after it) changes nothing, so no alert
// is raised twice.
func demoChanges(svc *services) worker {
	return worker{name: "demo-changes", run: func(ctx context.Context) error {
		if _, err := demoHosts(ctx, svc, "before.ndjson"); err != nil {
			return err
		}
		t := time.NewTimer(svc.alerts.Baseline + 2*time.Second) // timestamps are whole seconds
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		n, err := demoHosts(ctx, svc, "after.ndjson")
		if err != nil {
			return err
		}
		added, err := demoCredentials(ctx, svc)
		if err != nil {
			return err
		}
		svc.log.Info("demo changes loaded: the enterprise account's alerts follow", "hosts_changed", n, "credentials_added", added)
		return nil
	}}
}

// demoHosts ingests one bundled host file (native NDJSON) and returns how
// many hosts it inserted or changed.
func demoHosts(ctx context.Context, svc *services, name string) (int, error) {
	f, err := demoChangesFS.Open("demodata/changes/" + name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sum, err := svc.hosts.Ingest(ctx, scan.Native, name, f, nil)
	if err != nil {
		return 0, fmt.Errorf("demo changes: %s: %w", name, err)
	}
	return sum.Inserted + sum.Updated, nil
}

// demoCredentials ingests the bundled combolist of the demo's new breach
// and returns how many records it added.
func demoCredentials(ctx context.Context, svc *services) (int, error) {
	if svc.dw == nil {
		return 0, nil
	}
	b, err := demoChangesFS.ReadFile("demodata/changes/combo.txt")
	if err != nil {
		return 0, err
	}
	dir, err := os.MkdirTemp("", "periscope-demo-changes-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "combo.txt")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return 0, err
	}
	r := darkwebingest.New(svc.dw)
	if err := r.Source(ctx, "combolist", path, darkweb.Options{Breach: "ExampleForum2026", BreachDate: "2026-10-01"}); err != nil {
		return 0, fmt.Errorf("demo changes: %w", err)
	}
	return r.Summary().Added, nil
}
