package hoststore

import (
	"context"
	"testing"
)

// BenchmarkDomainListingDB times what GET /domain/megacorp.com/subdomains
// (Listing: 100 names, the count and the latest last_seen) and the host
// ids of GET /domain/megacorp.com/details (RecentUnder, 100 hosts a page:
// the first page and the page at offset 40,000) read, on the database of
// generated hosts named by PERISCOPE_BENCH_HOSTS_DB (megacorp.com holds
// 5% of its hosts): with the listing memo filled (memo), with it off
// (nomemo, as before the memo), and with it emptied before every call
// (cold: what the first listing after a host write costs). It reports
// CPU time per call, this process's only (on PostgreSQL the server's is
// not counted: read ns/op there).
func BenchmarkDomainListingDB(b *testing.B) {
	ctx := context.Background()
	st := benchHostsDB(b)
	const domain = "megacorp.com"
	calls := map[string]func(s *Store) error{
		"listing": func(s *Store) error {
			_, err := s.Listing(ctx, domain, false, 100, 1_000_000)
			return err
		},
		"listing-resolvable": func(s *Store) error {
			_, err := s.Listing(ctx, domain, true, 100, 1_000_000)
			return err
		},
		"recent-page1": func(s *Store) error {
			_, err := s.RecentUnder(ctx, domain, false, 100, 0)
			return err
		},
		"recent-offset40000": func(s *Store) error {
			_, err := s.RecentUnder(ctx, domain, false, 100, 40_000)
			return err
		},
	}
	for _, name := range []string{"listing", "listing-resolvable", "recent-page1", "recent-offset40000"} {
		for _, mode := range []string{"memo", "nomemo", "cold"} {
			b.Run(name+"/"+mode, func(b *testing.B) {
				s := New(st)
				if mode == "nomemo" {
					s.SetPostingCacheMiB(0)
				}
				call := calls[name]
				if err := call(s); err != nil { // fills the memo, outside the timing
					b.Fatal(err)
				}
				if mode == "memo" {
					if t, r := len(s.lists.totals), len(s.lists.recent); t == 0 && r == 0 {
						b.Fatal("nothing memoised")
					}
				}
				start := cpuTime()
				for b.Loop() {
					if mode == "cold" {
						s.lists.off()
					}
					if err := call(s); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, start)
				b.ReportMetric(float64(s.lists.used)/(1<<20), "memo-MiB")
			})
		}
	}
}
