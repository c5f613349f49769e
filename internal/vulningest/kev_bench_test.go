package vulningest_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
	"github.com/periscope-oss/periscope/internal/vulngen"
	"github.com/periscope-oss/periscope/internal/vulningest"
	"github.com/periscope-oss/periscope/internal/vulnstore"
)

// BenchmarkKEVIngest ingests a generated KEV catalog of 5,000 entries into
// tables already holding the 10,000 NVD records they flag (the order of a
// full load: NVD, then KEV), once per iteration into fresh tables; the
// NVD load is outside the timing. records/s is the figure of
// `periscope-bench vuln`'s kev line.
func BenchmarkKEVIngest(b *testing.B) {
	const vulns, step = 10_000, 2
	g, err := vulngen.New(vulns, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), 1)
	if err != nil {
		b.Fatal(err)
	}
	var nvd, kev bytes.Buffer
	if err := g.WriteNVD(&nvd); err != nil {
		b.Fatal(err)
	}
	if err := g.WriteKEV(&kev, step); err != nil {
		b.Fatal(err)
	}
	for _, e := range storetest.Engines() {
		b.Run(e, func(b *testing.B) {
			ctx := context.Background()
			var records int
			var spent time.Duration
			for b.Loop() {
				b.StopTimer()
				s := vulnstore.New(storetest.Open(b, e, []store.MigrationSet{vulnstore.Migrations()}...))
				in := &vulningest.Ingester{Store: s}
				if _, err := in.IngestReader(ctx, vulningest.NVD, "nvd", bytes.NewReader(nvd.Bytes()), nil); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				t0 := time.Now()
				sum, err := in.IngestReader(ctx, vulningest.KEV, "kev", bytes.NewReader(kev.Bytes()), nil)
				spent += time.Since(t0)
				if err != nil || sum.Updated+sum.Inserted != vulns/step {
					b.Fatalf("kev: %+v %v", sum, err)
				}
				records += sum.Read
			}
			b.ReportMetric(float64(records)/spent.Seconds(), "records/s")
		})
	}
}
