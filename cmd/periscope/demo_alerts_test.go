package main

import (
	"encoding/json"
	"flag"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// demoAlert is what the demo alert tests read of an alert.
type demoAlert struct {
	ID, Type, Severity, Title, Message string
	Count                              int
	Evidence                           map[string]any
}

// demoAlertKinds are the alerts (type/severity) the demo's changes raise.
var demoAlertKinds = []string{"compromised_credential/high", "new_open_port/high", "new_subdomain_discovered/medium", "new_vulnerability/critical"}

// kinds returns the alerts' type/severity, sorted.
func kinds(as []demoAlert) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Type+"/"+a.Severity)
	}
	slices.Sort(out)
	return out
}

// waitDemoAlerts polls the enterprise alerts of a demo server until every
// kind of demoAlertKinds is among them (the demo's changes come after its
// baseline), or fails after three minutes (a machine busy with other
// builds delays the alert workers). It polls every second and a half, within
// the key's 60 requests a minute, and waits out a 429 all the same.
func waitDemoAlerts(t *testing.T, s *server, key string) []demoAlert {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		status, body := s.do(t, "GET", "/api/v1/enterprise/alerts", key, "")
		if status == http.StatusTooManyRequests && time.Now().Before(deadline) {
			time.Sleep(5 * time.Second)
			continue
		}
		var got []demoAlert
		if err := json.Unmarshal(body, &got); err != nil || status != 200 {
			t.Fatalf("alerts: %d %s", status, body)
		}
		have := kinds(got)
		all := true
		for _, k := range demoAlertKinds {
			all = all && slices.Contains(have, k)
		}
		if all {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("alerts after three minutes: %v, want %v among them\nlog:\n%s", have, demoAlertKinds, s.stderr.String())
		}
		time.Sleep(1500 * time.Millisecond)
	}
}

// TestDemoAlerts checks that serve --demo's changes raise, through the real
// rules, the four alerts the README names for the demo enterprise
// organization (none for the other demo accounts), that the credential
// alert shows no clear email or password, and that a restart on the same
// database raises nothing again.
func TestDemoAlerts(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			dsn := storetest.DSN(t, engine)
			// A baseline longer than the demo's own load takes (its
			// records, ingested after the domain is added, are not news).
			flags := []string{"--demo", "--alert-baseline", "5s", "--alert-feed-interval", "1s"}
			s := startServer(t, dsn, flags...)
			keys := demoKeys(t, s.stdout.String())
			got := waitDemoAlerts(t, s, keys["enterprise"])
			for _, a := range got {
				if a.Type == "compromised_credential" {
					for _, secret := range []string{"jordan.sample901@", "taylor.test902@", "alex.admin903@", "Wave-demo-"} {
						if strings.Contains(a.Message, secret) || strings.Contains(a.Title, secret) || strings.Contains(mustJSON(t, a.Evidence), secret) {
							t.Errorf("credential alert shows %q: %+v", secret, a)
						}
					}
				}
			}
			if !slices.Equal(kinds(got), demoAlertKinds) {
				t.Fatalf("alerts %v, want %v", kinds(got), demoAlertKinds)
			}
			if status, body := s.do(t, "GET", "/api/v1/enterprise/alerts", keys["oem"], ""); status != 200 || strings.TrimSpace(string(body)) != "[]" {
				t.Errorf("OEM account's alerts: %d %s", status, body)
			}
			// The dark-web store's status is scraped beside the API's
			// metrics: the demo's ingests are indexed, nothing is staged.
			_, m := s.do(t, "GET", "/metrics", "", "")
			for _, line := range []string{"periscope_darkweb_staged_records 0", "periscope_darkweb_metrics_error 0", "periscope_darkweb_heads_behind_records ", "periscope_darkweb_head_answer_records_total "} {
				if !strings.Contains(string(m), "\n"+line) {
					t.Errorf("metrics lack %q", line)
				}
			}
			if err := s.stop(); err != nil {
				t.Fatal(err)
			}
			// Again on the same database: the changes are stored, so the
			// worker changes nothing and no alert repeats.
			s = startServer(t, dsn, flags...)
			keys = demoKeys(t, s.stdout.String())
			deadline := time.Now().Add(time.Minute)
			for !strings.Contains(s.stderr.String(), "demo changes loaded") {
				if time.Now().After(deadline) {
					t.Fatalf("demo changes not loaded again:\n%s", s.stderr.String())
				}
				time.Sleep(100 * time.Millisecond)
			}
			time.Sleep(3 * time.Second) // three feed intervals: a repeat would show by now
			again := waitDemoAlerts(t, s, keys["enterprise"])
			if !slices.Equal(kinds(again), demoAlertKinds) {
				t.Fatalf("alerts after a restart %v, want the same %v", kinds(again), demoAlertKinds)
			}
			for _, a := range again {
				if a.Count != 1 {
					t.Errorf("alert %s repeated after a restart: count %d", a.Title, a.Count)
				}
			}
		})
	}
}

// TestDemoAlertSettings: --demo shortens the alert baseline and feed
// interval only where neither the flag nor its environment variable was
// given.
func TestDemoAlertSettings(t *testing.T) {
	for _, c := range []struct {
		args                   []string
		env                    map[string]string
		baseline, feedInterval time.Duration
	}{
		{nil, nil, demoAlertBaseline, demoAlertFeed},
		{[]string{"--alert-baseline", "2h"}, nil, 2 * time.Hour, demoAlertFeed},
		{[]string{"--alert-feed-interval", "30s"}, nil, demoAlertBaseline, 30 * time.Second},
		{nil, map[string]string{"PERISCOPE_ALERT_BASELINE": "3m", "PERISCOPE_ALERT_FEED_INTERVAL": "2m"}, 3 * time.Minute, 2 * time.Minute},
	} {
		getenv := func(k string) string { return c.env[k] }
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		cfg, err := registerAlertFlags(fs, getenv)
		if err != nil {
			t.Fatal(err)
		}
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		demoAlertSettings(fs, getenv, cfg)
		if cfg.Baseline != c.baseline || cfg.FeedInterval != c.feedInterval {
			t.Errorf("%v %v: baseline %s, feed %s; want %s, %s", c.args, c.env, cfg.Baseline, cfg.FeedInterval, c.baseline, c.feedInterval)
		}
	}
}
