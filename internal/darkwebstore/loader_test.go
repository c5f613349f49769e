package darkwebstore

import (
	"context"
	"testing"

	"github.com/periscope-oss/periscope/internal/breach"
	"github.com/periscope-oss/periscope/internal/breachgen"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// A loader writes each batch while the next is sealed, builds every few
// batches and at Flush: every record is stored once, a record repeated in
// a later batch is counted as a duplicate by the build, and the caller may
// reuse its records as soon as Add returns.
func TestLoaderPipelinesAndBuilds(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			d, _, _ := open(t, engine)
			g := breachgen.New(7, "example.com")
			norm := d.Normalizer()
			recs := make([]breach.Record, 1000)
			for i := range recs {
				recs[i] = g.Record()
				if err := norm.Clean(&recs[i]); err != nil {
					t.Fatal(err)
				}
			}
			l, err := d.Loader(ctx)
			if err != nil {
				t.Fatal(err)
			}
			l.SetBuildEvery(250)
			added, dups := 0, 0
			batch := make([]breach.Record, 0, 101)
			for i := 0; i < len(recs); i += 100 {
				batch = append(batch[:0], recs[i:i+100]...)
				if i > 0 {
					batch = append(batch, recs[i-100]) // stored by the batch before
				}
				res, err := l.Add(ctx, batch)
				if err != nil {
					t.Fatal(err)
				}
				added += res.Added
				dups += res.Duplicates
				for j := range batch {
					batch[j].Breach = "clobbered" // the caller reuses its records
				}
			}
			n, err := l.Flush(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if added-n != 1000 || dups+n != 9 {
				t.Fatalf("added %d, duplicates %d (%d found by the last build); want 1000 and 9", added-n, dups+n, n)
			}
			if c, _ := d.Count(ctx); c != 1000 {
				t.Fatalf("%d records stored", c)
			}
			for _, r := range []breach.Record{recs[0], recs[499], recs[999]} {
				got, err := d.Search(ctx, Query{Type: breach.Email, Value: r.Email, Limit: 10})
				if err != nil || len(got) != 1 || got[0].Record.Breach != r.Breach || got[0].Record.Breach == "clobbered" {
					t.Fatalf("search %s: %+v %v", r.Email, got, err)
				}
			}
			if _, total, err := d.Emails(ctx, ListQuery{Domains: []string{"example.com"}, Limit: 10}); err != nil || total != 1000 {
				t.Fatalf("distinct emails %d %v", total, err)
			}
		})
	}
}
