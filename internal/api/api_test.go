package api_test

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// TestMain checks, after a full run, that every registered route produced at
// least one response validated against the OpenAPI document.
func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if code == 0 && flag.Lookup("test.run").Value.String() == "" && !testing.Short() {
		covered := map[string]bool{}
		for _, c := range apitest.Covered() {
			covered[c] = true
		}
		var missing []string
		for _, r := range api.NewServer(api.DefaultConfig(), api.Deps{}).Routes() {
			if !covered[r] {
				missing = append(missing, r)
			}
		}
		if len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: no test produced a validated response for: %s\n", strings.Join(missing, ", "))
			code = 1
		}
	}
	os.Exit(code)
}

func each(t *testing.T, fn func(t *testing.T, e *apitest.Env)) {
	eachWith(t, apitest.Options{}, fn)
}

func eachWith(t *testing.T, o apitest.Options, fn func(t *testing.T, e *apitest.Env)) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) { fn(t, apitest.New(t, engine, o)) })
	}
}

// profiles are the account shapes of the entitlement matrix.
func profiles(e *apitest.Env) map[string]string {
	keys := map[string]string{}
	_, keys["free"] = e.Account(periscope.Account{Company: "Free Co", Plan: "free", CreditsPerMonth: 100})
	_, keys["enterprise"] = e.Account(periscope.Account{Company: "Ent Co", Plan: "enterprise", Enterprise: true, CreditsPerMonth: 3000})
	_, keys["oem"] = e.Account(periscope.Account{Company: "OEM Co", Plan: "enterprise", Enterprise: true, OEM: true, CreditsPerMonth: 3000, OEMCreditsPerMonth: 5000})
	_, keys["oem-spent"] = e.Account(periscope.Account{Company: "Spent Co", Plan: "enterprise", Enterprise: true, OEM: true, CreditsPerMonth: 3000, OEMCreditsPerMonth: 0})
	return keys
}

func TestOpenAPIDocumentsExactlyTheRoutes(t *testing.T) {
	srv := api.NewServer(api.DefaultConfig(), api.Deps{})
	v := apitest.Validator(t, srv.OpenAPI())
	_ = v
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := jsonUnmarshal(srv.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for p, ops := range doc.Paths {
		for m := range ops {
			if m == "parameters" {
				continue
			}
			documented[strings.ToUpper(m)+" "+p] = true
		}
	}
	registered := map[string]bool{}
	for _, r := range srv.Routes() {
		registered[r] = true
		if !documented[r] {
			t.Errorf("route %s is not in the OpenAPI document", r)
		}
	}
	for d := range documented {
		if !registered[d] {
			t.Errorf("the OpenAPI document has %s, which no route serves", d)
		}
	}
}

func TestAuthStatusShape(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		_, key := e.Account(periscope.Account{Company: "Acme", Plan: "free", CreditsPerMonth: 100, MaxResultsPerRequest: 500})
		r := e.Do("GET", "/api/v1/auth/status", key, nil)
		if r.Status != 200 {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		want := `{"status":200,"message":"","user":{"company":"Acme","email":"acme@example.com","first_name":"Test","last_name":"User","plan":"free"},"user_credits":{"credits_usage":0,"max_results_per_request":500,"remaining_credits":100,"total_credits_per_month":100}}` + "\n"
		if diff := cmp.Diff(want, string(r.Body)); diff != "" {
			t.Errorf("body (-want +got):\n%s", diff)
		}
		for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-Request-ID"} {
			if r.Header.Get(h) == "" {
				t.Errorf("missing header %s", h)
			}
		}
		// Header names are matched case-insensitively (bbot sends x-api-key).
		req, _ := http.NewRequest("GET", e.HTTP.URL+"/api/v1/auth/status", nil)
		req.Header["x-api-key"] = []string{key}
		if r := e.Send(req); r.Status != 200 {
			t.Errorf("lower-case header: %d", r.Status)
		}
	})
}

