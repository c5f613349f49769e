package hoststore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
)

// memoFixture stores a domain of 240 hosts (big.example; 120 of them
// below a.big.example), many seen at the same second so that the name
// breaks the ties, a third not resolving, beside a sibling whose key only
// starts like it (big-x.example) and a small domain.
func memoFixture(t *testing.T, s *hoststore.Store) {
	t.Helper()
	var hs []host.Host
	for i := range 240 {
		name := fmt.Sprintf("h%03d.big.example", i)
		if i%2 == 1 {
			name = fmt.Sprintf("h%03d.a.big.example", i)
		}
		h := host.Host{Host: name, FirstSeen: 1, LastSeen: 1_700_000_000 + int64(i%17)*60}
		if i%3 != 0 {
			h.DNS = host.DNS{A: []string{fmt.Sprintf("192.0.2.%d", i)}}
		}
		hs = append(hs, h)
	}
	hs = append(hs,
		host.Host{Host: "big.example", FirstSeen: 1, LastSeen: 1_600_000_000},
		host.Host{Host: "www.big-x.example", FirstSeen: 1, LastSeen: 1_800_000_000, DNS: host.DNS{A: []string{"192.0.2.1"}}},
		host.Host{Host: "www.small.example", FirstSeen: 1, LastSeen: 1_700_000_000})
	if _, err := s.UpsertHosts(context.Background(), hs); err != nil {
		t.Fatal(err)
	}
}

// listingAnswers returns every listing and every page compared, encoded:
// subdomains and details of the domains at every limit, first, middle,
// last and beyond the last page, resolvable only both ways.
func listingAnswers(t *testing.T, s *hoststore.Store) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	for _, domain := range []string{"big.example", "BIG.Example", "a.big.example", "small.example", "nothing.example"} {
		for _, res := range []bool{false, true} {
			for _, limit := range []int{0, 1, 7, 100, 1000} {
				l, err := s.Listing(ctx, domain, res, limit, 1_000_000)
				if err != nil {
					t.Fatal(err)
				}
				capped, err := s.Listing(ctx, domain, res, limit, 5)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, fmt.Sprintf("listing %s res=%v limit=%d: %q %d %d; capped %d", domain, res, limit, l.Names, l.Total, l.LastSeen, capped.Total))
				if limit == 0 {
					continue
				}
				n := l.Total
				for _, offset := range slices.Compact([]int{0, n / 2 / limit * limit, max(n-1, 0) / limit * limit, n, n + limit}) {
					hs, err := s.RecentUnder(ctx, domain, res, limit, offset)
					if err != nil {
						t.Fatal(err)
					}
					b, err := json.Marshal(hs)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, fmt.Sprintf("details %s res=%v limit=%d offset=%d: %s", domain, res, limit, offset, b))
				}
			}
		}
	}
	return out
}

// compareListings checks that on (the memo on) answers every listing and
// page as off (the memo off) does, twice: filling the memo, then from it.
func compareListings(t *testing.T, on, off *hoststore.Store) {
	t.Helper()
	want := listingAnswers(t, off)
	for round := range 2 {
		got := listingAnswers(t, on)
		if len(got) != len(want) {
			t.Fatalf("round %d: %d answers, want %d", round, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("round %d, memo on:\n%s\nmemo off:\n%s", round, got[i], want[i])
			}
		}
	}
}

