package darkwebstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/darkwebgen"
	"github.com/periscope-oss/periscope/internal/store"
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
			g := darkwebgen.New(7, "example.com")
			norm := d.Normalizer()
			recs := make([]darkweb.Record, 1000)
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
			batch := make([]darkweb.Record, 0, 101)
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
			for _, r := range []darkweb.Record{recs[0], recs[499], recs[999]} {
				got, err := d.Search(ctx, Query{Type: darkweb.Email, Value: r.Email, Limit: 10})
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
// is exactly the one a build in memory writes (also when it commits its
// rows in steps of as many), and a load that builds only at Flush (the
// default) counts a record repeated across batches once.
func TestBuildMergesSpilledRuns(t *testing.T) {
	ctx := context.Background()
	g := darkwebgen.New(9, "example.com", "example.org")
	var recs []darkweb.Record
	for range 600 {
		recs = append(recs, g.Record())
	}
	index := func(runRows int) (string, int, int) {
		d, s, _ := open(t, "sqlite")
		d.runRows, d.stepRows = runRows, runRows // and committed in steps as long
		n := d.Normalizer()
		l, err := d.Loader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		added, dups := 0, 0
		for i := 0; i < len(recs); i += 100 {
			batch := append([]darkweb.Record(nil), recs[i:i+100]...)
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
		if got, err := d.Search(ctx, Query{Type: darkweb.Email, Value: recs[0].Email, Limit: 10, NoCache: true}); err != nil || len(got) != 0 {
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
		for _, r := range []darkweb.Record{recs[0], recs[299], recs[599]} {
			r := r
			if err := n.Clean(&r); err != nil {
				t.Fatal(err)
			}
			got, err := d.Search(ctx, Query{Type: darkweb.Email, Value: r.Email, Limit: 10, NoCache: true})
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

// indexDump is the index and the listing totals, with each row's record
// named by its id (seqs differ with the order records were written in).
func indexDump(t *testing.T, s *store.Store) string {
	t.Helper()
	var b strings.Builder
	rows, err := s.DB().Query(`SELECT i.k, i.d, hex(r.id), COALESCE(i.x, 0) FROM darkweb_index i JOIN darkweb_records r ON r.seq = i.rec ORDER BY 1, 2, 3`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var k, d, x int64
		var id string
		if err := rows.Scan(&k, &d, &id, &x); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%d %d %s %d\n", k, d, id, x)
		n++
	}
	if n == 0 {
		t.Fatal("empty index")
	}
	crows, err := s.DB().Query(`SELECT k, n FROM darkweb_counts ORDER BY k`)
	if err != nil {
		t.Fatal(err)
	}
	defer crows.Close()
	for crows.Next() {
		var k, c int64
		if err := crows.Scan(&k, &c); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "count %d %d\n", k, c)
	}
	var staged int
	s.DB().QueryRow(`SELECT COUNT(*) FROM darkweb_stage`).Scan(&staged)
	fmt.Fprintf(&b, "staged %d\n", staged)
	return b.String()
}

// A loader keeps the index rows of its records in memory (SQLite); the
// index it builds from them is the one built from keys computed from the
// records' blobs, whatever else happened to the stage in between: a load
// interrupted before its build (indexed by the next loader), another
// loader's records staged between its batches, another build indexing
// some of its records first, duplicates across batches, a build in steps,
// stopped between them, or with another build between them.
func TestLoaderRowsInMemoryMatchBlobs(t *testing.T) {
	ctx := context.Background()
	g := darkwebgen.New(21, "example.com", "example.org")
	recs := make([]darkweb.Record, 900)
	norm := darkweb.Normalizer{}
	for i := range recs {
		recs[i] = g.Record()
		if err := norm.Clean(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	batch := func(i int) []darkweb.Record { return append([]darkweb.Record(nil), recs[i*100:(i+1)*100]...) }
	add := func(l *Loader, b []darkweb.Record) {
		t.Helper()
		if _, err := l.Add(ctx, b); err != nil {
			t.Fatal(err)
		}
		l.WriterTime() // written
	}
	loader := func(d *Store) *Loader {
		t.Helper()
		l, err := d.Loader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	scenarios := map[string]func(d *Store){
		"one loader": func(d *Store) {
			l := loader(d)
			for i := range 9 {
				add(l, batch(i))
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
		},
		"interrupted, then indexed from the blobs": func(d *Store) {
			l := loader(d)
			for i := range 5 {
				add(l, batch(i))
			}
			l.release()   // the process died before its build
			l = loader(d) // indexes what is staged first
			for i := 5; i < 9; i++ {
				add(l, batch(i))
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
		},
		"interrupted, runs of 97 rows": func(d *Store) {
			d.runRows = 97 // spilled runs, from memory and from the stage
			l := loader(d)
			for i := range 5 {
				add(l, batch(i))
			}
			l.release()
			l = loader(d)
			for i := 5; i < 9; i++ {
				add(l, batch(i))
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
		},
		"another loader's records staged between": func(d *Store) {
			a, b := loader(d), loader(d)
			add(a, batch(0))
			add(b, batch(1))
			add(a, append(batch(2), recs[0], recs[150])) // duplicates of both
			add(b, batch(3))
			add(a, batch(4))
			if _, err := a.Flush(ctx); err != nil { // builds b's records too
				t.Fatal(err)
			}
			add(b, batch(5))
			add(a, batch(6))
			for i := 7; i < 9; i++ {
				add(b, batch(i))
			}
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
		},
		"in steps of 300 rows": func(d *Store) {
			d.stepRows = 300
			l := loader(d)
			for i := range 9 {
				add(l, batch(i))
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
		},
		"stopped between the steps of its build": func(d *Store) {
			d.stepRows = 300
			steps := 0
			d.stepped = func() error {
				if steps++; steps == 4 {
					return errors.New("the process died")
				}
				return nil
			}
			l := loader(d)
			for i := range 5 {
				add(l, batch(i))
			}
			if _, err := l.Flush(ctx); err == nil {
				t.Fatal("the build did not stop")
			}
			l.release()
			d.stepped = nil
			l = loader(d) // indexes what is staged first
			for i := 5; i < 9; i++ {
				add(l, batch(i))
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
		},
		"another build between the steps": func(d *Store) {
			d.stepRows = 300
			a, b := loader(d), loader(d)
			for i := range 4 {
				add(a, batch(i))
			}
			add(b, batch(4))
			steps := 0
			d.stepped = func() error {
				if steps++; steps == 2 {
					// Another process's build: it finds a's records still
					// staged and builds them from their blobs too.
					d.stepped = nil
					if _, err := b.Flush(ctx); err != nil {
						return err
					}
					add(b, batch(5))
				}
				return nil
			}
			if _, err := a.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			for i := 6; i < 9; i++ {
				add(a, batch(i))
			}
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
		},
		"another build first": func(d *Store) {
			a := loader(d)
			for i := range 4 {
				add(a, batch(i))
			}
			if _, err := d.Add(ctx, batch(4)); err != nil { // builds a's records from their blobs
				t.Fatal(err)
			}
			for i := 5; i < 9; i++ {
				add(a, append(batch(i), recs[i*100-1]))
			}
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
		},
	}
	var want string
	for _, name := range []string{"one loader", "interrupted, then indexed from the blobs", "interrupted, runs of 97 rows",
		"another loader's records staged between", "another build first", "in steps of 300 rows",
		"stopped between the steps of its build", "another build between the steps"} {
		t.Run(name, func(t *testing.T) {
			d, s, _ := open(t, "sqlite")
			scenarios[name](d)
			if c, err := d.Count(ctx); err != nil || c != int64(len(recs)) {
				t.Fatalf("%d records stored, want %d (%v)", c, len(recs), err)
			}
			got := indexDump(t, s)
			if want == "" {
				want = got
				return
			}
			if got != want {
				t.Fatalf("the index differs from one loader's:\n%s", firstDiff(got, want))
			}
		})
	}
}

// firstDiff shows the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d: got %q, want %q (%d and %d lines)", i+1, g[i], w[i], len(g), len(w))
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(g), len(w))
}

// Records whose breach, breach date and source are shared by their insert
// chunk are stored with those columns bound once (SQLite): every record
// reads back with its own id and blob and the shared columns, as records
// of a mixed chunk do.
func TestSharedColumnsStored(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			d, _, _ := open(t, engine)
			g := darkwebgen.New(31, "example.com")
			norm := d.Normalizer()
			recs := make([]darkweb.Record, 450)
			for i := range recs {
				recs[i] = g.Record()
				if i < 400 { // two chunks of one breach, then a mixed one
					recs[i].Breach, recs[i].BreachDate, recs[i].Source = "Shared", "2024-01-02", "breach-csv"
				} else {
					recs[i].BreachDate, recs[i].Source = "", "combolist"
				}
				if err := norm.Clean(&recs[i]); err != nil {
					t.Fatal(err)
				}
			}
			if res, err := d.Add(ctx, recs); err != nil || res.Added != len(recs) {
				t.Fatalf("%+v %v", res, err)
			}
			for i, r := range recs {
				got, err := d.Search(ctx, Query{Type: darkweb.Email, Value: r.Email, Limit: 10, NoCache: true})
				if err != nil || len(got) != 1 {
					t.Fatalf("record %d: %d results, %v", i, len(got), err)
				}
				g := got[0].Record
				if g.Email != r.Email || g.Name != r.Name || g.Breach != r.Breach || g.BreachDate != r.BreachDate || g.Source != r.Source || got[0].DateAdded != d.s.Now().Unix() {
					t.Fatalf("record %d read back as %+v (%d), want %+v", i, g, got[0].DateAdded, r)
				}
			}
		})
	}
}

// sortRun orders runs as compareRows does: runs appended in seq order with
// dates that never go back (radix sorted by key), runs whose dates go back
// (sorted by comparisons), keys of either sign, many rows of one key, keys
// whose top halves are equal.
func TestSortRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var tmp []indexRow
	for trial := range 200 {
		n := rng.IntN(3000)
		rows := make([]indexRow, 0, n)
		d, rec := int64(1_700_000_000), int64(1)
		for len(rows) < n {
			if rng.IntN(50) == 0 {
				d += int64(rng.IntN(3))
				if trial%4 == 3 && rng.IntN(3) == 0 {
					d -= 5 // the clock went back
				}
			}
			for range 1 + rng.IntN(12) {
				var k int64
				switch rng.IntN(4) {
				case 0:
					k = int64(rng.IntN(3)) << 56 // a few shared keys
				case 1:
					k = -int64(rng.Uint64() >> 1)
				default:
					// Keys spread over 64 bits, or narrower: rows whose
					// top halves are equal, a few (the insertion pass)
					// or many (past its budget).
					k = int64(rng.Uint64() >> []int{0, 20, 40}[trial%3])
				}
				rows = append(rows, indexRow{k: k, d: d, rec: rec, x: int64(rng.IntN(2))})
			}
			rec++
		}
		want := slices.Clone(rows)
		slices.SortStableFunc(want, compareRows)
		sortRun(rows, &tmp)
		for i := range rows {
			if compareRows(rows[i], want[i]) != 0 {
				t.Fatalf("trial %d: row %d is %+v, want %+v", trial, i, rows[i], want[i])
			}
		}
	}
}