func TestUnauthorized(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		acct, key := e.Account(periscope.Account{Company: "Acme", CreditsPerMonth: 1})
		keys, _ := e.Store.Keys(t.Context(), acct.ID)
		_, revokedKey := e.Account(periscope.Account{Company: "Gone", CreditsPerMonth: 1})
		other, _ := e.Store.AccountByCompany(t.Context(), "Gone")
		ks, _ := e.Store.Keys(t.Context(), other.ID)
		if _, err := e.Store.RevokeKey(t.Context(), ks[0].ID); err != nil {
			t.Fatal(err)
		}
		_ = keys
		var bodies []string
		for name, k := range map[string]string{"missing": "", "unknown": strings.Repeat("a", 64), "revoked": revokedKey} {
			r := e.Do("GET", "/api/v1/auth/status", k, nil)
			if r.Status != 401 || r.ErrorCode() != "unauthorized" {
				t.Errorf("%s key: %d %s", name, r.Status, r.Body)
			}
			bodies = append(bodies, string(r.Body))
		}
		if bodies[0] != bodies[1] || bodies[1] != bodies[2] {
			t.Errorf("401 bodies differ: %q", bodies)
		}
		if r := e.Do("GET", "/api/v1/auth/status", key, nil); r.Status != 200 {
			t.Errorf("good key: %d", r.Status)
		}
	})
}

func TestFailedAuthLimitedPerIP(t *testing.T) {
	cfg := api.DefaultConfig()
	cfg.AuthFailLimit = 3
	e := apitest.New(t, "sqlite", apitest.Options{Config: &cfg})
	_, key := e.Account(periscope.Account{Company: "Acme", CreditsPerMonth: 1})
	for i := 0; i < 3; i++ {
		if r := e.Do("GET", "/api/v1/auth/status", "bad-key", nil); r.Status != 401 {
			t.Fatalf("attempt %d: %d", i, r.Status)
		}
	}
	r := e.Do("GET", "/api/v1/auth/status", "bad-key", nil)
	if r.Status != 429 || r.Header.Get("Retry-After") == "" {
		t.Fatalf("after 3 failures: %d %s", r.Status, r.Body)
	}
	// Issue 12, defect 10: a valid key from the same address (a NAT'd
	// office) is not locked out by someone else's bad keys.
	if r := e.Do("GET", "/api/v1/auth/status", key, nil); r.Status != 200 {
		t.Fatalf("valid key after 3 failures from its address: %d %s", r.Status, r.Body)
	}
	e.Clock.Advance(time.Minute)
	if r := e.Do("GET", "/api/v1/auth/status", "bad-key", nil); r.Status != 401 {
		t.Fatalf("next minute: %d", r.Status)
	}
}

func TestErrorsAreJSON(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		_, key := e.Account(periscope.Account{Company: "Acme", Enterprise: true, CreditsPerMonth: 10})
		cases := []struct {
			name, method, path, ct string
			body                   any
			status                 int
			code                   string
		}{
			{"unknown route", "GET", "/api/v1/nope", "", nil, 404, "not_found"},
			{"unknown root", "GET", "/", "", nil, 404, "not_found"},
			{"wrong method", "PUT", "/api/v1/auth/status", "", nil, 405, "method_not_allowed"},
			{"malformed JSON", "POST", "/api/v1/enterprise/organizations", "application/json", `{"name":`, 400, "invalid_json"},
			{"not an object", "POST", "/api/v1/enterprise/organizations", "application/json", `[1,2]`, 400, "invalid_json"},
			{"string for int", "POST", "/api/v1/enterprise/organizations", "application/json", `{"name":12}`, 400, "invalid_parameter"},
			{"missing name", "POST", "/api/v1/enterprise/organizations", "application/json", `{"nam":"x"}`, 400, "missing_parameter"},
			{"415", "POST", "/api/v1/enterprise/organizations", "text/plain", `name=x`, 415, "unsupported_media_type"},
			{"415 form fields", "POST", "/api/v1/enterprise/organizations", "application/x-www-form-urlencoded", `name=x`, 415, "unsupported_media_type"},
			{"413", "POST", "/api/v1/enterprise/organizations", "application/json", `{"name":"` + strings.Repeat("x", 1<<20) + `"}`, 413, "payload_too_large"},
		}
		for _, c := range cases {
			req, _ := http.NewRequest(c.method, e.HTTP.URL+c.path, strings.NewReader(fmt.Sprint(orEmpty(c.body))))
			if c.ct != "" {
				req.Header.Set("Content-Type", c.ct)
			}
			req.Header.Set("X-API-KEY", key)
			r := e.Send(req)
			if r.Status != c.status || r.ErrorCode() != c.code || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
				t.Errorf("%s: %d %s %s", c.name, r.Status, r.Header.Get("Content-Type"), r.Body)
			}
			if c.status == 405 && r.Header.Get("Allow") != "GET" {
				t.Errorf("405 Allow = %q", r.Header.Get("Allow"))
			}
		}
		orgs, _ := e.Store.Accounts(t.Context())
		for _, a := range orgs {
			if os, _ := e.Store.Organizations(t.Context(), a.ID); len(os) != 0 {
				t.Errorf("a failed request created an organization: %+v", os)
			}
		}
		// curl -d sends a JSON object as a form: it is taken as JSON.
		req, _ := http.NewRequest("POST", e.HTTP.URL+"/api/v1/enterprise/organizations", strings.NewReader(`{"name":"Curl"}`))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-API-KEY", key)
		if r := e.Send(req); r.Status != 201 {
			t.Errorf("JSON sent as a form: %d %s", r.Status, r.Body)
		}
		// Unknown fields are ignored; a missing Content-Type is accepted.
		req, _ = http.NewRequest("POST", e.HTTP.URL+"/api/v1/enterprise/organizations", strings.NewReader(`{"name":"Ok","bogus":1}`))
		req.Header.Set("X-API-KEY", key)
		if r := e.Send(req); r.Status != 201 {
			t.Errorf("unknown field / no content type: %d %s", r.Status, r.Body)
		}
	})
}

