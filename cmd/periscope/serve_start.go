package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/store"
)

const serveUsage = `usage: periscope serve [--demo] [--addr 127.0.0.1:8080] [--database ./periscope.db] [flags]

Runs the API (FullHunt's routes under /api/v1) and the background workers
until interrupted. --demo creates three demo accounts,
prints their keys and loads the bundled demo data. On a new database
without --demo it prints the next steps ("periscope init" sets one up).
Every flag has a PERISCOPE_* environment variable; docs/operations.md
explains them.`

// applySettings reads what `periscope init` chose into cfg where no flag or
// environment variable said otherwise (the vulnerability sync interval),
// and reports whether the database is new to serve: no account yet.
func applySettings(ctx context.Context, st *store.Store, cfg *config.Config, syncGiven bool) (fresh bool, err error) {
	if !syncGiven && !cfg.Demo {
		v, ok, err := st.Setting(ctx, store.SettingSyncInterval)
		if err != nil {
			return false, err
		}
		if ok {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return false, fmt.Errorf("the stored setting %s is %q, not a duration: run \"periscope init\" again on a new database or give --sync-interval", store.SettingSyncInterval, v)
			}
			cfg.SyncInterval = d
		}
	}
	accts, err := st.Accounts(ctx)
	if err != nil {
		return false, err
	}
	return len(accts) == 0, nil
}

// printSyncSchedule says at start whether and how often the vulnerability
// feeds are synced, and who decided.
func printSyncSchedule(w io.Writer, cfg *config.Config, given bool) {
	from := "set by periscope init"
	if given {
		from = "--sync-interval"
	}
	if cfg.SyncInterval <= 0 {
		fmt.Fprintln(w, "vulnerability sync: off (\"periscope init\" or --sync-interval 6h turns it on; \"periscope ingest nvd|kev|epss|exploitdb|osv\" loads files by hand)")
		return
	}
	fmt.Fprintf(w, "vulnerability sync: every %s (%s), the first now: %s\n", shortDuration(cfg.SyncInterval), from, syncSources(cfg.VulnSync))
}

// syncSources names the feeds the sync reads.
func syncSources(v config.VulnSync) string {
	var names []string
	for _, s := range []struct{ name, url string }{{"CISA KEV", v.KEVURL}, {"FIRST EPSS", v.EPSSURL}, {"Exploit-DB", v.ExploitDBURL}, {"OSV", v.OSVURL}, {"NVD", v.NVDURL}} {
		if s.url != "" {
			names = append(names, s.name)
		}
	}
	if len(names) == 0 {
		return "no feed (every --vuln-*-url is empty)"
	}
	out := names[0]
	for _, n := range names[1:] {
		out += ", " + n
	}
	return out
}

// printNextSteps tells the operator of a new database what to do next.
func printNextSteps(w io.Writer, dsn string) {
	db := ""
	if dsn != "./periscope.db" && dsn != "periscope.db" {
		db = " --database " + shellQuote(dsn)
	}
	fmt.Fprintf(w, `
This database has no account yet. Next steps (docs/operations.md, "The first hour"):
  periscope init%[1]s
      the first account and its API key, the key files, the vulnerability sync on
      (then start serve again: it reads the sync setting at start)
  or by hand:
  periscope account create --company NAME --email EMAIL --enterprise%[1]s
  periscope key create --account NAME%[1]s
Then load your data (while serve runs, from another terminal):
  periscope ingest nmap scan.xml%[1]s        # "periscope ingest --help" lists every kind
  periscope ingest kev known_exploited_vulnerabilities.json%[1]s
Or try everything on demo data first: periscope serve --demo --database demo.db

`, db)
}

// shortDuration writes d as an operator would: 6h, 90m, 1h30m.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
