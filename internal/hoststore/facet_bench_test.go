package hoststore

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/store"
)

// benchHostsDB opens and migrates the database PERISCOPE_BENCH_HOSTS_DB
// names (closed when b ends), or skips b when it is not set.
func benchHostsDB(b *testing.B) *store.Store {
	b.Helper()
	dsn := os.Getenv("PERISCOPE_BENCH_HOSTS_DB")
	if dsn == "" {
		b.Skip("PERISCOPE_BENCH_HOSTS_DB is not set")
	}
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	if _, err := st.Migrate(context.Background(), Migrations()); err != nil {
		b.Fatal(err)
	}
	return st
}

// BenchmarkCountFacetsDB times what GET /hosts/count does (a query, its
// total and three facets) on a database of generated hosts named by
// PERISCOPE_BENCH_HOSTS_DB (a SQLite file or a postgres:// URL, e.g. the
// one periscope-bench search used), with the posting cache on (answered
// from memory after the first round) and off (every round reads the
// rows). It reports CPU time per query, this process's only.
func BenchmarkCountFacetsDB(b *testing.B) {
	ctx := context.Background()
	st := benchHostsDB(b)
	queries := map[string]*Expr{
		"1term":  {Op: OpCond, Cond: Cond{Kind: CondTerm, Term: TermPort + ":22"}},
		"3terms": {Op: OpAnd, Kids: []*Expr{{Op: OpCond, Cond: Cond{Kind: CondTerm, Term: TermCountry + ":us"}}, {Op: OpCond, Cond: Cond{Kind: CondTerm, Term: TermPort + ":443"}}, {Op: OpCond, Cond: Cond{Kind: CondTerm, Term: TermProduct + ":nginx"}}}},
	}
	for _, cache := range []int{DefaultPostingCacheMiB, 0} {
		for _, name := range []string{"1term", "3terms"} {
			mode := "cache"
			if cache == 0 {
				mode = "nocache"
			}
			b.Run(mode+"/"+name, func(b *testing.B) {
				s := New(st)
				s.SetPostingCacheMiB(cache)
				count := func() {
					m, err := s.MatchHosts(ctx, queries[name])
					if err != nil {
						b.Fatal(err)
					}
					for _, f := range []string{TermCountry, TermPort, TermProduct} {
						if _, err := m.Facet(ctx, f, 10); err != nil {
							b.Fatal(err)
						}
					}
				}
				count() // fills the cache, outside the timing
				start := cpuTime()
				for b.Loop() {
					count()
				}
				reportCPU(b, start)
				b.ReportMetric(float64(s.cache.used)/(1<<20), "cache-MiB")
			})
		}
	}
}

// BenchmarkCachedFacetsDB times the three facets of BenchmarkCountFacetsDB
// alone (10 values each, every field in the posting cache) over the
// matches of each query, on the database of PERISCOPE_BENCH_HOSTS_DB: the
// AND-cardinalities of the values Facet visits, and the conversion of the
// matches to a roaring bitmap. It reports CPU time per three facets.
func BenchmarkCachedFacetsDB(b *testing.B) {
	ctx := context.Background()
	st := benchHostsDB(b)
	term := func(t string) *Expr { return &Expr{Op: OpCond, Cond: Cond{Kind: CondTerm, Term: t}} }
	queries := []struct {
		name string
		e    *Expr
	}{
		{"1term", term(TermPort + ":22")},
		{"3terms", &Expr{Op: OpAnd, Kids: []*Expr{term(TermCountry + ":us"), term(TermPort + ":443"), term(TermProduct + ":nginx")}}},
	}
	for _, q := range queries {
		b.Run(q.name, func(b *testing.B) {
			s := New(st)
			m, err := s.MatchHosts(ctx, q.e)
			if err != nil {
				b.Fatal(err)
			}
			facets := func() {
				m.rb = nil // made again by the first facet, as in a request
				for _, f := range []string{TermCountry, TermPort, TermProduct} {
					if _, err := m.Facet(ctx, f, 10); err != nil {
						b.Fatal(err)
					}
				}
			}
			facets() // reads the fields into the cache, outside the timing
			start := cpuTime()
			for b.Loop() {
				facets()
			}
			reportCPU(b, start)
		})
	}
}

// BenchmarkExportDB streams every host holding port:22 as NDJSON
// (EachJSON, what GET /hosts/export?query=port:22 writes) from the
// database of PERISCOPE_BENCH_HOSTS_DB, reporting hosts per CPU-second of
// this process and per wall second.
func BenchmarkExportDB(b *testing.B) {
	ctx := context.Background()
	st := benchHostsDB(b)
	s := New(st)
	hosts, bytes := 0, 0
	start, wall := cpuTime(), time.Now()
	for b.Loop() {
		m, err := s.MatchHosts(ctx, &Expr{Op: OpCond, Cond: Cond{Kind: CondTerm, Term: TermPort + ":22"}})
		if err != nil {
			b.Fatal(err)
		}
		err = m.EachJSON(ctx, func(doc []byte) error {
			hosts++
			bytes += len(doc) + 1
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	cpu := cpuTime() - start
	b.ReportMetric(float64(hosts)/cpu.Seconds(), "hosts/cpu-s")
	b.ReportMetric(float64(hosts)/time.Since(wall).Seconds(), "hosts/s")
	b.ReportMetric(float64(bytes)/float64(hosts), "bytes/host")
}
