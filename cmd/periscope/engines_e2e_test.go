package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// engineIngests are the project's copies of the shared public data (each
// directory's README names the sources and licences) by ingest kind: every
// file the ingest kinds read.
var engineIngests = []struct {
	kind  string
	globs []string
	args  []string
}{
	{"nvd", []string{"../../internal/vuln/testdata/nvd/*.json"}, nil},
	{"kev", []string{"../../internal/vuln/testdata/kev/known_exploited_vulnerabilities.json", "../../internal/vuln/testdata/kev/*.csv.gz"}, nil},
	{"epss", []string{"../../internal/vuln/testdata/epss/*.csv"}, nil},
	{"exploitdb", []string{"../../internal/vuln/testdata/exploitdb/*.csv", "../../internal/vuln/testdata/exploitdb-gpl/*.csv"}, nil},
	{"osv", []string{"../../internal/vuln/testdata/osv/go", "../../internal/vuln/testdata/osv/ghsa"}, nil},
	{"nmap", []string{"../../internal/scan/testdata/*.xml", "../../internal/ledger/testdata/*.xml"}, nil},
	{"httpx", []string{"../../internal/scan/testdata/*httpx*.jsonl", "../../internal/ledger/testdata/*.jsonl"}, nil},
	{"masscan", []string{"../../internal/scan/testdata/*masscan*"}, nil},
	{"naabu", []string{"../../internal/scan/testdata/*naabu*.jsonl"}, nil},
	{"pdns", []string{"../../internal/scan/testdata/pdns_cof.jsonl"}, nil},
	// One source: a certificate seen again in a later second counts as
	// updated (its last_seen moves), which timing, not the engine, decides.
	{"certs", []string{"../../internal/cert/testdata"}, nil},
	{"certstream", []string{"../../internal/ct/testdata/certstream.ndjson"}, nil},
	{"zone", []string{"../../internal/zone/testdata/example.zone"}, nil},
	{"whois", []string{"../../internal/whois/testdata/found", "../../internal/whois/testdata/notfound", "../../internal/rdap/testdata",
		"../../internal/whoislookup/testdata/*.txt", "../../internal/whoislookup/testdata/*.json"}, nil},
	{"tor-exits", []string{"../../internal/tor/testdata/*.txt"}, nil},
	{"combolist", []string{"../../internal/darkweb/testdata/encoding/combo-*.txt"}, []string{"--breach", "Legacy Combo", "--encoding", "auto"}},
	{"breach-csv", []string{"../../internal/darkweb/testdata/encoding/breach-latin1.csv"}, []string{"--breach", "Legacy CSV", "--encoding", "latin1"}},
}

// engineQueries are answers compared between the engines: searches over
// every kind of data loaded.
var engineQueries = []struct{ method, path, body string }{
	{"GET", "/api/v1/vulnerability-intelligence/vulnerability-search?query=remote+code+execution", ""},
	{"GET", "/api/v1/vulnerability-intelligence/vulnerability-search?query=CVE-2024-3094", ""},
	{"GET", "/api/v1/vulnerability-intelligence/vulnerability-search?query=CVE-2025-48384", ""},
	{"GET", "/api/v1/vulnerability-intelligence/vulnerability-search?query=denial+of+service", ""},
	{"GET", "/api/v1/vulnerability-intelligence/advisories-search?query=denial+of+service", ""},
	{"GET", "/api/v1/vulnerability-intelligence/advisories-search?ecosystem=Go", ""},
	{"GET", "/api/v1/vulnerability-intelligence/exploits-search?query=remote+code+execution", ""},
	{"GET", "/api/v1/vulnerability-intelligence/exploits-search?query=sql+injection", ""},
	{"GET", "/api/v1/vulnerability-intelligence/exploits-search?query=shellcode", ""},
	{"GET", "/api/v1/vulnerability-intelligence/exploits-search?query=EDB-170", ""},
	{"GET", "/api/v1/host/scanme.nmap.org", ""},
	{"GET", "/api/v1/host/www.example.com", ""},
	{"GET", "/api/v1/domain/example.com/subdomains", ""},
	{"GET", "/api/v1/domain/example.com/details", ""},
	{"GET", "/api/v1/hosts/search?query=example", ""},
	{"GET", "/api/v1/nexus/cloud-certs/dns-search?query=digicert.c", ""},
	{"GET", "/api/v1/nexus/cloud-certs/dns-search?query=github.com", ""},
	{"GET", "/api/v1/nexus/whois/lookup?domain=google.ee", ""},
	{"GET", "/api/v1/nexus/whois/lookup?domain=google.com", ""},
	{"GET", "/api/v1/nexus/whois/lookup?domain=xn--fl-fka.se", ""},
	{"GET", "/api/v1/nexus/tor/check-ip?ip=185.220.101.1", ""},
	{"POST", "/api/v1/oem/darkweb/search", `{"query":"example.com"}`},
}

