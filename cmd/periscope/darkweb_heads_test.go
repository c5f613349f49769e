package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/cli"
	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/darkwebstore"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// serve's answer-heads worker builds the heads of what `periscope ingest`
// stored (here 300 records sharing an address and an email domain: the
// answer heads of the address and of example.com, and example.com's listing
// head), and a search then reads them from the heads; it stops with its
// context.
func TestDarkwebHeadsWorker(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			dsn := storetest.DSN(t, engine)
			dir := t.TempDir()
			key := filepath.Join(dir, "dw.key")
			var b strings.Builder
			b.WriteString("email,password,address\n")
			for i := range 300 {
				fmt.Fprintf(&b, "heads%d@example.com,Secret-%d,1 Sentinel Street\n", i, i)
			}
			csvf := filepath.Join(dir, "dump.csv")
			os.WriteFile(csvf, []byte(b.String()), 0o600)
			if out, stderr, err := runCLI(t, "ingest", "breach-csv", csvf, "--breach", "HeadsDump", "--database", dsn, "--darkweb-key-file", key); err != nil || !strings.Contains(out, "inserted 300") {
				t.Fatalf("ingest: %v\n%s%s", err, out, stderr)
			}
			st, err := cli.OpenStore(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			dw, err := openDarkweb(ctx, st, &darkwebConfig{KeyFile: key}, false, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			w := darkwebHeads(dw, 10*time.Millisecond, slog.New(slog.DiscardHandler))
			runWorkerUntil(t, w, 10*time.Second, func() (bool, string) {
				var n int
				if err := st.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM darkweb_heads`).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n == 900, fmt.Sprintf("%d head rows, want 900 (the address's, example.com's and its listing's)", n)
			})
			got, err := dw.Search(ctx, darkwebstore.Query{Type: darkweb.Address, Value: "1 SENTINEL STREET", Limit: 1000, NoCache: true})
			if err != nil || len(got) != 300 {
				t.Fatalf("search: %d records, %v", len(got), err)
			}
		})
	}
}