func orEmpty(v any) any {
	if v == nil {
		return ""
	}
	return v
}

func TestOrganizationsAndAssets(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		_, key := e.Account(periscope.Account{Company: "Acme", Enterprise: true, CreditsPerMonth: 10})
		r := e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]string{"name": "Main", "description": "d"})
		if r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		var org struct {
			ID        string `json:"id"`
			IsDefault bool   `json:"is_default"`
		}
		r.JSON(t, &org)
		if !org.IsDefault {
			t.Error("first org is not the default")
		}
		second := e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]string{"name": "Second"}).Map(t)
		base := "/api/v1/enterprise/organizations/" + org.ID
		steps := []struct {
			method, path string
			body         any
			status       int
			want         string
		}{
			{"POST", base + "/domains", map[string]string{"domain": "Bücher.DE."}, 201, `"asset":"xn--bcher-kva.de"`},
			{"POST", base + "/domains", map[string]string{"domain": "xn--bcher-kva.de"}, 200, `"type":"dns"`},
			{"POST", base + "/domains", map[string]string{"domain": "http://x.com"}, 400, `invalid_parameter`},
			{"POST", base + "/domains", map[string]string{"domain": "co.uk"}, 400, `public suffix`},
			{"POST", base + "/domains", map[string]string{"domain": "exa mple.com"}, 400, `invalid_parameter`},
			{"POST", base + "/domains", map[string]string{}, 400, `missing_parameter`},
			{"POST", base + "/ip-ranges", map[string]string{"ip_range": "8.8.8.8"}, 201, `"asset":"8.8.8.8/32"`},
			{"POST", base + "/ip-ranges", map[string]string{"ip_range": "10.0.0.0/8"}, 400, `not public`},
			{"POST", base + "/ip-ranges", map[string]string{"ip_range": "100.64.1.0/24"}, 400, `not public`},
			{"POST", base + "/ip-ranges", map[string]string{"ip_range": "9.0.0.0/8"}, 400, `larger than`},
			{"GET", base, nil, 200, `"domains":["xn--bcher-kva.de"],"ip_ranges":["8.8.8.8/32"]`},
			{"DELETE", base + "/ip-ranges", map[string]string{"ip_range": "8.8.8.8/32"}, 200, `"type":"ip-range"`},
			{"DELETE", base + "/domains", map[string]string{"domain": "xn--bcher-kva.de"}, 200, `"status":"success"`},
			{"DELETE", base + "/domains", map[string]string{"domain": "xn--bcher-kva.de"}, 404, `not_found`},
			{"GET", "/api/v1/enterprise/organizations/not-a-uuid", nil, 404, `not_found`},
			{"DELETE", base, nil, 400, `default_organization`},
			{"DELETE", "/api/v1/enterprise/organizations/" + second["id"].(string), nil, 200, `success`},
			{"GET", "/api/v1/enterprise/organizations", nil, 200, `"name":"Main"`},
		}
		for _, s := range steps {
			r := e.Do(s.method, s.path, key, s.body)
			if r.Status != s.status || !strings.Contains(string(r.Body), s.want) {
				t.Errorf("%s %s %v: %d %s (want %d containing %s)", s.method, s.path, s.body, r.Status, r.Body, s.status, s.want)
			}
		}
		// Enterprise management is free of credits.
		if r := e.Do("GET", "/api/v1/auth/status", key, nil); !strings.Contains(string(r.Body), `"credits_usage":0`) {
			t.Errorf("enterprise management charged credits: %s", r.Body)
		}
	})
}

