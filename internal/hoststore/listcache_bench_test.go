package hoststore

import (
	"context"
	"testing"
)

// BenchmarkDomainListingDB times what GET /domain/megacorp.com/subdomains
// (Listing: 100 names, the count and the latest last_seen) and
// GET /domain/megacorp.com/details (RecentUnder, 100 hosts from the first
// or the 40,000th, then Listing for the count) read, on the database of
// generated hosts named by PERISCOPE_BENCH_HOSTS_DB (megacorp.com holds
// 5% of its hosts), in four modes: memo (the listing memo filled), nomemo
// (off: as before the memo), cold (emptied before every request: the
// first request after a host write) and cold2 (emptied before every two
// requests: an op is the first two requests after a write). It reports
// CPU time per op, this process's only (on PostgreSQL the server's is not
// counted: read ns/op there).
func BenchmarkDomainListingDB(b *testing.B) {
	ctx := context.Background()
	st := benchHostsDB(b)
	const domain, countCap = "megacorp.com", 1_000_000
	details := func(s *Store, offset int) error {
		if _, err := s.RecentUnder(ctx, domain, false, 100, offset); err != nil {
			return err
		}
		_, err := s.Listing(ctx, domain, false, 0, countCap)
		return err
	}
	requests := map[string]func(s *Store) error{
		"subdomains": func(s *Store) error {
			_, err := s.Listing(ctx, domain, false, 100, countCap)
			return err
		},
		"subdomains-resolvable": func(s *Store) error {
			_, err := s.Listing(ctx, domain, true, 100, countCap)
			return err
		},
		"details-page1":       func(s *Store) error { return details(s, 0) },
		"details-offset40000": func(s *Store) error { return details(s, 40_000) },
	}
	for _, name := range []string{"subdomains", "subdomains-resolvable", "details-page1", "details-offset40000"} {
		for _, mode := range []string{"memo", "nomemo", "cold", "cold2"} {
			b.Run(name+"/"+mode, func(b *testing.B) {
				s := New(st)
				if mode == "nomemo" {
					s.SetPostingCacheMiB(0)
				}
				request := requests[name]
				for range 2 { // fills the memo, outside the timing
					if err := request(s); err != nil {
						b.Fatal(err)
					}
				}
				if mode == "memo" && len(s.lists.totals) == 0 {
					b.Fatal("nothing memoised")
				}
				start := cpuTime()
				for b.Loop() {
					if mode == "cold" || mode == "cold2" {
						s.lists.off()
					}
					if err := request(s); err != nil {
						b.Fatal(err)
					}
					if mode == "cold2" {
						if err := request(s); err != nil {
							b.Fatal(err)
						}
					}
				}
				reportCPU(b, start)
				b.ReportMetric(float64(s.lists.used)/(1<<20), "memo-MiB")
			})
		}
	}
}
