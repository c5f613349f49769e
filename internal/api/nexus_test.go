package api_test

import (
	"context"
	"net/http"
	"net/netip"
	"testing"

	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/enrich"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
)

func TestNexusLookups(t *testing.T) {
	// The enricher of a default configuration: the provider range files
	// built in, no MMDB.
	en, err := enrich.New(enrich.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { en.Close() })
	eachWith(t, apitest.Options{Deps: func(d *api.Deps, _ *store.Store) { d.Enrich = en }}, func(t *testing.T, e *apitest.Env) {
		seedHosts(t, e)
		if _, err := e.Hosts.UpsertHosts(context.Background(), []host.Host{{Host: "edge.acme.com", IPAddress: "52.1.2.13",
			DNS: host.DNS{A: []string{"52.1.2.13", "52.1.2.99"}, PTR: []string{"ec2-52-1-2-13.compute-1.amazonaws.com"}}}}); err != nil {
			t.Fatal(err)
		}
		_, key := e.Account(periscope.Account{Company: "Nexus Co", Plan: "free", CreditsPerMonth: 100})
		type lookup struct {
			Result struct {
				ASN           int      `json:"asn"`
				Organization  string   `json:"organization"`
				CountryCode   string   `json:"country_code"`
				IsCloud       bool     `json:"is_cloud"`
				CloudProvider string   `json:"cloud_provider"`
				IsPublic      bool     `json:"is_public"`
				IsIPv4        bool     `json:"is_ipv4"`
				IPDecimal     string   `json:"ip_decimal"`
				PTR           []string `json:"ptr"`
				HostsCount    int      `json:"hosts_count"`
			} `json:"result"`
			ResolvedHost string   `json:"resolved_host"`
			Resolvable   bool     `json:"resolvable"`
			OtherIPs     []string `json:"other_ips"`
			Credits      int64    `json:"credits"`
		}
		want := en.Enrich(netip.MustParseAddr("52.1.2.13"), nil)
		for i, q := range []string{"52.1.2.13", "edge.acme.com"} {
			var l lookup
			r := e.Do(http.MethodGet, "/api/v1/nexus/ip-lookup?query="+q, key, nil)
			r.JSON(t, &l)
			res := l.Result
			if r.Status != 200 || res.HostsCount != 2 || res.IPDecimal != "872481293" || !res.IsPublic || !res.IsIPv4 || l.Credits != int64(99-i) {
				t.Errorf("%s: %d %s", q, r.Status, r.Body)
			}
			// The index's metadata (h03 is first stored) fills what the
			// tables without MMDB lack; the ranges say whether it is cloud.
			if res.ASN != 24940 || res.Organization != "Hetzner Online GmbH" || res.CountryCode != "DE" || res.IsCloud != want.IsCloud || len(res.PTR) != 0 {
				t.Errorf("%s: result %+v (ranges say cloud=%v)", q, res, want.IsCloud)
			}
			if q == "edge.acme.com" && (!l.Resolvable || l.ResolvedHost != q || len(l.OtherIPs) != 1 || l.OtherIPs[0] != "52.1.2.99") {
				t.Errorf("name lookup: %+v", l)
			}
		}
		var v6 lookup
		e.Do(http.MethodGet, "/api/v1/nexus/ip-lookup?query=2001:db8::1", key, nil).JSON(t, &v6)
		if v6.Result.IPDecimal != "42540766411282592856903984951653826561" || v6.Result.IsPublic || v6.Result.HostsCount != 0 {
			t.Errorf("v6 = %+v", v6.Result)
		}

		var names struct {
			Count int      `json:"count"`
			Data  []string `json:"data"`
		}
		r := e.Do(http.MethodGet, "/api/v1/nexus/passive-dns/lookup?domain=acme.com", key, nil)
		r.JSON(t, &names)
		if r.Status != 200 || names.Count != 14 || len(names.Data) != 14 {
			t.Errorf("passive dns: %d %s", r.Status, r.Body)
		}
		for _, c := range []struct {
			path   string
			status int
		}{
			{"/api/v1/nexus/ip-lookup", 422},
			{"/api/v1/nexus/ip-lookup?query=not%20a%20name", 422},
			{"/api/v1/nexus/ip-lookup?query=nowhere.acme.com", 404},
			{"/api/v1/nexus/ip-lookup?query=old.acme.com", 404}, // held without an address
			{"/api/v1/nexus/passive-dns/lookup", 422},
			{"/api/v1/nexus/passive-dns/lookup?domain=1.2.3.4", 422},
		} {
			if r := e.Do(http.MethodGet, c.path, key, nil); r.Status != c.status {
				t.Errorf("%s: %d %s, want %d", c.path, r.Status, r.Body, c.status)
			}
		}
		var used struct {
			UserCredits struct {
				CreditsUsage int `json:"credits_usage"`
			} `json:"user_credits"`
		}
		e.Do(http.MethodGet, "/api/v1/auth/status", key, nil).JSON(t, &used)
		if used.UserCredits.CreditsUsage != 4 {
			t.Errorf("credits used %d, want 4 (failures are not charged)", used.UserCredits.CreditsUsage)
		}

		var me struct {
			IP string `json:"current_ip_address"`
		}
		r = e.Do(http.MethodGet, "/api/v1/public/my-ip", "", nil)
		r.JSON(t, &me)
		if r.Status != 200 || me.IP != "127.0.0.1" {
			t.Errorf("my-ip: %d %s", r.Status, r.Body)
		}
	})
}
