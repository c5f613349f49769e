package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// TestFirstHourEndToEnd follows docs/operations.md ("The first hour") on a
// fresh directory: periscope init, serve (which starts the vulnerability
// sync init turned on, here from a local copy of CISA's catalogue: tests
// never reach the network), an organization and its domain, a scan
// ingested (its lab-private host skipped), a first search, a first alert
// and an export.
func TestFirstHourEndToEnd(t *testing.T) {
	kev, err := os.ReadFile("../../internal/vuln/testdata/kev/known_exploited_vulnerabilities.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			var kevFetches atomic.Int64
			feed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				kevFetches.Add(1)
				w.Write(kev)
			}))
			defer feed.Close()
			tmp := t.TempDir()
			env := map[string]string{
				"XDG_DATA_HOME": filepath.Join(tmp, "data"), "HOME": filepath.Join(tmp, "home"),
				"PERISCOPE_VULN_KEV_URL":  feed.URL + "/known_exploited_vulnerabilities.json",
				"PERISCOPE_VULN_EPSS_URL": "off", "PERISCOPE_VULN_EXPLOITDB_URL": "off",
				"PERISCOPE_VULN_OSV_URL": "off", "PERISCOPE_VULN_NVD_URL": "off",
				// The feed is on loopback.
				"PERISCOPE_ALLOW_PRIVATE_TARGETS": "true",
			}
			dsn := storetest.DSN(t, engine)
			if engine == "sqlite" {
				dsn = filepath.Join(tmp, "periscope.db") // a fresh directory
			}

			// 1. periscope init: the account, its key (printed once), the
			// key files, the sync turned on.
			out, _, err := runCLIEnv(t, env, "init", "--database", dsn)
			if err != nil {
				t.Fatalf("init: %v\n%s", err, out)
			}
			m := regexp.MustCompile(`(?m)^  API key +([0-9a-f]{64})$`).FindStringSubmatch(out)
			if m == nil || !strings.Contains(out, "vulnerability sync every 6h") {
				t.Fatalf("init printed:\n%s", out)
			}
			key := m[1]
			for _, k := range []string{"darkweb", "secrets"} {
				p := filepath.Join(tmp, "periscope-"+k+".key")
				if engine != "sqlite" {
					p = filepath.Join(tmp, "data", "periscope", k+".key")
				}
				if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 || !strings.Contains(out, p) {
					t.Fatalf("%s key %s: %v %v (init said:\n%s)", k, p, fi, err, out)
				}
			}
			if _, _, err := runCLIEnv(t, env, "init", "--database", dsn); err == nil || !strings.Contains(err.Error(), "already has 1 account") {
				t.Fatalf("init again: %v", err)
			}

			// 2. serve: it says the sync schedule and runs the first now.
			s := startServerEnv(t, func(k string) string { return env[k] }, dsn, "--alert-baseline", "1s")
			waitFor(t, "the sync schedule", func() bool {
				return strings.Contains(s.stdout.String(), "vulnerability sync: every 6h (set by periscope init), the first now: CISA KEV\n")
			})
			if strings.Contains(s.stdout.String(), "no account yet") {
				t.Fatalf("serve printed the next steps of a new database:\n%s", s.stdout.String())
			}
			waitFor(t, "the first KEV sync", func() bool { return kevFetches.Load() > 0 })

			// 3. An organization and its domain: the answer says the
			// baseline.
			status, body := s.do(t, "POST", "/api/v1/enterprise/organizations", key, `{"name":"First Hour"}`)
			var org struct{ ID string }
			json.Unmarshal(body, &org)
			if status != 201 || org.ID == "" {
				t.Fatalf("create organization: %d %s", status, body)
			}
			status, body = s.do(t, "POST", "/api/v1/enterprise/organizations/"+org.ID+"/domains", key, `{"domain":"periscope-firsthour.com"}`)
			if status != 201 || !strings.Contains(string(body), `"alert_baseline":{"seconds":1,`) {
				t.Fatalf("add domain: %d %s", status, body)
			}

			// 4. A scan from a lab: the private host is skipped, and said.
			scan := func(ports ...string) string {
				t.Helper()
				b := strings.Builder{}
				b.WriteString(`{"host":"10.0.0.7","ip":"10.0.0.7","port":22,"protocol":"tcp","tls":false}` + "\n")
				for _, p := range ports {
					b.WriteString(`{"host":"vpn.periscope-firsthour.com","ip":"203.0.113.10","port":` + p + `,"protocol":"tcp","tls":false}` + "\n")
				}
				f := writeFile(t, "naabu.jsonl", b.String())
				out, stderr, err := runCLIEnv(t, env, "ingest", "naabu", f, "--database", dsn)
				if err != nil || !strings.HasPrefix(stderr, "database: ") {
					t.Fatalf("ingest: %v\n%s\n%s", err, out, stderr)
				}
				return out
			}
			if out := scan("443"); !strings.Contains(out, "skipped 1: 1 private address") {
				t.Fatalf("ingest printed:\n%s", out)
			}

			// 5. A first search.
			status, body = s.do(t, "GET", "/api/v1/domain/periscope-firsthour.com/subdomains", key, "")
			if status != 200 || !strings.Contains(string(body), "vpn.periscope-firsthour.com") {
				t.Fatalf("subdomains: %d %s", status, body)
			}

			// 6. A first alert: past the baseline, a new port.
			time.Sleep(1100 * time.Millisecond)
			scan("443", "3389")
			var alerts []struct{ Type, Host string }
			waitFor(t, "the new-port alert", func() bool {
				status, body = s.do(t, "GET", "/api/v1/enterprise/alerts?org="+org.ID, key, "")
				alerts = nil
				json.Unmarshal(body, &alerts)
				return status == 200 && len(alerts) > 0
			})
			if len(alerts) != 1 || alerts[0].Type != "new_open_port" || alerts[0].Host != "vpn.periscope-firsthour.com" {
				t.Fatalf("alerts: %s", body)
			}
			if err := s.stop(); err != nil {
				t.Fatal(err)
			}

			// 7. An export, which reads the database it names.
			out, stderr, err := runCLIEnv(t, env, "export", "hosts", "--domain", "periscope-firsthour.com", "--database", dsn)
			if err != nil || !strings.Contains(out, `"host":"vpn.periscope-firsthour.com"`) || strings.Contains(out, "10.0.0.7") || !strings.HasPrefix(stderr, "database: ") {
				t.Fatalf("export: %v\n%s\n%s", err, out, stderr)
			}
		})
	}
}

// waitFor polls cond for up to 30 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestFreshServePrintsNextSteps: serve on a new database without --demo
// says what to do next, and that the vulnerability sync is off until init
// or --sync-interval turns it on.
func TestFreshServePrintsNextSteps(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			s := startServer(t, storetest.DSN(t, engine))
			waitFor(t, "the next steps", func() bool { return strings.Contains(s.stdout.String(), "Or try everything on demo data") })
			out := s.stdout.String()
			for _, want := range []string{"vulnerability sync: off", "no account yet", "periscope init --database ", "periscope key create", "periscope ingest nmap scan.xml"} {
				if !strings.Contains(out, want) {
					t.Errorf("serve does not say %q:\n%s", want, out)
				}
			}
			s.stop()
		})
	}
}