// TestBOLA: three accounts; every org/asset route on another account's
// organization answers 404 like an unknown one, and changes nothing.
func TestBOLA(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		type acct struct{ key, org string }
		var as []acct
		for _, name := range []string{"A", "B", "C"} {
			_, key := e.Account(periscope.Account{Company: name, Enterprise: true, CreditsPerMonth: 10})
			e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]string{"name": name + " default"})
			r := e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]string{"name": name + " second"})
			org := r.Map(t)["id"].(string)
			dom := strings.ToLower(name) + "-owned.com"
			if r := e.Do("POST", "/api/v1/enterprise/organizations/"+org+"/domains", key, map[string]string{"domain": dom}); r.Status != 201 {
				t.Fatalf("setup: %d %s", r.Status, r.Body)
			}
			as = append(as, acct{key, org})
		}
		snapshot := func() string {
			var b strings.Builder
			for _, a := range as {
				b.WriteString(string(e.Do("GET", "/api/v1/enterprise/organizations", a.key, nil).Body))
				b.WriteString(string(e.Do("GET", "/api/v1/enterprise/organizations/"+a.org, a.key, nil).Body))
			}
			return b.String()
		}
		before := snapshot()
		unknown := "/api/v1/enterprise/organizations/00000000-0000-4000-8000-000000000000"
		wantBody := string(e.Do("GET", unknown, as[0].key, nil).Body)
		for i, caller := range as {
			for j, victim := range as {
				if i == j {
					continue
				}
				base := "/api/v1/enterprise/organizations/" + victim.org
				victimDomain := strings.ToLower(string(rune('a'+j))) + "-owned.com"
				for _, c := range []struct {
					method, path string
					body         any
				}{
					{"GET", base, nil},
					{"DELETE", base, nil},
					{"POST", base + "/domains", map[string]string{"domain": "attacker.com"}},
					{"DELETE", base + "/domains", map[string]string{"domain": victimDomain}},
					{"POST", base + "/ip-ranges", map[string]string{"ip_range": "1.1.1.0/24"}},
					{"DELETE", base + "/ip-ranges", map[string]string{"ip_range": "1.1.1.0/24"}},
				} {
					r := e.Do(c.method, c.path, caller.key, c.body)
					if r.Status != 404 || r.ErrorCode() != "not_found" {
						t.Errorf("account %d → %s %s of account %d: %d %s", i, c.method, c.path, j, r.Status, r.Body)
					}
					if c.method == "GET" && strings.Replace(string(r.Body), victim.org, "00000000-0000-4000-8000-000000000000", 1) != wantBody {
						t.Errorf("foreign org answer differs from unknown org: %s vs %s", r.Body, wantBody)
					}
				}
				// Claiming another account's domain is a conflict, never a takeover.
				own := e.Do("GET", "/api/v1/enterprise/organizations", caller.key, nil)
				var orgs []map[string]any
				own.JSON(t, &orgs)
				r := e.Do("POST", "/api/v1/enterprise/organizations/"+orgs[0]["id"].(string)+"/domains", caller.key, map[string]string{"domain": victimDomain})
				if r.Status != 409 {
					t.Errorf("claim of another account's domain: %d %s", r.Status, r.Body)
				}
			}
		}
		if after := snapshot(); after != before {
			t.Errorf("cross-account requests changed state:\nbefore %s\nafter  %s", before, after)
		}
	})
}

