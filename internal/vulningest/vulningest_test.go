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
