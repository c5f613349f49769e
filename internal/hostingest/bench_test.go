package hostingest_test

import (
	"bytes"
	"testing"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hostgen"
	"github.com/periscope-oss/periscope/internal/hostingest"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/scan"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// BenchmarkIngestGenerated ingests 20,000 generated hosts (native NDJSON,
// built-in provider ranges, no MMDB) into a new SQLite database per
// iteration and reports hosts/s.
func BenchmarkIngestGenerated(b *testing.B) {
	const n = 20000
	var buf bytes.Buffer
	enc := scan.NewEncoder(&buf)
	hostgen.New(n, 1, 1795000000).All(func(h host.Host) error { return enc.Encode(h) })
	enc.Flush()
	e, err := hostingest.NewEnricher(hostingest.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s := hoststore.New(storetest.Open(b, "sqlite", hoststore.Migrations()))
		in := &hostingest.Ingester{Store: s, Enricher: e}
		b.StartTimer()
		sum, err := in.Ingest(b.Context(), scan.Native, "gen", bytes.NewReader(buf.Bytes()), nil)
		if err != nil || sum.Inserted != n {
			b.Fatalf("%v %+v", err, sum)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "hosts/s")
}
