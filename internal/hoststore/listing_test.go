package hoststore_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// Listing answers exactly what Subdomains and LastSeenUnder answer
// together, for every limit, cap and resolvability, on both engines.
func TestListingMatchesSubdomainsAndLastSeen(t *testing.T) {
	each(t, func(t *testing.T, s *hoststore.Store) {
		ctx := context.Background()
		searchFixture(t, s)
		for _, domain := range []string{"example.com", "b.example.com", "example-shop.com", "nothing.test"} {
			for _, res := range []bool{false, true} {
				for _, limit := range []int{0, 1, 3, 31, 32, 100} {
					for _, capN := range []int{5, 1000} {
						names, total, err := s.Subdomains(ctx, domain, res, limit, capN)
						if err != nil {
							t.Fatal(err)
						}
						last, err := s.LastSeenUnder(ctx, domain)
						if err != nil {
							t.Fatal(err)
						}
						l, err := s.Listing(ctx, domain, res, limit, capN)
						if err != nil {
							t.Fatal(err)
						}
						// Subdomains leaves the count out of a limit-0 call
						// only when it has a list shorter than the limit.
						if !slices.Equal(l.Names, names) || l.Total != total || l.LastSeen != last || l.Names == nil {
							t.Errorf("%s res=%v limit=%d cap=%d: Listing = %v %d %d; Subdomains = %v %d, last %d",
								domain, res, limit, capN, l.Names, l.Total, l.LastSeen, names, total, last)
						}
					}
				}
			}
		}
	})
}

// benchDomainHosts is the size of the domain the listing benchmark walks.
const benchDomainHosts = 50_000

// BenchmarkSubdomainListing compares, in one run, the two-query listing
// (Subdomains, whose full list of 100 names then counts the range, and
// LastSeenUnder, which walks it again) with Listing's one aggregate walk,
// over one domain of 50,000 hosts (100 names listed, as a default account).
func BenchmarkSubdomainListing(b *testing.B) {
	for _, e := range storetest.Engines() {
		b.Run(e, func(b *testing.B) {
			ctx := context.Background()
			s := hoststore.New(storetest.Open(b, e, hoststore.Migrations()))
			var hs []host.Host
			for i := range benchDomainHosts {
				h := host.Host{Host: fmt.Sprintf("h%05d.big.example", i), FirstSeen: 1, LastSeen: int64(1_700_000_000 + i)}
				if i%3 != 0 {
					h.DNS = host.DNS{A: []string{"192.0.2.1"}}
				}
				hs = append(hs, h)
				if len(hs) == 5000 {
					if _, err := s.UpsertHosts(ctx, hs); err != nil {
						b.Fatal(err)
					}
					hs = hs[:0]
				}
			}
			if e == "postgres" {
				// As autovacuum would: index-only scans need the visibility map.
				if _, err := s.Core().DB().ExecContext(ctx, "VACUUM ANALYZE hosts"); err != nil {
					b.Fatal(err)
				}
			}
			b.Run("before", func(b *testing.B) {
				for b.Loop() {
					if _, _, err := s.Subdomains(ctx, "big.example", false, 100, 1_000_000); err != nil {
						b.Fatal(err)
					}
					if _, err := s.LastSeenUnder(ctx, "big.example"); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("after", func(b *testing.B) {
				for b.Loop() {
					if _, err := s.Listing(ctx, "big.example", false, 100, 1_000_000); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
