package api_test

import (
	"net/http"
	"testing"

	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// Domain details answer as many hosts as the account's
// max_results_per_request (FullHunt's tier cap), most recently seen first.
func TestDomainDetailsCapAndOrder(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		seedHosts(t, e)
		_, small := e.Account(periscope.Account{Company: "Small", Plan: "free", CreditsPerMonth: 10, MaxResultsPerRequest: 5})
		_, big := e.Account(periscope.Account{Company: "Big", Plan: "paid", CreditsPerMonth: 10, MaxResultsPerRequest: 100000})
		type details struct {
			Hosts    []host.Host `json:"hosts"`
			Metadata struct {
				AllResultsCount         int `json:"all_results_count"`
				AvailableResultsForUser int `json:"available_results_for_user"`
			} `json:"metadata"`
		}
		var d details
		r := e.Do(http.MethodGet, "/api/v1/domain/acme.com/details", small, nil)
		r.JSON(t, &d)
		if r.Status != 200 || len(d.Hosts) != 5 || d.Metadata.AvailableResultsForUser != 5 || d.Metadata.AllResultsCount != 13 {
			t.Fatalf("capped details: %d hosts, metadata %+v", len(d.Hosts), d.Metadata)
		}
		for i, want := range []string{"h11.acme.com", "h10.acme.com", "h09.acme.com", "h08.acme.com", "h07.acme.com"} {
			if d.Hosts[i].Host != want {
				t.Errorf("host %d = %s, want %s", i, d.Hosts[i].Host, want)
			}
		}
		// A limit above the cap is clipped to it.
		e.Do(http.MethodGet, "/api/v1/domain/acme.com/details?limit=50", small, nil).JSON(t, &d)
		if len(d.Hosts) != 5 {
			t.Errorf("limit 50 on a cap of 5: %d hosts", len(d.Hosts))
		}
		e.Do(http.MethodGet, "/api/v1/domain/acme.com/details", big, nil).JSON(t, &d)
		if len(d.Hosts) != 13 || d.Hosts[12].Host != "old.acme.com" {
			t.Errorf("uncapped details: %d hosts", len(d.Hosts))
		}
		for i := 1; i < len(d.Hosts); i++ {
			if d.Hosts[i].LastSeen > d.Hosts[i-1].LastSeen {
				t.Errorf("not sorted by last_seen: %s after %s", d.Hosts[i].Host, d.Hosts[i-1].Host)
			}
		}
		e.Do(http.MethodGet, "/api/v1/domain/acme.com/details?resolvable_only=1", big, nil).JSON(t, &d)
		if len(d.Hosts) != 12 {
			t.Errorf("resolvable details: %d hosts", len(d.Hosts))
		}
	})
}
