package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// TestConcurrentOverlappingClaims races two accounts claiming a parent
// domain and a name below it (and two overlapping IP ranges) at the same
// moment: exactly one claim wins each round and the other is a conflict,
// on PostgreSQL too, where the overlap check and the insert of two
// transactions would otherwise interleave (both see no overlap, both
// insert). Claims take turns on store.LockClaims.
func TestConcurrentOverlappingClaims(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a, _ := newAccount(t, s, "claims-a", 1)
		b, _ := newAccount(t, s, "claims-b", 1)
		oa := periscope.Organization{AccountID: a.ID, Name: "A"}
		ob := periscope.Organization{AccountID: b.ID, Name: "B"}
		for _, o := range []*periscope.Organization{&oa, &ob} {
			if err := s.CreateOrganization(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		const rounds = 25
		for i := range rounds {
			pairs := [][2]periscope.Asset{
				{
					{OrganizationID: oa.ID, AccountID: a.ID, Kind: periscope.AssetDomain, Value: fmt.Sprintf("race%d.example", i)},
					{OrganizationID: ob.ID, AccountID: b.ID, Kind: periscope.AssetDomain, Value: fmt.Sprintf("shop.race%d.example", i)},
				},
				{
					{OrganizationID: oa.ID, AccountID: a.ID, Kind: periscope.AssetIPRange, Value: fmt.Sprintf("10.%d.0.0/16", i)},
					{OrganizationID: ob.ID, AccountID: b.ID, Kind: periscope.AssetIPRange, Value: fmt.Sprintf("10.%d.7.0/24", i)},
				},
			}
			for _, p := range pairs {
				// Alternate who claims the parent.
				if i%2 == 1 {
					p[0].AccountID, p[1].AccountID = b.ID, a.ID
					p[0].OrganizationID, p[1].OrganizationID = ob.ID, oa.ID
				}
				var wg sync.WaitGroup
				start := make(chan struct{})
				errs := make([]error, 2)
				for j := range p {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						_, errs[j] = s.AddAsset(ctx, p[j])
					}()
				}
				close(start)
				wg.Wait()
				won := 0
				for j, err := range errs {
					switch {
					case err == nil:
						won++
					case periscope.ErrorCode(err) != periscope.EConflict:
						t.Fatalf("round %d: claim of %s: %v", i, p[j].Value, err)
					}
				}
				if won != 1 {
					t.Fatalf("round %d: %s and %s: %d claims won (errors %v), want exactly 1", i, p[0].Value, p[1].Value, won, errs)
				}
			}
		}
		// What is stored agrees: one claim of each pair per round.
		oaAssets, _ := s.Assets(ctx, a.ID, oa.ID)
		obAssets, _ := s.Assets(ctx, b.ID, ob.ID)
		if n := len(oaAssets) + len(obAssets); n != 2*rounds {
			t.Fatalf("%d assets stored, want %d", n, 2*rounds)
		}
	})
}
