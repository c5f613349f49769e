package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/hostingest"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/scan"
	"github.com/periscope-oss/periscope/internal/schema"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

func runBench(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, func(string) string { return "" }, &out, &errb)
	return out.String(), errb.String(), err
}

// gen-hosts writes the generated internet that search then queries: the
// whole mix answers 200 over the hosts of the same count and seed, and a
// different seed (names never stored) fails it.
func TestGenHostsAndSearch(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			gen := filepath.Join(t.TempDir(), "gen.ndjson")
			if _, _, err := runBench(t, "gen-hosts", "--count", "3000", "--seed", "7", "--now", "1790000000", "--out", gen); err != nil {
				t.Fatal(err)
			}
			dsn := storetest.DSN(t, engine)
			ingestFile(t, dsn, gen)
			out, _, err := runBench(t, "search", "--database", dsn, "--count", "3000", "--seed", "7", "--rounds", "1")
			if err != nil {
				t.Fatalf("search: %v", err)
			}
			for _, kind := range []string{"host ", "search, 1 filter", "search, 3 filters", "subdomains megacorp.com"} {
				if !strings.Contains(out, kind) {
					t.Errorf("search printed no %q line:\n%s", kind, out)
				}
			}
			if _, _, err := runBench(t, "search", "--database", dsn, "--count", "3000", "--seed", "8", "--rounds", "1"); err == nil {
				t.Error("search with another seed found hosts that were never stored")
			}
		})
	}
}

// ingestFile loads a native NDJSON file into the database at dsn, as
// `periscope ingest hosts` does.
func ingestFile(t *testing.T, dsn, path string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dsn, store.Files(schema.Sets()...))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx, schema.Sets()...); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sum, err := (&hostingest.Ingester{Store: hoststore.New(st)}).Ingest(ctx, scan.Native, path, f, nil)
	if err != nil || sum.Inserted != 3000 {
		t.Fatalf("ingest: %+v %v", sum, err)
	}
}

// Each benchmark runs end to end at a tiny size and prints its figures.
func TestBenchmarksRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every benchmark for a few seconds")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"auth", "--connections", "2", "--warmup", "100ms", "--duration", "300ms"}, "periscope / bare throughput: "},
		{[]string{"vuln", "--vulns", "300", "--advisories", "50", "--exploits", "30", "--connections", "1", "--duration", "200ms", "--only", "feed"}, "feed: window, all types"},
		{[]string{"brand", "--findings", "200", "--requests", "3", "--ct-entries", "20"}, "ct ingestion: 20 entries"},
	} {
		t.Run(c.args[0], func(t *testing.T) {
			out, stderr, err := runBench(t, c.args...)
			if err != nil || !strings.Contains(out, c.want) {
				t.Errorf("%v: %v; want %q in:\n%s\n%s", c.args, err, c.want, out, stderr)
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	for _, bad := range [][]string{
		{}, {"nope"}, {"gen-hosts", "--count", "0"}, {"gen-hosts", "extra"},
		{"search", "--concurrency", "0"}, {"search", "--url", "http://127.0.0.1:1"},
	} {
		if _, _, err := runBench(t, bad...); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: want a one-line error, got %v", bad, err)
		}
	}
	if out, _, err := runBench(t, "help"); err != nil || !strings.Contains(out, "periscope-bench gen-hosts") {
		t.Errorf("help: %v\n%s", err, out)
	}
}

// gen-darkweb writes as many records as asked in the layout asked, the
// same for the same seed, and refuses a layout it does not write.
func TestGenDarkweb(t *testing.T) {
	out, _, err := runBench(t, "gen-darkweb", "--count", "7")
	if err != nil || strings.Count(out, "\n") != 7 || !strings.Contains(out, "@example.") {
		t.Fatalf("combolist: %q %v", out, err)
	}
	again, _, _ := runBench(t, "gen-darkweb", "--count", "7")
	if again != out {
		t.Fatal("same seed, different file")
	}
	if csv, _, err := runBench(t, "gen-darkweb", "--kind", "breach-csv", "--count", "3"); err != nil || strings.Count(csv, "\n") != 4 {
		t.Fatalf("breach-csv (header and 3 rows): %q %v", csv, err)
	}
	if _, _, err := runBench(t, "gen-darkweb", "--kind", "stealer"); err == nil {
		t.Fatal("unknown kind accepted")
	}
}
