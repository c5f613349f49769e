package wire_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hostgen"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/ledger"
	"github.com/periscope-oss/periscope/internal/schema"
	"github.com/periscope-oss/periscope/internal/store/storetest"
	"github.com/periscope-oss/periscope/internal/wire"
)

// BenchmarkHostIngestLedger stores 5,000 generated hosts into a new
// database (load), then ingests them again with 10% of them changed (a
// new open port and a new title: reingest), with the change ledger off
// (hoststore.New) and on (wire.Hosts), side by side on each engine.
// Reported: hosts/s of each phase.
func BenchmarkHostIngestLedger(b *testing.B) {
	const n = 5000
	gen := func() []host.Host { // the same hosts each call
		hs := make([]host.Host, 0, n)
		hostgen.New(n, 1, 1795000000).All(func(h host.Host) error { hs = append(hs, h); return nil })
		return hs
	}
	for _, engine := range storetest.Engines() {
		for _, mode := range []string{"off", "on"} {
			b.Run(engine+"/"+mode, func(b *testing.B) {
				var load, reingest time.Duration
				for i := 0; i < b.N; i++ {
					db := storetest.Open(b, engine, schema.Sets()...)
					hs := hoststore.New(db)
					if mode == "on" {
						hs = wire.Hosts(db, wire.NewLedger(db))
					}
					first := gen()
					src := ledger.Source{Name: "nmap"}
					t0 := time.Now()
					if st, err := hs.UpsertHostsFrom(b.Context(), src, first); err != nil || st.Inserted != n {
						b.Fatalf("%v %+v", err, st.Inserted)
					}
					load += time.Since(t0)
					again := gen()
					for j := range again {
						if j%10 == 0 {
							again[j].NetworkServices = append(again[j].NetworkServices, host.Service{Port: 60000 + j%1000, Protocol: "tcp"})
							again[j].HTTPTitle = fmt.Sprintf("changed %d", j)
							again[j].LastSeen += 3600 // a later scan
						}
					}
					t0 = time.Now()
					st, err := hs.UpsertHostsFrom(b.Context(), src, again)
					if err != nil || st.Updated != n/10 {
						b.Fatalf("%v updated %d unchanged %d", err, st.Updated, st.Unchanged)
					}
					reingest += time.Since(t0)
				}
				b.ReportMetric(float64(n*b.N)/load.Seconds(), "load-hosts/s")
				b.ReportMetric(float64(n*b.N)/reingest.Seconds(), "reingest-hosts/s")
			})
		}
	}
}
