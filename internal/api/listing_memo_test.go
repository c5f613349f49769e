package api_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// memoHosts is a domain just large enough for the listing memo (10,000
// hosts and more).
const memoHosts = 10_040

// Subdomains and domain details of a domain the listing memo holds answer
// byte for byte what they answer without it, on the first, a middle, the
// last and a page beyond the last, resolvable only both ways, also after
// a write through another host store over the same database.
func TestDomainListingsWithMemo(t *testing.T) {
	if testing.Short() {
		t.Skip("stores a domain of 10,040 hosts")
	}
	each(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		var hs []host.Host
		for i := range memoHosts {
			// Hosts seen at one of 50 seconds, so the name breaks ties.
			h := host.Host{Host: fmt.Sprintf("h%05d.megacorp.com", i), FirstSeen: 1, LastSeen: 1_763_000_000 + int64(i%50)}
			if i%4 != 0 {
				h.DNS = host.DNS{A: []string{"192.0.2.1"}}
			}
			hs = append(hs, h)
		}
		if _, err := e.Hosts.UpsertHosts(ctx, hs); err != nil {
			t.Fatal(err)
		}
		_, key := e.Account(periscope.Account{Company: "Big", Plan: "enterprise", CreditsPerMonth: 1 << 40, RateLimit: 1 << 30, MaxResultsPerRequest: 100})

		compare := func(t *testing.T) {
			t.Helper()
			for _, res := range []string{"false", "true"} {
				paths := []string{"/api/v1/domain/megacorp.com/subdomains?resolvable_only=" + res}
				var l struct {
					Metadata struct {
						AllResultsCount int `json:"all_results_count"`
					} `json:"metadata"`
				}
				e.Do(http.MethodGet, paths[0], key, nil).JSON(t, &l)
				total := l.Metadata.AllResultsCount
				if total < 7000 {
					t.Fatalf("%d hosts listed", total)
				}
				for _, limit := range []int{100, 7} {
					last := (total + limit - 1) / limit
					for _, page := range []int{1, last / 2, last - 1, last, last + 1} {
						paths = append(paths, fmt.Sprintf("/api/v1/domain/megacorp.com/details?page=%d&limit=%d&resolvable_only=%s", page, limit, res))
					}
				}
				for _, p := range paths {
					e.Hosts.SetPostingCacheMiB(0)
					off := e.Do(http.MethodGet, p, key, nil)
					e.Hosts.SetPostingCacheMiB(hoststore.DefaultPostingCacheMiB)
					for round := range 2 {
						on := e.Do(http.MethodGet, p, key, nil)
						if on.Status != http.StatusOK || off.Status != http.StatusOK || string(on.Body) != string(off.Body) {
							t.Errorf("%s (round %d): with the memo %d %.300s\nwithout %d %.300s", p, round, on.Status, on.Body, off.Status, off.Body)
						}
					}
				}
			}
		}
		compare(t)

		other := hoststore.New(e.Store)
		if _, err := other.UpsertHosts(ctx, []host.Host{{Host: "new.megacorp.com", FirstSeen: 1, LastSeen: 1_763_000_100, DNS: host.DNS{A: []string{"192.0.2.2"}}}}); err != nil {
			t.Fatal(err)
		}
		var d struct {
			Hosts    []host.Host `json:"hosts"`
			Metadata struct {
				AllResultsCount int   `json:"all_results_count"`
				LastScanned     int64 `json:"last_scanned"`
			} `json:"metadata"`
		}
		e.Do(http.MethodGet, "/api/v1/domain/megacorp.com/details?limit=1", key, nil).JSON(t, &d)
		if len(d.Hosts) != 1 || d.Hosts[0].Host != "new.megacorp.com" || d.Metadata.AllResultsCount != memoHosts+1 || d.Metadata.LastScanned != 1_763_000_100 {
			t.Errorf("after another store's write: %d hosts (first %v), metadata %+v", len(d.Hosts), d.Hosts, d.Metadata)
		}
		compare(t)
	})
}
