package wire_test

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
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

// cpuTime is the CPU time (user + system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHostIngestLedger stores n generated hosts (default 5,000;
// PERISCOPE_BENCH_LEDGER_HOSTS sets it, e.g. 100000) into a new database
// (load), then ingests them again with 10% of them changed (a new open
// port, a new title and a later last-seen: reingest), with the change
// ledger off (hoststore.New) and on (wire.Hosts). Each iteration runs both
// modes, alternating which goes first, so a change of machine load hits
// both alike. Reported per engine: hosts/s of each phase and mode, and
// on/off ratios of wall time and of CPU time (1.0 = the ledger costs
// nothing).
func BenchmarkHostIngestLedger(b *testing.B) {
	n := 5000
	if v := os.Getenv("PERISCOPE_BENCH_LEDGER_HOSTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 10 {
			b.Fatalf("PERISCOPE_BENCH_LEDGER_HOSTS: want a count >= 10, got %q", v)
		}
	}
	gen := func() []host.Host { // the same hosts each call
		hs := make([]host.Host, 0, n)
		hostgen.New(n, 1, 1795000000).All(func(h host.Host) error { hs = append(hs, h); return nil })
		return hs
	}
	for _, engine := range storetest.Engines() {
		b.Run(engine, func(b *testing.B) {
			load := map[string]time.Duration{}
			reingest := map[string]time.Duration{}
			loadCPU := map[string]time.Duration{}
			reingestCPU := map[string]time.Duration{}
			run := func(mode string) {
				db := storetest.Open(b, engine, schema.Sets()...)
				hs := hoststore.New(db)
				if mode == "on" {
					hs = wire.Hosts(db, wire.NewLedger(db))
				}
				first := gen()
				src := ledger.Source{Name: "nmap"}
				t0, c0 := time.Now(), cpuTime()
				if st, err := hs.UpsertHostsFrom(b.Context(), src, first); err != nil || st.Inserted != n {
					b.Fatalf("%v %+v", err, st.Inserted)
				}
				load[mode] += time.Since(t0)
				loadCPU[mode] += cpuTime() - c0
				again := gen()
				for j := range again {
					if j%10 == 0 {
						again[j].NetworkServices = append(again[j].NetworkServices, host.Service{Port: 60000 + j%1000, Protocol: "tcp"})
						again[j].HTTPTitle = fmt.Sprintf("changed %d", j)
						again[j].LastSeen += 3600 // a later scan
					}
				}
				t0, c0 = time.Now(), cpuTime()
				st, err := hs.UpsertHostsFrom(b.Context(), src, again)
				if err != nil || st.Updated != n/10 {
					b.Fatalf("%v updated %d unchanged %d", err, st.Updated, st.Unchanged)
				}
				reingest[mode] += time.Since(t0)
				reingestCPU[mode] += cpuTime() - c0
			}
			for i := 0; i < b.N; i++ {
				if i%2 == 0 {
					run("off")
					run("on")
				} else {
					run("on")
					run("off")
				}
			}
			rate := func(d time.Duration) float64 { return float64(n*b.N) / d.Seconds() }
			b.ReportMetric(rate(load["off"]), "load-off-hosts/s")
			b.ReportMetric(rate(load["on"]), "load-on-hosts/s")
			b.ReportMetric(rate(reingest["off"]), "reingest-off-hosts/s")
			b.ReportMetric(rate(reingest["on"]), "reingest-on-hosts/s")
			b.ReportMetric(rate(reingest["on"])/rate(reingest["off"]), "reingest-on/off")
			b.ReportMetric(rate(load["on"])/rate(load["off"]), "load-on/off")
			// CPU time of this process (user + system) per phase: on
			// SQLite it includes the database's work, and it moves far less
			// with the machine's load than wall time does.
			b.ReportMetric(reingestCPU["on"].Seconds()/reingestCPU["off"].Seconds(), "reingest-cpu-on/off")
			b.ReportMetric(loadCPU["on"].Seconds()/loadCPU["off"].Seconds(), "load-cpu-on/off")
		})
	}
}