// volatile are answer fields that record when the test ran (times of
// ingest and lookup, credit balances and request ids), not the data.
var volatile = regexp.MustCompile(`^(first_seen|last_seen|queried_at|cached_at|cache_expires|updated_at|date_added|timestamp|credits.*|request_id|list_loaded|.*_at)$`)

// TestSameDataBothEngines ingests every file of the project's copy of the
// shared public data into SQLite and PostgreSQL, then checks that the
// ingest summaries and the answers of a fixed set of queries are the same
// on both engines.
func TestSameDataBothEngines(t *testing.T) {
	engines := storetest.Engines()
	if len(engines) < 2 {
		t.Skip("PERISCOPE_TEST_POSTGRES is not set")
	}
	keyFile := filepath.Join(t.TempDir(), "darkweb.key")
	if _, err := darkweb.LoadOrCreateKey(keyFile, true, func(string) {}); err != nil { // both engines' runs read it
		t.Fatal(err)
	}
	// Each engine's ingests and queries run beside the other's.
	summaries := map[string]*[]any{"sqlite": {}, "postgres": {}}
	answers := map[string]*[]any{"sqlite": {}, "postgres": {}}
	t.Run("engines", func(t *testing.T) {
		for _, engine := range engines {
			t.Run(engine, func(t *testing.T) {
				t.Parallel()
				loadAndAsk(t, engine, keyFile, summaries[engine], answers[engine])
			})
		}
	})
	if t.Failed() {
		return
	}
	for i, in := range engineIngests {
		if d := cmp.Diff((*summaries["sqlite"])[i], (*summaries["postgres"])[i]); d != "" {
			t.Errorf("ingest %s: summaries differ (-sqlite +postgres):\n%s", in.kind, d)
		}
	}
	nonEmpty := 0
	for i, q := range engineQueries {
		a := (*answers["sqlite"])[i].(map[string]any)
		if b, _ := json.Marshal(a["body"]); a["status"] == 200 && len(b) > 200 {
			nonEmpty++
		}
		if d := cmp.Diff((*answers["sqlite"])[i], (*answers["postgres"])[i]); d != "" {
			t.Errorf("%s %s: answers differ (-sqlite +postgres):\n%.3000s", q.method, q.path, d)
		}
	}
	if nonEmpty < len(engineQueries)/2 {
		t.Errorf("only %d of %d queries found something: the comparison shows little", nonEmpty, len(engineQueries))
	}
}

// loadAndAsk ingests every file of engineIngests into a new database of
// engine and asks engineQueries of a server on it, appending the ingest
// summaries and the answers.
func loadAndAsk(t *testing.T, engine, keyFile string, summaries, answers *[]any) {
	dsn := storetest.DSN(t, engine)
	for _, in := range engineIngests {
		var files []string
		for _, g := range in.globs {
			m, err := filepath.Glob(g)
			if err != nil || len(m) == 0 {
				t.Fatalf("%s: no files match %s", in.kind, g)
			}
			files = append(files, m...)
		}
		args := []string{"ingest", in.kind, "--database", dsn, "--json"}
		if in.args != nil { // the dark-web kinds, which take the key
			args = append(append(args, "--darkweb-key-file", keyFile), in.args...)
		}
		out, errOut, _ := runCLI(t, append(args, files...)...) // some files are broken on purpose
		var sum map[string]any
		if err := json.Unmarshal([]byte(lastLine(out)), &sum); err != nil {
			t.Fatalf("%s on %s: no JSON summary (%v):\n%s\n%s", in.kind, engine, err, out, errOut)
		}
		delete(sum, "seconds")
		delete(sum, "records_per_second")
		*summaries = append(*summaries, sum)
	}
	if _, _, err := runCLI(t, "account", "create", "--database", dsn, "--company", "Engines", "--email", "e@engines.test", "--enterprise", "--credits", "100000"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "account", "update", "--database", dsn, "Engines", "--oem", "--oem-credits", "100000"); err != nil {
		t.Fatal(err)
	}
	key, _, err := runCLI(t, "key", "create", "--database", dsn, "--account", "Engines", "--name", "engines")
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, dsn, "--darkweb-key-file", keyFile)
	defer srv.stop()
	for _, q := range engineQueries {
		status, body := srv.do(t, q.method, q.path, strings.TrimSpace(key), q.body)
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatalf("%s %s on %s: %d %s", q.method, q.path, engine, status, body)
		}
		*answers = append(*answers, map[string]any{"status": status, "body": stripVolatile(v)})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// stripVolatile removes the volatile fields from a decoded JSON answer.
func stripVolatile(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k := range x {
			if volatile.MatchString(k) {
				delete(x, k)
				continue
			}
			x[k] = stripVolatile(x[k])
		}
	case []any:
		for i := range x {
			x[i] = stripVolatile(x[i])
		}
	}
	return v
}
