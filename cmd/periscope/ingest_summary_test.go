package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/ingestreport"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// TestIngestSummary checks the one summary every kind prints: the skip
// reasons with their counts, the same counts as JSON with --json, and
// each skipped record's position at --log-level debug, on both engines.
func TestIngestSummary(t *testing.T) {
	// 254 of its 256 hosts are down; the 2 up are private addresses, kept
	// with --keep-private (they are skipped by default).
	const scan = "../../internal/scan/testdata/libnmap_fullscan.xml"
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			dsn := storetest.DSN(t, engine)
			out, errOut, err := runCLI(t, "ingest", "nmap", scan, "--keep-private", "--database", dsn, "--log-level", "debug")
			if err != nil {
				t.Fatalf("%v\n%s", err, errOut)
			}
			for _, want := range []string{"nmap: 1 source(s): read 256, stored 2 (inserted 2, updated 0), unchanged 0, skipped 254, rejected 0 in ",
				"\n  skipped 254: 254 hosts down\n"} {
				if !strings.Contains(out, want) {
					t.Errorf("summary lacks %q:\n%s", want, out)
				}
			}
			if n := strings.Count(errOut, `"msg":"skipped"`); n != 254 || !strings.Contains(errOut, "libnmap_fullscan.xml: line ") || !strings.Contains(errOut, "hosts down") {
				t.Errorf("%d skipped records logged at debug:\n%.600s", n, errOut)
			}
			out, _, err = runCLI(t, "ingest", "nmap", scan, "--keep-private", "--database", dsn, "--json")
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("--json output %q: %v", out, err)
			}
			by, _ := got["skipped_by"].(map[string]any)
			if got["kind"] != "nmap" || got["read"] != 256.0 || got["unchanged"] != 2.0 || got["stored"] != 0.0 || by["hosts down"] != 254.0 ||
				got["rejects"] == nil || got["records_per_second"] == nil {
				t.Errorf("--json summary %v", got)
			}
			// The same shape for another kind.
			out, _, err = runCLI(t, "ingest", "kev", "../../internal/vuln/testdata/kev/known_exploited_vulnerabilities.csv.gz", "--database", dsn, "--json")
			if err := json.Unmarshal([]byte(out), &got); err != nil || got["kind"] != "kev" || got["inserted"] != 1404.0 {
				t.Errorf("kev --json %q: %v", out, err)
			}
		})
	}
}

// TestProgressLine checks the progress line: the share read and the time
// left when the input size is known, the throughput otherwise.
func TestProgressLine(t *testing.T) {
	var b strings.Builder
	p := newProgress(&b, 1000)
	start := p.start
	p.read.Add(250)
	s := ingestreport.Summary{Read: 500, Inserted: 400, Skipped: 100}
	if got, want := p.line(s, start.Add(10*time.Second)), " 25% ETA 30s  read 500  stored 400  unchanged 0  skipped 100  rejected 0  50 records/s"; got != want {
		t.Errorf("known size: %q, want %q", got, want)
	}
	q := newProgress(&b, 0)
	if got, want := q.line(s, q.start.Add(10*time.Second)), "read 500  stored 400  unchanged 0  skipped 100  rejected 0  50 records/s"; got != want {
		t.Errorf("unknown size: %q, want %q", got, want)
	}
	// Not a terminal: a plain line every five seconds.
	q.now = func() time.Time { return q.start.Add(6 * time.Second) }
	q.update(s)
	if !strings.HasPrefix(b.String(), "progress: read 500") || !strings.HasSuffix(b.String(), "\n") {
		t.Errorf("periodic line %q", b.String())
	}
}