// The listing memo answers exactly what the walks answer, and a write
// through another Store over the same database (another serve, the CLI)
// is seen by the next listing.
func TestListingMemoMatchesWalks(t *testing.T) {
	defer hoststore.SetListingMemoMin(100)()
	each(t, func(t *testing.T, on *hoststore.Store) {
		ctx := context.Background()
		memoFixture(t, on)
		off := hoststore.New(on.Core())
		off.SetPostingCacheMiB(0)

		compareListings(t, on, off)
		// big.example is memoised both ways, a.big.example, which has
		// 80 resolvable hosts, with every host only; small.example is
		// walked.
		if totals, recent := on.ListingMemo(); totals != 3 || recent != 3 {
			t.Errorf("memo holds %d totals and %d orders, want 3 and 3", totals, recent)
		}
		if totals, recent := off.ListingMemo(); totals != 0 || recent != 0 {
			t.Errorf("memo off holds %d totals and %d orders", totals, recent)
		}

		before, err := on.Listing(ctx, "big.example", true, 1, 1_000_000)
		if err != nil {
			t.Fatal(err)
		}
		other := hoststore.New(on.Core())
		_, err = other.UpsertHosts(ctx, []host.Host{
			{Host: "new.a.big.example", FirstSeen: 1, LastSeen: 1_750_000_000, DNS: host.DNS{A: []string{"192.0.2.9"}}},
			{Host: "h000.big.example", LastSeen: 1_740_000_000, DNS: host.DNS{A: []string{"192.0.2.8"}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		after, err := on.Listing(ctx, "big.example", true, 1, 1_000_000)
		if err != nil {
			t.Fatal(err)
		}
		// h000 turned resolvable and new.a.big.example is new.
		if after.Total != before.Total+2 || after.LastSeen != 1_750_000_000 {
			t.Errorf("after another store's write: %d hosts, last seen %d; before %d", after.Total, after.LastSeen, before.Total)
		}
		page, err := on.RecentUnder(ctx, "big.example", true, 2, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) != 2 || page[0].Host != "new.a.big.example" || page[1].Host != "h000.big.example" {
			t.Errorf("after another store's write, first page %v", page)
		}
		compareListings(t, on, off)
	})
}

// With a budget of 0 nothing is memoised, and turning the cache back on
// answers as before.
func TestListingMemoOff(t *testing.T) {
	defer hoststore.SetListingMemoMin(100)()
	each(t, func(t *testing.T, s *hoststore.Store) {
		memoFixture(t, s)
		want := listingAnswers(t, s)
		s.SetPostingCacheMiB(0)
		got := listingAnswers(t, s)
		if totals, recent := s.ListingMemo(); totals != 0 || recent != 0 {
			t.Errorf("memo off holds %d totals and %d orders", totals, recent)
		}
		if !slices.Equal(got, want) {
			t.Error("the answers changed with the memo off")
		}
		s.SetPostingCacheMiB(1)
		if got := listingAnswers(t, s); !slices.Equal(got, want) {
			t.Error("the answers changed with the memo on again")
		}
		if _, recent := s.ListingMemo(); recent == 0 {
			t.Error("nothing memoised with the cache on again")
		}
	})
}

// A first page of a domain not listed since the last write is read
// alone; a later page reads the domain's ids whole, and the first page
// is then answered from them.
func TestListingMemoFirstPageAlone(t *testing.T) {
	defer hoststore.SetListingMemoMin(100)()
	each(t, func(t *testing.T, s *hoststore.Store) {
		ctx := context.Background()
		memoFixture(t, s)
		off := hoststore.New(s.Core())
		off.SetPostingCacheMiB(0)
		page := func(s *hoststore.Store, offset int) string {
			hs, err := s.RecentUnder(ctx, "big.example", true, 10, offset)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(hs)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
		steps := []struct {
			offset         int
			totals, recent int
		}{{0, 0, 0}, {0, 0, 0}, {150, 2, 1}, {0, 2, 1}, {10, 2, 1}}
		for i, st := range steps {
			if got, want := page(s, st.offset), page(off, st.offset); got != want {
				t.Errorf("step %d, offset %d: memo on %s\nmemo off %s", i, st.offset, got, want)
			}
			if totals, recent := s.ListingMemo(); totals != st.totals || recent != st.recent {
				t.Errorf("step %d: memo holds %d totals and %d orders, want %d and %d", i, totals, recent, st.totals, st.recent)
			}
		}
	})
}
