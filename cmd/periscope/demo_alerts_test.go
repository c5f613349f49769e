package main

import (
	"encoding/json"
	"flag"
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

// waitDemoAlerts polls the enterprise alerts of a demo server until it
// holds n alerts (the demo's changes come after its baseline), or fails
// after a minute.
func waitDemoAlerts(t *testing.T, s *server, key string, n int) []demoAlert {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		status, body := s.do(t, "GET", "/api/v1/enterprise/alerts", key, "")
		var got []demoAlert
		if err := json.Unmarshal(body, &got); err != nil || status != 200 {
			t.Fatalf("alerts: %d %s", status, body)
		}
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d alerts after a minute, want %d: %s\nlog:\n%s", len(got), n, body, s.stderr.String())
		}
		time.Sleep(200 * time.Millisecond)
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
			flags := []string{"--demo", "--alert-baseline", "1s", "--alert-feed-interval", "1s"}
			s := startServer(t, dsn, flags...)
			keys := demoKeys(t, s.stdout.String())
			got := waitDemoAlerts(t, s, keys["enterprise"], 4)
			var kinds []string
			for _, a := range got {
				kinds = append(kinds, a.Type+"/"+a.Severity)
				if a.Type == "compromised_credential" {
					for _, secret := range []string{"jordan.sample901@", "taylor.test902@", "alex.admin903@", "Wave-demo-"} {
						if strings.Contains(a.Message, secret) || strings.Contains(a.Title, secret) || strings.Contains(mustJSON(t, a.Evidence), secret) {
							t.Errorf("credential alert shows %q: %+v", secret, a)
						}
					}
				}
			}
			slices.Sort(kinds)
			want := []string{"compromised_credential/high", "new_open_port/high", "new_subdomain_discovered/medium", "new_vulnerability/critical"}
			if !slices.Equal(kinds, want) {
				t.Fatalf("alerts %v, want %v", kinds, want)
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
			time.Sleep(3 * time.Second) // two feed intervals: a repeat would show by now
			again := waitDemoAlerts(t, s, keys["enterprise"], 4)
			if len(again) != 4 {
				t.Fatalf("%d alerts after a restart, want the same 4", len(again))
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
