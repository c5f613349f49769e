package api_test

import (
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// TestEntitlementMatrixEveryRoute sends every registered route (capability
// routes included, as they are added) as each profile and checks the
// entitlement outcome: refused with the right 403 code, or not refused.
// Bodies are minimal, so an allowed request may still be a 400 or 404; what
// matters here is that it is never a 401/403, and that a refused one is.
func TestEntitlementMatrixEveryRoute(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		keys := profiles(e)
		_, keys["free-spent"] = e.Account(periscope.Account{Company: "Free Spent", Plan: "free", CreditsPerMonth: 0})
		needs := e.Server.RouteNeeds()
		routes := make([]string, 0, len(needs))
		for r := range needs {
			routes = append(routes, r)
		}
		sort.Strings(routes)
		profile := map[string]periscope.Account{
			"free":       {},
			"free-spent": {},
			"enterprise": {Enterprise: true},
			"oem":        {Enterprise: true, OEM: true},
			"oem-spent":  {Enterprise: true, OEM: true},
		}
		for _, route := range routes {
			need := needs[route]
			if need == "public" {
				continue
			}
			entitlement, pool, _ := strings.Cut(need, "/")
			method, path, _ := strings.Cut(route, " ")
			path = strings.NewReplacer("{org_id}", "00000000-0000-4000-8000-000000000000", "{domain}", "example.com", "{host}", "www.example.com").Replace(path)
			for name, p := range profile {
				var want string // expected error code, "" = must not be refused
				switch {
				case entitlement == "enterprise" && !p.Enterprise:
					want = "enterprise_required"
				case entitlement == "oem" && !p.OEM:
					want = "oem_required"
				case entitlement == "paid" && !p.Enterprise && !p.OEM:
					want = "forbidden" // the free plan (the MCP endpoint)
				case pool == "oem" && name == "oem-spent":
					want = "oem_credits_exhausted"
				case pool == "monthly" && name == "free-spent":
					want = "credits_exhausted"
				}
				var body any
				if method != http.MethodGet {
					body = map[string]any{}
				}
				r := e.Do(method, path, keys[name], body)
				switch {
				case want != "" && (r.Status != 403 || r.ErrorCode() != want):
					t.Errorf("%s as %s: %d %s, want 403 %s", route, name, r.Status, r.Body, want)
				case want == "" && (r.Status == 401 || r.Status == 403 || r.Status == 429 || r.Status >= 500):
					t.Errorf("%s as %s: refused %d %s", route, name, r.Status, r.Body)
				}
			}
		}
	})
}

func TestPanicIsJSON500AndRefunded(t *testing.T) {
	e := apitest.New(t, "sqlite")
	e.Server.HandlePanicRoute("GET /api/v1/test/panic")
	_, key := e.Account(periscope.Account{Company: "Acme", CreditsPerMonth: 1})
	req, _ := http.NewRequest("GET", e.HTTP.URL+"/api/v1/test/panic", nil)
	req.Header.Set("X-API-KEY", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 500 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("panic: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if r := e.Do("GET", "/api/v1/auth/status", key, nil); !strings.Contains(string(r.Body), `"remaining_credits":1`) {
		t.Fatalf("a panicking request was charged: %s", r.Body)
	}
}