// TestEntitlementMatrix: every core route × {free, enterprise, enterprise+OEM,
// OEM credits spent}.
func TestEntitlementMatrix(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		keys := profiles(e)
		type want map[string]int
		routes := []struct {
			method, path string
			body         any
			want         want
		}{
			{"GET", "/api/v1/auth/status", nil, want{"free": 200, "enterprise": 200, "oem": 200, "oem-spent": 200}},
			{"GET", "/api/v1/enterprise/organizations", nil, want{"free": 403, "enterprise": 200, "oem": 200, "oem-spent": 200}},
			{"POST", "/api/v1/enterprise/organizations", map[string]string{"name": "x"}, want{"free": 403, "enterprise": 201, "oem": 201, "oem-spent": 201}},
			{"POST", "/api/v1/oem/account/audit-logs", map[string]any{}, want{"free": 403, "enterprise": 403, "oem": 200, "oem-spent": 200}},
			{"POST", "/api/v1/oem/account/credits", map[string]any{}, want{"free": 403, "enterprise": 403, "oem": 200, "oem-spent": 200}},
		}
		for _, rt := range routes {
			for profile, status := range rt.want {
				r := e.Do(rt.method, rt.path, keys[profile], rt.body)
				if r.Status != status {
					t.Errorf("%s %s as %s: %d %s, want %d", rt.method, rt.path, profile, r.Status, r.Body, status)
				}
				if status == 403 && !strings.Contains(r.ErrorCode(), "required") {
					t.Errorf("%s %s as %s: code %q", rt.method, rt.path, profile, r.ErrorCode())
				}
			}
		}
	})
}

func TestRateLimitWithFrozenClock(t *testing.T) {
	cfg := api.DefaultConfig()
	cfg.RateLimit = 3 // the audit logs' 15 of FullHunt's 60: 1
	e := apitest.New(t, "sqlite", apitest.Options{Config: &cfg})
	e.Clock.Set(time.Date(2026, 11, 22, 12, 0, 45, 0, time.UTC))
	_, key := e.Account(periscope.Account{Company: "Acme", OEM: true, CreditsPerMonth: 10})
	for i := 0; i < 3; i++ {
		r := e.Do("GET", "/api/v1/auth/status", key, nil)
		if r.Status != 200 || r.Header.Get("X-RateLimit-Remaining") != fmt.Sprint(2-i) || r.Header.Get("X-RateLimit-Limit") != "3" {
			t.Fatalf("request %d: %d remaining=%s", i, r.Status, r.Header.Get("X-RateLimit-Remaining"))
		}
	}
	r := e.Do("GET", "/api/v1/auth/status", key, nil)
	var body struct {
		RetryAfter int `json:"retry_after"`
	}
	r.JSON(t, &body)
	if r.Status != 429 || r.Header.Get("Retry-After") != "15" || body.RetryAfter != 15 || r.ErrorCode() != "rate_limited" {
		t.Fatalf("4th: %d Retry-After=%s %s", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	if r.Header.Get("X-RateLimit-Reset") != fmt.Sprint(time.Date(2026, 11, 22, 12, 1, 0, 0, time.UTC).Unix()) {
		t.Errorf("X-RateLimit-Reset = %s", r.Header.Get("X-RateLimit-Reset"))
	}
	// The audit logs have their own count, and a lower limit.
	if r := e.Do("POST", "/api/v1/oem/account/audit-logs", key, map[string]any{}); r.Status != 200 {
		t.Fatalf("audit 1: %d", r.Status)
	}
	if r := e.Do("POST", "/api/v1/oem/account/audit-logs", key, map[string]any{}); r.Status != 429 {
		t.Fatalf("audit 2: %d", r.Status)
	}
	e.Clock.Advance(15 * time.Second)
	if r := e.Do("GET", "/api/v1/auth/status", key, nil); r.Status != 200 {
		t.Fatalf("next window: %d", r.Status)
	}
}

func TestCreditsUnderConcurrencyThroughHTTP(t *testing.T) {
	cfg := api.DefaultConfig()
	cfg.RateLimit = 0 // the test is about credits, not rate limits
	for _, oem := range []bool{false, true} {
		eachWith(t, apitest.Options{Config: &cfg}, func(t *testing.T, e *apitest.Env) {
			const credits, requests = 20, 150
			acct, key := e.Account(periscope.Account{Company: "Acme", OEM: true, CreditsPerMonth: credits, OEMCreditsPerMonth: credits})
			var failNext atomic.Bool
			e.Server.HandleTestRoute("POST /api/v1/test/charged", oem, func(w http.ResponseWriter, r *http.Request) {
				if failNext.Load() {
					w.WriteHeader(500)
					return
				}
				w.Write([]byte(`{}`))
			})
			plain := &http.Client{}
			var ok, exhausted, other atomic.Int64
			var wg sync.WaitGroup
			for i := 0; i < requests; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					req, _ := http.NewRequest("POST", e.HTTP.URL+"/api/v1/test/charged", strings.NewReader(`{}`))
					req.Header.Set("X-API-KEY", key)
					resp, err := plain.Do(req)
					if err != nil {
						other.Add(1)
						return
					}
					resp.Body.Close()
					switch resp.StatusCode {
					case 200:
						ok.Add(1)
					case 403:
						exhausted.Add(1)
					default:
						other.Add(1)
					}
				}()
			}
			wg.Wait()
			if ok.Load() != credits || exhausted.Load() != requests-credits || other.Load() != 0 {
				t.Fatalf("oem=%v: ok=%d exhausted=%d other=%d", oem, ok.Load(), exhausted.Load(), other.Load())
			}
			a, _ := e.Store.Account(t.Context(), acct.ID)
			used := a.CreditsUsed
			if oem {
				used = a.OEMCreditsUsed
			}
			if used != credits {
				t.Fatalf("used %d, want %d", used, credits)
			}
			if !oem {
				if r := e.Do("GET", "/api/v1/auth/status", key, nil); !strings.Contains(string(r.Body), `"credits_usage":20,`) || !strings.Contains(string(r.Body), `"remaining_credits":0,`) {
					t.Errorf("auth/status after spending: %s", r.Body)
				}
			}
		})
	}
}

