package api_test

import (
	"net/http"
	"testing"

	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/periscope"
)

func TestEnterpriseEntitiesAndAssets(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		seedHosts(t, e)
		_, key := e.Account(periscope.Account{Company: "Ent A", Plan: "enterprise", Enterprise: true, CreditsPerMonth: 10, MaxResultsPerRequest: 100})
		_, other := e.Account(periscope.Account{Company: "Ent B", Plan: "enterprise", Enterprise: true, CreditsPerMonth: 10, MaxResultsPerRequest: 100})
		var org struct {
			ID string `json:"id"`
		}
		r := e.Do(http.MethodPost, "/api/v1/enterprise/organizations", key, map[string]string{"name": "Acme"})
		if r.Status != http.StatusCreated {
			t.Fatalf("create organization: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &org)
		base := "/api/v1/enterprise/organizations/" + org.ID
		for path, body := range map[string]map[string]string{
			base + "/domains":   {"domain": "acme.com"},
			base + "/ip-ranges": {"ip_range": "52.1.2.16/30"},
		} {
			if r := e.Do(http.MethodPost, path, key, body); r.Status != http.StatusCreated {
				t.Fatalf("%s: %d %s", path, r.Status, r.Body)
			}
		}
		var otherOrg struct {
			ID string `json:"id"`
		}
		e.Do(http.MethodPost, "/api/v1/enterprise/organizations", other, map[string]string{"name": "Other"}).JSON(t, &otherOrg)
		if r := e.Do(http.MethodPost, "/api/v1/enterprise/organizations/"+otherOrg.ID+"/domains", other, map[string]string{"domain": "acme-shop.com"}); r.Status != http.StatusCreated {
			t.Fatalf("other's domain: %d %s", r.Status, r.Body)
		}

		type ent struct{ Asset, Type string }
		for _, q := range []string{"?org=" + org.ID, "?org=acme", ""} {
			var got []ent
			r := e.Do(http.MethodGet, "/api/v1/enterprise/entities"+q, key, nil)
			r.JSON(t, &got)
			if r.Status != 200 || len(got) != 2 || got[0] != (ent{"acme.com", "domain"}) || got[1] != (ent{"52.1.2.16/30", "ip-range"}) {
				t.Errorf("entities%s = %d %+v", q, r.Status, got)
			}
		}
		if r := e.Do(http.MethodGet, "/api/v1/enterprise/entities?org="+otherOrg.ID, key, nil); r.Status != http.StatusNotFound {
			t.Errorf("another account's organization: %d %s", r.Status, r.Body)
		}

		var hs []host.Host
		r = e.Do(http.MethodGet, "/api/v1/enterprise/assets?entity=ACME.com", key, nil)
		r.JSON(t, &hs)
		if r.Status != 200 || len(hs) != 13 || hs[0].Host != "h11.acme.com" {
			t.Errorf("domain assets: %d, %d hosts", r.Status, len(hs))
		}
		r = e.Do(http.MethodGet, "/api/v1/enterprise/assets?entity=52.1.2.16/30", key, nil)
		r.JSON(t, &hs)
		if r.Status != 200 || len(hs) != 4 {
			t.Errorf("range assets: %d, %d hosts", r.Status, len(hs))
		}
		for _, c := range []struct {
			q      string
			status int
		}{
			{"", http.StatusUnprocessableEntity},
			{"?entity=acme-shop.com", http.StatusNotFound}, // another account's
			{"?entity=52.1.2.0/24", http.StatusNotFound},   // not an entity, though it covers one
		} {
			if r := e.Do(http.MethodGet, "/api/v1/enterprise/assets"+c.q, key, nil); r.Status != c.status {
				t.Errorf("assets%s: %d %s, want %d", c.q, r.Status, r.Body, c.status)
			}
		}
		_, free := e.Account(periscope.Account{Company: "Free", Plan: "free", CreditsPerMonth: 10})
		if r := e.Do(http.MethodGet, "/api/v1/enterprise/entities", free, nil); r.Status != http.StatusForbidden {
			t.Errorf("free account: %d", r.Status)
		}
	})
}
