package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hostgen"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/scan"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
	"github.com/periscope-oss/periscope/internal/wire"
)

// The demo loads the bundled scanner outputs and the generated hosts, so
// the documented demo domains answer on every engine.
func TestServeDemoHosts(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			s := startServer(t, storetest.DSN(t, engine), "--demo")
			defer s.stop()
			s.client.Transport = apitest.Validator(t, fetchOpenAPI(t, s.base)).Transport(http.DefaultTransport)
			keys := demoKeys(t, s.stdout.String())
			status, body := s.do(t, "GET", "/api/v1/domain/megacorp.com/subdomains", keys["free"], "")
			var subs struct {
				Hosts    []string `json:"hosts"`
				Metadata struct {
					AllResultsCount int `json:"all_results_count"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(body, &subs); status != 200 || err != nil || len(subs.Hosts) < 100 || subs.Metadata.AllResultsCount != len(subs.Hosts) {
				t.Fatalf("demo subdomains: %d %v %d hosts", status, err, len(subs.Hosts))
			}
			for _, h := range subs.Hosts {
				if !strings.HasSuffix(h, ".megacorp.com") && h != "megacorp.com" {
					t.Fatalf("subdomain %q outside megacorp.com", h)
				}
			}
			// A real nmap sample: scanme.nmap.org with its open ports.
			status, body = s.do(t, "GET", "/api/v1/host/scanme.nmap.org", keys["free"], "")
			if status != 200 || !strings.Contains(string(body), `"network_ports":[22,`) {
				t.Fatalf("demo host: %d %s", status, body)
			}
			status, body = s.do(t, "POST", "/api/v1/global/search", keys["free"], `{"product":"nginx","country":"DE"}`)
			if status != 200 || !strings.Contains(string(body), `"country_code":"DE"`) {
				t.Fatalf("demo search: %d %.300s", status, body)
			}
			// Every curl line the demo prints answers 2xx.
			if !strings.Contains(s.stdout.String(), "/api/v1/domain/megacorp.com/subdomains") {
				t.Fatalf("demo curls missing: %s", s.stdout.String())
			}
		})
	}
}

// A missing MMDB file stops serve at start with one clear line.
func TestServeMissingMMDB(t *testing.T) {
	db := storetest.DSN(t, "sqlite")
	_, _, err := runCLI(t, "serve", "--database", db, "--addr", "127.0.0.1:0", "--geoip-city", "/nonexistent/city.mmdb")
	if err == nil || !strings.Contains(err.Error(), "--geoip-city /nonexistent/city.mmdb") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("want a clear start-up error, got %v", err)
	}
}

// gen-hosts → ingest hosts → export hosts → ingest hosts into a second
// database gives the same export: data moves between instances, and
// re-ingesting changes nothing.
func TestIngestExportRoundTrip(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) { testIngestExportRoundTrip(t, engine) })
	}
}

func testIngestExportRoundTrip(t *testing.T, engine string) {
	dir := t.TempDir()
	gen := filepath.Join(dir, "gen.ndjson")
	writeGenerated(t, gen, 3000, 7, 1790000000)
	if n := countLines(t, gen); n != 3000 {
		t.Fatalf("the generator wrote %d lines", n)
	}
	a, b := storetest.DSN(t, engine), storetest.DSN(t, "sqlite")
	out, errOut, err := runCLI(t, "ingest", "hosts", "--database", a, gen)
	if err != nil || !strings.Contains(out, "read 3000, stored 3000 (inserted 3000, updated 0), unchanged 0") {
		t.Fatalf("ingest: %v %s", err, out)
	}
	// A first load builds the indexes it does not read at its end.
	if !strings.Contains(errOut, "building the indexes deferred by a first load: hosts_ipkey, ledger_host_ts, ledger_domain_ts") {
		t.Fatalf("a first load deferred no index: %s", errOut)
	}
	// ... and enters the posting rows it staged.
	if !strings.Contains(errOut, "indexed the terms of a first load at its end: ") {
		t.Fatalf("a first load staged no posting rows: %s", errOut)
	}
	checkHostIndexes(t, a)
	out, errOut, err = runCLI(t, "ingest", "hosts", "--database", a, gen)
	if err != nil || !strings.Contains(out, "read 3000, stored 0 (inserted 0, updated 0), unchanged 3000") {
		t.Fatalf("re-ingest is not idempotent: %v %s", err, out)
	}
	if strings.Contains(errOut, "deferred") || strings.Contains(errOut, "first load") {
		t.Fatalf("a load on stored hosts deferred indexes or staged postings: %s", errOut)
	}
	// The indexes of a load that died are built by the next command.
	st, err := store.Open(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wire.DeferHostIndexes(context.Background(), st); err != nil {
		t.Fatal(err) // hosts are stored: nothing deferred
	}
	if names, err := st.DeferIndexes(context.Background(), "hosts_ipkey", "ledger_host_ts"); err != nil || len(names) != 2 {
		t.Fatalf("DeferIndexes = %v, %v", names, err)
	}
	if _, err := st.Exec(context.Background(), `UPDATE deferred_indexes SET owner = 'elsewhere.invalid:1', touched = 0`); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, errOut, err := runCLI(t, "account", "list", "--database", a); err != nil ||
		!strings.Contains(errOut, "built the indexes an interrupted ingest had deferred: hosts_ipkey, ledger_host_ts") {
		t.Fatalf("account list after a dead load: %v %s", err, errOut)
	}
	checkHostIndexes(t, a)
	exp1, exp2 := filepath.Join(dir, "a.ndjson"), filepath.Join(dir, "b.ndjson")
	if _, _, err := runCLI(t, "export", "hosts", "--database", a, "--out", exp1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "ingest", "hosts", "--database", b, exp1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "export", "hosts", "--database", b, "--out", exp2); err != nil {
		t.Fatal(err)
	}
	x, _ := os.ReadFile(exp1)
	y, _ := os.ReadFile(exp2)
	if len(x) == 0 || string(x) != string(y) {
		t.Fatalf("export of the copy differs (%d vs %d bytes)", len(x), len(y))
	}
	// --domain exports the domain and the hosts below it only.
	out, _, err = runCLI(t, "export", "hosts", "--database", a, "--domain", "megacorp.com")
	if err != nil || out == "" {
		t.Fatalf("export --domain: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var h struct{ Domain string }
		if err := json.Unmarshal([]byte(line), &h); err != nil || h.Domain != "megacorp.com" {
			t.Fatalf("export --domain megacorp.com wrote %.200s", line)
		}
	}
	for _, bad := range [][]string{
		{"export"}, {"export", "hosts", "--database", a, "--domain", "http://x/"},
	} {
		if _, _, err := runCLI(t, bad...); !oneLineError(err) {
			t.Errorf("%v: want a one-line error, got %v", bad, err)
		}
	}
}

// writeGenerated writes count hosts of internal/hostgen (seed, reference
// time now) to path as native NDJSON, as `periscope-bench gen-hosts` does.
func writeGenerated(t *testing.T, path string, count int, seed uint64, now int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := scan.NewEncoder(f)
	if err := hostgen.New(count, seed, now).All(func(h host.Host) error { return enc.Encode(h) }); err != nil {
		t.Fatal(err)
	}
	if err := enc.Flush(); err != nil {
		t.Fatal(err)
	}
}

func countLines(t *testing.T, path string) int {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		n++
	}
	return n
}

// A URL source is fetched and ingested; an HTTP error is a clear error.
// The source is on loopback, so the ingest needs --allow-private-targets.
func TestIngestHostsFromURL(t *testing.T) {
	body := `{"host":"www.example.com","ip_address":"93.184.215.14"}` + "\n" + `{"host":"api.example.com"}` + "\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/hosts.ndjson" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, body)
	}))
	defer srv.Close()
	db := storetest.DSN(t, "sqlite")
	out, _, err := runCLI(t, "ingest", "hosts", "--allow-private-targets", "--database", db, srv.URL+"/hosts.ndjson")
	if err != nil || !strings.Contains(out, "read 2, stored 2 (inserted 2,") {
		t.Fatalf("ingest from URL: %v %s", err, out)
	}
	if _, _, err := runCLI(t, "ingest", "hosts", "--allow-private-targets", "--database", db, srv.URL+"/missing"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("a 404 source: %v", err)
	}
}

// checkHostIndexes fails unless the database has every index a bulk load
// may defer, and no deferral is left.
func checkHostIndexes(t *testing.T, dsn string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var n int
	if err := st.QueryRow(ctx, `SELECT COUNT(*) FROM deferred_indexes`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("deferred_indexes holds %d rows (%v)", n, err)
	}
	q := `SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name IN ('hosts_ipkey', 'ledger_host_ts', 'ledger_domain_ts')`
	if st.Engine() == "postgres" {
		q = `SELECT COUNT(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname IN ('hosts_ipkey', 'ledger_host_ts', 'ledger_domain_ts')`
	}
	if err := st.QueryRow(ctx, q).Scan(&n); err != nil || n != 3 {
		t.Fatalf("%d of the 3 deferrable indexes exist (%v)", n, err)
	}
}

// --posting-cache-mib, else PERISCOPE_POSTING_CACHE_MIB, sizes the posting
// cache of the host store the API reads (hoststore's default without
// either): a count with a facet and a global search of two filters fill
// it, and with 0 it holds nothing.
func TestServePostingCacheFlag(t *testing.T) {
	if config.DefaultPostingCacheMiB != hoststore.DefaultPostingCacheMiB {
		t.Fatalf("config's default posting cache is %d MiB, hoststore's %d", config.DefaultPostingCacheMiB, hoststore.DefaultPostingCacheMiB)
	}
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			dsn := storetest.DSN(t, engine)
			file := filepath.Join(t.TempDir(), "hosts.ndjson")
			writeGenerated(t, file, 300, 1, 1795000000)
			if _, _, err := runCLI(t, "ingest", "hosts", "--database", dsn, file); err != nil {
				t.Fatal(err)
			}
			if _, _, err := runCLI(t, "account", "create", "--database", dsn, "--company", "Cache", "--email", "c@cache.test", "--credits", "1000"); err != nil {
				t.Fatal(err)
			}
			key, _, err := runCLI(t, "key", "create", "--database", dsn, "--account", "Cache", "--name", "cache")
			if err != nil {
				t.Fatal(err)
			}
			key = strings.TrimSpace(key)
			for _, tc := range []struct {
				env    string
				args   []string
				budget int
			}{
				{"", nil, hoststore.DefaultPostingCacheMiB << 20},
				{"", []string{"--posting-cache-mib", "3"}, 3 << 20},
				{"0", nil, 0},
				{"0", []string{"--posting-cache-mib", "5"}, 5 << 20},
			} {
				getenv := func(k string) string {
					if k == "PERISCOPE_POSTING_CACHE_MIB" {
						return tc.env
					}
					return ""
				}
				s := startServerEnv(t, getenv, dsn, tc.args...)
				if got := metricValue(t, s.base, "periscope_host_posting_cache_budget_bytes"); got != float64(tc.budget) {
					t.Errorf("env %q, flags %v: budget %v, want %d", tc.env, tc.args, got, tc.budget)
				}
				if status, body := s.do(t, "GET", "/api/v1/hosts/count?query=port:443&facets=country:3", key, ""); status != 200 {
					t.Fatalf("count: %d %s", status, body)
				}
				if status, body := s.do(t, "POST", "/api/v1/global/search", key, `{"port":443,"product":"nginx"}`); status != 200 {
					t.Fatalf("search: %d %s", status, body)
				}
				used := metricValue(t, s.base, "periscope_host_posting_cache_bytes")
				fields := metricValue(t, s.base, "periscope_host_posting_cache_fields")
				terms := metricValue(t, s.base, "periscope_host_posting_cache_terms")
				if tc.budget > 0 && (used == 0 || fields != 1 || terms == 0) || tc.budget == 0 && used+fields+terms != 0 {
					t.Errorf("env %q, flags %v: the cache holds %v bytes, %v fields, %v terms", tc.env, tc.args, used, fields, terms)
				}
				if err := s.stop(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// A first load that died leaves its staged posting rows and its deferred
// indexes; the next command builds the one and indexes the other, so the
// load's hosts are found by their terms.
func TestDeadLoadStageEnteredOnOpen(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			dsn := storetest.DSN(t, engine)
			if _, _, err := runCLI(t, "init", "--database", dsn); err != nil {
				t.Fatal(err)
			}
			st, err := store.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			names, err := wire.DeferHostIndexes(ctx, st)
			if err != nil || len(names) == 0 {
				t.Fatalf("DeferHostIndexes on an empty index = %v, %v", names, err)
			}
			hs := hoststore.New(st)
			load := hoststore.NewHostLoad()
			load.StagePostings()
			w, err := hs.BeginHosts(ctx, load)
			if err != nil {
				t.Fatal(err)
			}
			b, err := hs.PrepareHosts([]host.Host{
				{Host: "a.dead.example", NetworkPorts: []int{8443}, LastSeen: 2},
				{Host: "b.dead.example", NetworkPorts: []int{8443}, LastSeen: 2},
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Upsert(ctx, b); err != nil {
				t.Fatal(err)
			}
			if err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			count := func(q string) int {
				t.Helper()
				var n int
				if err := st.QueryRow(ctx, q).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			if count(`SELECT COUNT(*) FROM host_postings`) != 0 || count(`SELECT COUNT(*) FROM host_postings_stage`) == 0 {
				t.Fatal("the load's posting rows were not staged")
			}
			// The load dies: its deferral's owner is gone.
			if _, err := st.Exec(ctx, `UPDATE deferred_indexes SET owner = 'elsewhere.invalid:1', touched = 0`); err != nil {
				t.Fatal(err)
			}
			st.Close()
			_, errOut, err := runCLI(t, "account", "list", "--database", dsn)
			if err != nil || !strings.Contains(errOut, "indexed the") || !strings.Contains(errOut, "posting rows an interrupted ingest had staged") {
				t.Fatalf("account list after a dead load: %v %s", err, errOut)
			}
			st, err = store.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if n := count(`SELECT COUNT(*) FROM host_postings_stage`); n != 0 {
				t.Fatalf("%d staged rows left", n)
			}
			if n := count(`SELECT n FROM host_postings WHERE term = 'port:8443'`); n != 2 {
				t.Fatalf("port:8443 holds %d hosts, want 2", n)
			}
		})
	}
}