func TestFailedRequestsAreNotChargedAndMonthRenews(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		e.Clock.Set(time.Date(2026, 11, 30, 23, 59, 0, 0, time.UTC))
		_, key := e.Account(periscope.Account{Company: "Acme", CreditsPerMonth: 2})
		var fail atomic.Bool
		e.Server.HandleTestRoute("GET /api/v1/test/charged", false, func(w http.ResponseWriter, r *http.Request) {
			if fail.Load() {
				w.WriteHeader(404)
				w.Write([]byte(`{"status":404,"error":"not_found","message":"x"}`))
				return
			}
			w.Write([]byte(`{}`))
		})
		plain := &http.Client{}
		get := func() int {
			req, _ := http.NewRequest("GET", e.HTTP.URL+"/api/v1/test/charged", nil)
			req.Header.Set("X-API-KEY", key)
			resp, err := plain.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		fail.Store(true)
		for i := 0; i < 5; i++ {
			if s := get(); s != 404 {
				t.Fatalf("failing: %d", s)
			}
		}
		fail.Store(false)
		if get() != 200 || get() != 200 {
			t.Fatal("two credits were not usable after failed requests")
		}
		r := e.Do("GET", "/api/v1/auth/status", key, nil)
		if get() != 403 || !strings.Contains(string(r.Body), `"remaining_credits":0`) {
			t.Fatalf("third request not refused: %s", r.Body)
		}
		e.Clock.Set(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
		if r := e.Do("GET", "/api/v1/auth/status", key, nil); !strings.Contains(string(r.Body), `"credits_usage":0,`) {
			t.Fatalf("not renewed on the first: %s", r.Body)
		}
		if s := get(); s != 200 {
			t.Fatalf("after renewal: %d", s)
		}
	})
}

