package alertstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/ledger"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// benchRows is the ledger size of BenchmarkLedgerSearch:
// PERISCOPE_BENCH_LEDGER_ROWS, default 1,000,000.
func benchRows() int {
	if n, err := strconv.Atoi(os.Getenv("PERISCOPE_BENCH_LEDGER_ROWS")); err == nil && n > 0 {
		return n
	}
	return 1_000_000
}

// fillLedger writes n rows: 20 rows per host, 8 hosts per domain, over a
// year, in batches as host writes would.
func fillLedger(b *testing.B, db *store.Store, st *alertstore.Store, n int) (hosts, domains int) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 2))
	cats := []ledger.Category{ledger.CategoryPort, ledger.CategoryDNSA, ledger.CategoryHTTPTitle, ledger.CategoryTLSCert, ledger.CategoryService}
	hosts = max(n/20, 1)
	domains = max(hosts/8, 1)
	start := time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC).Unix()
	const batch = 20000
	for lo := 0; lo < n; lo += batch {
		cs := make([]ledger.Change, 0, batch)
		for i := lo; i < min(lo+batch, n); i++ {
			h := r.IntN(hosts)
			d := h % domains
			cs = append(cs, ledger.Change{Host: fmt.Sprintf("h%d.d%d.example", h, d), Domain: fmt.Sprintf("d%d.example", d), TLD: "example",
				Subdomain: fmt.Sprintf("h%d", h), HostType: "subdomain", IPAddress: fmt.Sprintf("10.%d.%d.%d", h>>16&255, h>>8&255, h&255),
				Category: cats[i%len(cats)], Change: ledger.New, Value: strconv.Itoa(i), Source: "bench",
				Time: start + int64(i)*(365*86400)/int64(n)})
		}
		if err := db.Tx(ctx, func(tx *store.Tx) error { return st.RecordChanges(ctx, tx, cs) }); err != nil {
			b.Fatal(err)
		}
	}
	return hosts, domains
}

// BenchmarkLedgerSearch measures POST /oem/alerts/search's store call (a
// page of 100 rows and the capped count) for random hosts and domains.
func BenchmarkLedgerSearch(b *testing.B) {
	for _, engine := range storetest.Engines() {
		b.Run(engine, func(b *testing.B) {
			db := storetest.Open(b, engine, Migrations())
			st := alertstore.New(db)
			n := benchRows()
			t0 := time.Now()
			hosts, domains := fillLedger(b, db, st, n)
			if engine == "postgres" {
				db.DB().Exec(`ANALYZE ledger`)
			}
			b.Logf("%s: %d ledger rows (%d hosts, %d domains) written in %v", engine, n, hosts, domains, time.Since(t0).Round(time.Millisecond))
			ctx := context.Background()
			r := rand.New(rand.NewPCG(3, 4))
			var lat []time.Duration
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				q := alertstore.LedgerQuery{Limit: 100}
				if i%2 == 0 {
					h := r.IntN(hosts)
					q.Host = fmt.Sprintf("h%d.d%d.example", h, h%domains)
				} else {
					q.Domain = fmt.Sprintf("d%d.example", r.IntN(domains))
				}
				t := time.Now()
				rows, _, _, err := st.SearchLedger(ctx, q)
				lat = append(lat, time.Since(t))
				if err != nil || len(rows) == 0 {
					b.Fatalf("%+v: %d rows, %v", q, len(rows), err)
				}
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)*50/100].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
			b.ReportMetric(float64(n), "rows")
		})
	}
}

// Migrations is alertstore.Migrations (short for the benchmark's calls).
func Migrations() store.MigrationSet { return alertstore.Migrations() }
