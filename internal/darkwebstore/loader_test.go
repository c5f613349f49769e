package darkwebstore

import (
	"context"
	"fmt"
	"strings"
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

// A build larger than its in-memory run sorts the staged rows run by run,
// spills the runs to temporary files and merges them: the index it writes
// is exactly the one a build in memory writes, and a load that builds
// only at Flush (the default) counts a record repeated across batches
// once.
func TestBuildMergesSpilledRuns(t *testing.T) {
	ctx := context.Background()
	g := breachgen.New(9, "example.com", "example.org")
	var recs []breach.Record
	for range 600 {
		recs = append(recs, g.Record())
	}
	index := func(runRows int) (string, int, int) {
		d, s, _ := open(t, "sqlite")
		d.runRows = runRows
		n := d.Normalizer()
		l, err := d.Loader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		added, dups := 0, 0
		for i := 0; i < len(recs); i += 100 {
			batch := append([]breach.Record(nil), recs[i:i+100]...)
			if i > 0 {
				batch = append(batch, recs[i-1]) // stored by the batch before
			}
			for j := range batch {
				if err := n.Clean(&batch[j]); err != nil {
					t.Fatal(err)
				}
			}
			res, err := l.Add(ctx, batch)
			if err != nil {
				t.Fatal(err)
			}
			added += res.Added
			dups += res.Duplicates
		}
		l.WriterTime() // the last batch is written
		if c, _ := d.Count(ctx); c != int64(len(recs)+5) {
			t.Fatalf("%d records stored before the build, want %d (all staged)", c, len(recs)+5)
		}
		if got, err := d.Search(ctx, Query{Type: breach.Email, Value: recs[0].Email, Limit: 10, NoCache: true}); err != nil || len(got) != 0 {
			t.Fatalf("a staged record is searchable before its build: %d %v", len(got), err)
		}
		built, err := l.Flush(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		rows, err := s.DB().QueryContext(ctx, `SELECT k, d, rec, COALESCE(x, 0) FROM darkweb_index ORDER BY k, d, rec`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var b strings.Builder
		nrows := 0
		for rows.Next() {
			var k, dd, rec, x int64
			if err := rows.Scan(&k, &dd, &rec, &x); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%d %d %d %d\n", k, dd, rec, x)
			nrows++
		}
		if nrows < 3*len(recs) {
			t.Fatalf("%d index rows for %d records", nrows, len(recs))
		}
		for _, r := range []breach.Record{recs[0], recs[299], recs[599]} {
			r := r
			if err := n.Clean(&r); err != nil {
				t.Fatal(err)
			}
			got, err := d.Search(ctx, Query{Type: breach.Email, Value: r.Email, Limit: 10, NoCache: true})
			if err != nil || len(got) != 1 {
				t.Fatalf("runs of %d rows: search %s: %d results, %v", runRows, r.Email, len(got), err)
			}
		}
		var counts strings.Builder
		crows, err := s.DB().QueryContext(ctx, `SELECT k, n FROM darkweb_counts ORDER BY k`)
		if err != nil {
			t.Fatal(err)
		}
		defer crows.Close()
		for crows.Next() {
			var k, c int64
			crows.Scan(&k, &c)
			fmt.Fprintf(&counts, "%d %d\n", k, c)
		}
		return b.String() + counts.String(), added - built, dups + built
	}
	want, added, dups := index(0)
	if added != len(recs) || dups != 5 {
		t.Fatalf("in memory: added %d, duplicates %d; want %d and 5", added, dups, len(recs))
	}
	for _, runRows := range []int{97, 1000} {
		got, added, dups := index(runRows)
		if added != len(recs) || dups != 5 {
			t.Fatalf("runs of %d rows: added %d, duplicates %d; want %d and 5", runRows, added, dups, len(recs))
		}
		if got != want {
			t.Fatalf("runs of %d rows: the index differs from the one built in memory", runRows)
		}
	}
}