func TestOEMAuditTrail(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		keys := profiles(e)
		tags := map[string]any{"tenant": "t-42", "ticket": 7}
		if r := e.Do("POST", "/api/v1/oem/account/credits", keys["oem"], map[string]any{"query_tags": tags, "api_key": "secret-value"}); r.Status != 200 {
			t.Fatalf("credits: %d %s", r.Status, r.Body)
		}
		if r := e.Do("POST", "/api/v1/oem/account/credits", keys["oem"], map[string]any{"query_tags": "not-an-object"}); r.Status != 400 {
			t.Fatalf("bad query_tags: %d %s", r.Status, r.Body)
		}
		e.Do("POST", "/api/v1/oem/account/credits", keys["oem-spent"], map[string]any{"query_tags": map[string]any{"who": "spent"}})
		r := e.Do("POST", "/api/v1/oem/account/audit-logs", keys["oem"], map[string]any{"start_date": "2026-11-22", "end_date": "2026-11-22"})
		var out struct {
			Response struct {
				Logs []struct {
					Endpoint       string         `json:"endpoint"`
					StatusCode     int            `json:"status_code"`
					CreditsCharged int            `json:"credits_charged"`
					QueryTags      map[string]any `json:"query_tags"`
					Request        map[string]any `json:"request"`
					APIKey         string         `json:"api_key"`
				} `json:"logs"`
				Pagination struct {
					Total   int `json:"total"`
					PerPage int `json:"per_page"`
				} `json:"pagination"`
			} `json:"response"`
		}
		r.JSON(t, &out)
		logs := out.Response.Logs
		if len(logs) != 2 || out.Response.Pagination.Total != 2 || out.Response.Pagination.PerPage != 50 {
			t.Fatalf("logs: %s", r.Body)
		}
		// Newest first: the 400, then the 200 with its tags.
		if logs[0].StatusCode != 400 || logs[1].StatusCode != 200 || logs[1].QueryTags["tenant"] != "t-42" || logs[1].Endpoint != "/oem/account/credits" {
			t.Errorf("logs: %s", r.Body)
		}
		if logs[1].Request["api_key"] != "[redacted]" || strings.Contains(string(r.Body), "secret-value") || strings.Contains(string(r.Body), keys["oem"]) {
			t.Errorf("secrets reached the audit trail: %s", r.Body)
		}
		if len(logs[1].APIKey) != 8 || !strings.HasPrefix(keys["oem"], logs[1].APIKey) {
			t.Errorf("api_key prefix %q", logs[1].APIKey)
		}
		for _, bad := range []map[string]any{{"page": 0}, {"start_date": "22/11/2026"}, {"start_date": "2026-11-23", "end_date": "2026-11-22"}, {"page": "1"}} {
			if r := e.Do("POST", "/api/v1/oem/account/audit-logs", keys["oem"], bad); r.Status != 400 {
				t.Errorf("audit-logs %v: %d", bad, r.Status)
			}
		}
		// Outside the window: nothing.
		r = e.Do("POST", "/api/v1/oem/account/audit-logs", keys["oem"], map[string]any{"start_date": "2026-11-23"})
		if !strings.Contains(string(r.Body), `"logs":[]`) {
			t.Errorf("future window: %s", r.Body)
		}
	})
}

func TestOperationsRoutes(t *testing.T) {
	e := apitest.New(t, "sqlite")
	// In order: /metrics lists request counts once a request was served.
	for _, c := range []struct{ path, want string }{
		{"/healthz", `"status":"ok"`},
		{"/readyz", `"status":"ready"`},
		{"/metrics", "periscope_http_requests_total"},
		{"/api/v1/openapi.json", `"openapi": "3.1.0"`},
		{"/docs", "openapi.json"},
	} {
		path, want := c.path, c.want
		r := e.Do("GET", path, "", nil)
		if r.Status != 200 || !strings.Contains(string(r.Body), want) {
			t.Errorf("%s: %d %.200s", path, r.Status, r.Body)
		}
	}
	e.Server.Drain()
	if r := e.Do("GET", "/readyz", "", nil); r.Status != 503 || r.Header.Get("Retry-After") == "" {
		t.Errorf("draining readyz: %d", r.Status)
	}
	if r := e.Do("GET", "/api/v1/auth/status", "", nil); r.Status != 503 {
		t.Errorf("draining api: %d", r.Status)
	}
}
