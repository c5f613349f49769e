package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/alerts"
	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/ledger"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/scanstore"
)

// TestAssetSettings stores FullHunt's asset settings and checks they are
// honoured: notifications off raises no alert for the asset's changes,
// continuous scans off takes it out of scheduled scans, and
// organization_id moves it.
func TestAssetSettings(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		_, key := e.Account(periscope.Account{Company: "Settings Co", Plan: "enterprise", Enterprise: true, CreditsPerMonth: 10})
		_, other := e.Account(periscope.Account{Company: "Other Settings Co", Plan: "enterprise", Enterprise: true, CreditsPerMonth: 10})
		var org, second struct{ ID string }
		e.Do(http.MethodPost, "/api/v1/enterprise/organizations", key, map[string]any{"name": "Main"}).JSON(t, &org)
		e.Do(http.MethodPost, "/api/v1/enterprise/organizations", key, map[string]any{"name": "Second"}).JSON(t, &second)
		for _, d := range []string{"example.com", "example.net"} {
			if r := e.Do(http.MethodPost, "/api/v1/enterprise/organizations/"+org.ID+"/domains", key, map[string]any{"domain": d}); r.Status != 201 {
				t.Fatalf("add %s: %d %s", d, r.Status, r.Body)
			}
		}
		if r := e.Do(http.MethodPost, "/api/v1/enterprise/organizations/"+org.ID+"/ip-ranges", key, map[string]any{"ip_range": "8.8.4.0/24"}); r.Status != 201 {
			t.Fatalf("add range: %d %s", r.Status, r.Body)
		}
		put := func(k, path string, body any) (apitest.Response, map[string]any) {
			t.Helper()
			var m map[string]any
			r := doJSON(t, e, http.MethodPut, "/api/v1/enterprise/organizations/"+path, k, body, &m)
			return r, m
		}
		r, m := put(key, org.ID+"/domains/settings", map[string]any{"domain": "Example.NET", "is_global_target_notifications_enabled": false})
		s, _ := m["settings"].(map[string]any)
		if r.Status != 200 || m["asset"] != "example.net" || m["type"] != "dns" || s["is_global_target_notifications_enabled"] != false || s["is_global_continuous_scans_enabled"] != true {
			t.Fatalf("notifications off: %d %s", r.Status, r.Body)
		}
		r, m = put(key, org.ID+"/ip-ranges/settings", map[string]any{"ip_range": "8.8.4.0/24", "is_global_continuous_scans_enabled": false, "is_redacted_from_community_platform": true})
		s, _ = m["settings"].(map[string]any)
		if r.Status != 200 || m["type"] != "ip-range" || s["is_global_continuous_scans_enabled"] != false || s["is_redacted_from_community_platform"] != true || s["is_global_target_notifications_enabled"] != true {
			t.Fatalf("continuous scans off: %d %s", r.Status, r.Body)
		}
		// Setting one flag keeps the others.
		r, m = put(key, org.ID+"/ip-ranges/settings", map[string]any{"ip_range": "8.8.4.0/24", "is_redacted_from_community_platform": false})
		if s, _ = m["settings"].(map[string]any); r.Status != 200 || s["is_global_continuous_scans_enabled"] != false {
			t.Fatalf("one flag: %d %s", r.Status, r.Body)
		}
		as, err := scanstore.New(e.Store).Assets(ctx, org.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range as {
			if want := a.Value != "8.8.4.0/24"; a.Continuous != want {
				t.Errorf("%s: continuous %v, want %v", a.Value, a.Continuous, want)
			}
		}

		// Notifications off: the same change raises an alert for example.com only.
		worker := &alerts.Worker{DB: e.Store, Alerts: alertstore.New(e.Store)}
		step := func() {
			t.Helper()
			if _, err := worker.Step(ctx); err != nil {
				t.Fatal(err)
			}
		}
		hosts := map[string]host.Host{}
		for _, d := range []string{"example.com", "example.net"} {
			hosts[d] = hostWrite(t, e, nil, host.Host{Host: "vpn." + d, Domain: d, TLD: d[len(d)-3:], Subdomain: "vpn", IPAddress: "192.0.2.10",
				NetworkServices: []host.Service{{Port: 443, Protocol: "tcp"}}}, ledger.Source{Name: "nmap"})
		}
		step()
		e.Clock.Advance(2 * time.Hour)
		for d, h := range hosts {
			hostWrite(t, e, &h, host.Host{Host: "vpn." + d, IPAddress: "192.0.2.10", NetworkServices: []host.Service{{Port: 443, Protocol: "tcp"}, {Port: 3389, Protocol: "tcp"}}},
				ledger.Source{Name: "nmap", Ports: []int{443, 3389}})
		}
		step()
		var list []struct{ Host, Type string }
		if r := doJSON(t, e, http.MethodGet, "/api/v1/enterprise/alerts", key, nil, &list); r.Status != 200 || len(list) != 1 || list[0].Host != "vpn.example.com" {
			t.Fatalf("alerts with example.net's notifications off: %d %s", r.Status, r.Body)
		}

		// organization_id moves the asset, settings with it.
		r, m = put(key, org.ID+"/domains/settings", map[string]any{"domain": "example.net", "organization_id": second.ID})
		if s, _ = m["settings"].(map[string]any); r.Status != 200 || m["organization_id"] != second.ID || s["is_global_target_notifications_enabled"] != false {
			t.Fatalf("move: %d %s", r.Status, r.Body)
		}
		var ents []struct{ Asset, Type string }
		if doJSON(t, e, http.MethodGet, "/api/v1/enterprise/entities?org="+second.ID, key, nil, &ents); len(ents) != 1 || ents[0].Asset != "example.net" {
			t.Errorf("second organization after the move: %v", ents)
		}
		for _, c := range []struct {
			key, path string
			body      any
			want      int
		}{
			{key, org.ID + "/domains/settings", map[string]any{"domain": "example.net"}, 404},    // moved away
			{key, org.ID + "/domains/settings", map[string]any{}, 400},                           // no domain
			{key, org.ID + "/domains/settings", map[string]any{"domain": "not a domain"}, 400},   // not a domain
			{key, org.ID + "/ip-ranges/settings", map[string]any{"ip_range": "10.0.0.0/8"}, 400}, // private
			{key, org.ID + "/ip-ranges/settings", map[string]any{"ip_range": "8.8.8.0/24"}, 404}, // not an asset
			{other, org.ID + "/domains/settings", map[string]any{"domain": "example.com"}, 404},  // another account's organization
			{key, org.ID + "/domains/settings", map[string]any{"domain": "example.com", "organization_id": "nope"}, 404},
			{key, org.ID + "/domains/settings", `{"domain":"example.com","is_global_continuous_scans_enabled":"yes"}`, 400},
		} {
			if r, _ := put(c.key, c.path, c.body); r.Status != c.want {
				t.Errorf("%s %v: %d %s", c.path, c.body, r.Status, r.Body)
			}
		}
	})
}
