package vulningest_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
	"github.com/periscope-oss/periscope/internal/vulningest"
	"github.com/periscope-oss/periscope/internal/vulnstore"
)

const data = "../vuln/testdata/"

func TestIngestTruncatedKeepsBatches(t *testing.T) {
	storetest.EachOf(t, []store.MigrationSet{vulnstore.Migrations()}, vulnstore.New, func(t *testing.T, s *vulnstore.Store) {
		ctx := context.Background()
		in := &vulningest.Ingester{Store: s, BatchSize: 50}
		b, err := os.ReadFile(data + "kev/known_exploited_vulnerabilities.json")
		if err != nil {
			t.Fatal(err)
		}
		sum, err := in.IngestReader(ctx, vulningest.KEV, "kev.json", bytes.NewReader(b[:len(b)/3]), nil)
		if err == nil || !strings.Contains(err.Error(), "kev.json") {
			t.Fatalf("truncated catalog: err %v", err)
		}
		if sum.Inserted == 0 || sum.Inserted != sum.Read {
			t.Fatalf("truncated catalog summary %+v", sum)
		}
		c, err := s.CountVulns(ctx)
		if err != nil || c.KEV != sum.Inserted {
			t.Fatalf("stored %d kev entries, want %d (%v)", c.KEV, sum.Inserted, err)
		}
		// The whole catalog then adds the rest, and again changes nothing.
		full, err := in.IngestReader(ctx, vulningest.KEV, "kev.json", bytes.NewReader(b), nil)
		if err != nil || full.Inserted != full.Read-sum.Inserted || full.Unchanged != sum.Inserted {
			t.Fatalf("full catalog %+v %v", full, err)
		}
		again, err := in.IngestPath(ctx, vulningest.KEV, data+"kev/known_exploited_vulnerabilities.json", nil)
		if err != nil || again.Unchanged != again.Read || again.Inserted+again.Updated != 0 {
			t.Fatalf("re-ingest %+v %v", again, err)
		}
		// CISA's CSV form of the same catalog stores the same entries.
		csv, err := in.IngestPath(ctx, vulningest.KEV, data+"kev/known_exploited_vulnerabilities.csv.gz", nil)
		if err != nil || csv.Read != 1404 || csv.Unchanged != 1404 {
			t.Fatalf("kev csv after json: %+v %v", csv, err)
		}
		// A corrupt gzip stores nothing and says why.
		if _, err := in.IngestReader(ctx, vulningest.NVD, "bad.json.gz", bytes.NewReader([]byte{0x1f, 0x8b, 1, 2, 3}), nil); err == nil {
			t.Fatal("corrupt gzip accepted")
		}
		// Rejected records are reported with file and position; the rest are stored.
		sum, err = in.IngestPath(ctx, vulningest.ExploitDB, data+"exploitdb/files_exploits_sample.csv", nil)
		if err != nil || sum.Rejected != 2 || len(sum.Rejects) != 2 || !strings.Contains(sum.Rejects[0], "files_exploits_sample.csv: line 3") {
			t.Fatalf("exploit-db %+v %v", sum, err)
		}
		if _, err := in.IngestPath(ctx, "bogus", data+"kev/known_exploited_vulnerabilities.json", nil); err == nil {
			t.Fatal("unknown kind accepted")
		}
	})
}

// TestLegacyEncodingBothEngines loads the legacy Exploit-DB index, whose
// text is Windows-1252, on each engine: every row is stored (PostgreSQL
// refused the batch holding an invalid UTF-8 byte) and the text reads the
// same on both, decoded as package textenc decodes every feed.
func TestLegacyEncodingBothEngines(t *testing.T) {
	storetest.EachOf(t, []store.MigrationSet{vulnstore.Migrations()}, vulnstore.New, func(t *testing.T, s *vulnstore.Store) {
		ctx := context.Background()
		in := &vulningest.Ingester{Store: s}
		sum, err := in.IngestPath(ctx, vulningest.ExploitDB, data+"exploitdb-gpl/files_legacy_2014-05-27_first2000.csv", nil)
		if err != nil || sum.Inserted != 2000 || sum.Rejected != 0 {
			t.Fatalf("legacy index: %+v %v", sum, err)
		}
		xs, err := s.SearchExploits(ctx, vulnstore.VulnSearch{Query: "EDB-170", Limit: 1})
		if err != nil || len(xs) != 1 {
			t.Fatalf("EDB-170: %v %v", xs, err)
		}
		if want := "Rémi Denis-Courmont"; xs[0].Author != want {
			t.Errorf("author %q, want %q (0xE9 read as Windows-1252)", xs[0].Author, want)
		}
		// The whole 2014 index (not in the repository: GPL, 4 MB) has 60
		// such lines, "–" written as 0x96 among them.
		const full = "../../../shared/data/exploitdb/files_legacy_2014-05-27.csv"
		if _, err := os.Stat(full); err != nil {
			return
		}
		sum, err = in.IngestPath(ctx, vulningest.ExploitDB, full, nil)
		if err != nil || sum.Read != 30192 || sum.Inserted+sum.Unchanged+sum.Updated != sum.Read-sum.Rejected {
			t.Fatalf("full legacy index: %+v %v", sum, err)
		}
	})
}
