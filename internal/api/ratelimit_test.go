package api_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/ratelimit"
	"github.com/periscope-oss/periscope/internal/store"
)

// TestRouteRates keeps the rate of every route in one reviewed table
// (testdata/route_rates.golden, FullHunt's figures at the default
// --rate-limit; "-" for a public route, which takes no key): a route added
// or changed without its rate being decided shows here.
func TestRouteRates(t *testing.T) {
	rates := api.NewServer(api.DefaultConfig(), api.Deps{}).RouteRates()
	routes := make([]string, 0, len(rates))
	for r := range rates {
		routes = append(routes, r)
	}
	sort.Strings(routes)
	var b strings.Builder
	b.WriteString("# route\trequests a minute per key at --rate-limit 60\n")
	for _, r := range routes {
		rate := "-"
		if rates[r] > 0 {
			rate = fmt.Sprint(rates[r])
		}
		fmt.Fprintf(&b, "%s\t%s\n", r, rate)
	}
	golden := filepath.Join("testdata", "route_rates.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("route rates differ from %s (go test -run TestRouteRates -update rewrites it):\n%s", golden, got)
	}
}

// eachLimiter runs fn on each storage engine with the per-key counts in
// memory and, when PERISCOPE_TEST_REDIS is set, in Redis (as several
// instances count them).
func eachLimiter(t *testing.T, cfg api.Config, fn func(t *testing.T, e *apitest.Env)) {
	counters := []string{"memory"}
	url := os.Getenv("PERISCOPE_TEST_REDIS")
	if url != "" {
		counters = append(counters, "redis")
	}
	for _, c := range counters {
		t.Run(c, func(t *testing.T) {
			o := apitest.Options{Config: &cfg}
			if c == "redis" {
				o.Deps = func(d *api.Deps, _ *store.Store) {
					r, err := ratelimit.NewRedis(context.Background(), url, ratelimit.RandomPrefix("api-rates"))
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { r.Close() })
					r.Now = d.Now
					d.Limits = r
				}
			}
			eachWith(t, o, fn)
		})
	}
}

// The frozen clock starts at 12:00:00, so a window ends at 12:01:00.
var windowEnd = time.Date(2026, 11, 22, 12, 1, 0, 0, time.UTC)

// wantServed checks a served request's rate-limit headers.
func wantServed(t *testing.T, what string, r apitest.Response, limit, remaining int) {
	t.Helper()
	h := r.Header
	if r.Status != 200 || h.Get("X-RateLimit-Limit") != fmt.Sprint(limit) || h.Get("X-RateLimit-Remaining") != fmt.Sprint(remaining) ||
		h.Get("X-RateLimit-Reset") != fmt.Sprint(windowEnd.Unix()) {
		t.Fatalf("%s: %d limit=%s remaining=%s reset=%s, want 200 limit=%d remaining=%d: %s", what, r.Status,
			h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Remaining"), h.Get("X-RateLimit-Reset"), limit, remaining, r.Body)
	}
}

// wantLimited checks a refused request: 429, Retry-After and the JSON
// error, and the headers of the route's limit.
func wantLimited(t *testing.T, what string, r apitest.Response, limit, retryAfter int) {
	t.Helper()
	var body struct {
		Status     int    `json:"status"`
		Error      string `json:"error"`
		Message    string `json:"message"`
		RetryAfter int    `json:"retry_after"`
	}
	r.JSON(t, &body)
	if r.Status != 429 || body.Status != 429 || body.Error != "rate_limited" || body.RetryAfter != retryAfter ||
		r.Header.Get("Retry-After") != fmt.Sprint(retryAfter) ||
		!strings.Contains(body.Message, fmt.Sprintf("%d requests per minute", limit)) {
		t.Fatalf("%s: %d Retry-After=%s %s, want 429 after %ds at %d a minute", what, r.Status, r.Header.Get("Retry-After"), r.Body, retryAfter, limit)
	}
	if h := r.Header; h.Get("X-RateLimit-Limit") != fmt.Sprint(limit) || h.Get("X-RateLimit-Remaining") != "0" ||
		h.Get("X-RateLimit-Reset") != fmt.Sprint(windowEnd.Unix()) {
		t.Errorf("%s: limit=%s remaining=%s reset=%s", what, h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Remaining"), h.Get("X-RateLimit-Reset"))
	}
}

func rateAccount(e *apitest.Env, rate int) string {
	_, key := e.Account(periscope.Account{Company: fmt.Sprintf("Rate %d Co", rate), Plan: "enterprise", Enterprise: true, OEM: true,
		CreditsPerMonth: 1000, OEMCreditsPerMonth: 1000, RateLimit: rate})
	return key
}

// TestRouteRateLimits: the OEM credit balance at FullHunt's 30 a minute and
// the audit logs at 15, each counted on its own, while the other routes of
// the same key keep the general 60.
func TestRouteRateLimits(t *testing.T) {
	eachLimiter(t, api.DefaultConfig(), func(t *testing.T, e *apitest.Env) {
		key := rateAccount(e, 0)
		for _, c := range []struct {
			path  string
			limit int
		}{{"/api/v1/oem/account/credits", 30}, {"/api/v1/oem/account/audit-logs", 15}} {
			for i := 1; i <= c.limit; i++ {
				wantServed(t, fmt.Sprintf("%s %d", c.path, i), e.Do("POST", c.path, key, map[string]any{}), c.limit, c.limit-i)
			}
			wantLimited(t, c.path+" past its limit", e.Do("POST", c.path, key, map[string]any{}), c.limit, 60)
		}
		wantServed(t, "auth/status", e.Do("GET", "/api/v1/auth/status", key, nil), 60, 59)
		// A refused request is not counted, and the next window starts again.
		e.Clock.Advance(45 * time.Second)
		wantLimited(t, "credits 45s on", e.Do("POST", "/api/v1/oem/account/credits", key, map[string]any{}), 30, 15)
		e.Clock.Advance(15 * time.Second)
		windowEnd := windowEnd.Add(time.Minute)
		r := e.Do("POST", "/api/v1/oem/account/credits", key, map[string]any{})
		if r.Status != 200 || r.Header.Get("X-RateLimit-Remaining") != "29" || r.Header.Get("X-RateLimit-Reset") != fmt.Sprint(windowEnd.Unix()) {
			t.Fatalf("next window: %d remaining=%s reset=%s", r.Status, r.Header.Get("X-RateLimit-Remaining"), r.Header.Get("X-RateLimit-Reset"))
		}
	})
}

// TestRouteRatesFollowTheGeneralRate: --rate-limit and an account's own
// rate scale every route's rate in proportion; --rate-limit 0 turns the
// per-key limits off (an account's own rate still applies).
func TestRouteRatesFollowTheGeneralRate(t *testing.T) {
	t.Run("rate-limit 120", func(t *testing.T) {
		cfg := api.DefaultConfig()
		cfg.RateLimit = 120
		e := apitest.New(t, "sqlite", apitest.Options{Config: &cfg})
		key := rateAccount(e, 0)
		wantServed(t, "credits", e.Do("POST", "/api/v1/oem/account/credits", key, map[string]any{}), 60, 59)
		wantServed(t, "audit logs", e.Do("POST", "/api/v1/oem/account/audit-logs", key, map[string]any{}), 30, 29)
		wantServed(t, "auth/status", e.Do("GET", "/api/v1/auth/status", key, nil), 120, 119)
	})
	t.Run("rate-limit 0", func(t *testing.T) {
		cfg := api.DefaultConfig()
		cfg.RateLimit = 0
		e := apitest.New(t, "sqlite", apitest.Options{Config: &cfg})
		key := rateAccount(e, 0)
		for i := range 40 {
			r := e.Do("POST", "/api/v1/oem/account/audit-logs", key, map[string]any{})
			if r.Status != 200 || r.Header.Get("X-RateLimit-Limit") != "" {
				t.Fatalf("request %d with limits off: %d limit=%q", i, r.Status, r.Header.Get("X-RateLimit-Limit"))
			}
		}
		own := rateAccount(e, 6)
		wantServed(t, "an account's own rate with limits off", e.Do("POST", "/api/v1/oem/account/credits", own, map[string]any{}), 3, 2)
	})
	// The account's own rate, read from the database: 6 a minute makes
	// the credit balance 3 and the audit logs 2 (15/60 of 6, rounded).
	eachLimiter(t, api.DefaultConfig(), func(t *testing.T, e *apitest.Env) {
		key := rateAccount(e, 6)
		for _, c := range []struct {
			method, path string
			limit        int
		}{{"POST", "/api/v1/oem/account/credits", 3}, {"POST", "/api/v1/oem/account/audit-logs", 2}, {"GET", "/api/v1/auth/status", 6}} {
			var body any
			if c.method == "POST" {
				body = map[string]any{}
			}
			for i := 1; i <= c.limit; i++ {
				wantServed(t, fmt.Sprintf("%s %d", c.path, i), e.Do(c.method, c.path, key, body), c.limit, c.limit-i)
			}
			wantLimited(t, c.path+" past the account's limit", e.Do(c.method, c.path, key, body), c.limit, 60)
		}
	})
}

// TestMCPToolCallCountsAgainstItsRoute: a tool call counts against its own
// route's limit (the credit balance's 30 a minute), shared with the REST
// route, while the other tools keep theirs.
func TestMCPToolCallCountsAgainstItsRoute(t *testing.T) {
	eachLimiter(t, api.DefaultConfig(), func(t *testing.T, e *apitest.Env) {
		key := rateAccount(e, 0)
		s, err := mcpSession(t, e, keyHeader(key))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 30 {
			if text, isErr := callJSON(t, s, "oem_account_credits", map[string]any{}); isErr {
				t.Fatalf("call %d: %s", i+1, text)
			}
		}
		text, isErr := callJSON(t, s, "oem_account_credits", map[string]any{})
		if !isErr || !strings.Contains(text, "429 rate_limited") || !strings.Contains(text, "30 requests per minute") {
			t.Fatalf("31st call: %v %s", isErr, text)
		}
		wantLimited(t, "the REST route after 30 tool calls", e.Do("POST", "/api/v1/oem/account/credits", key, map[string]any{}), 30, 60)
		if text, isErr := callJSON(t, s, "auth_status", map[string]any{}); isErr {
			t.Errorf("auth_status: %s", text)
		}
	})
}

// TestRouteFamilyShared: the routes of the general rate share one count a
// key (../shared/API.md: per key and per route family), so 60 requests
// spread over two of them spend the minute of both, while a route with a
// rate of its own keeps its own count.
func TestRouteFamilyShared(t *testing.T) {
	eachLimiter(t, api.DefaultConfig(), func(t *testing.T, e *apitest.Env) {
		key := rateAccount(e, 0)
		for i := 1; i <= 60; i++ {
			path := "/api/v1/auth/status"
			if i%2 == 0 {
				path = "/api/v1/enterprise/organizations"
			}
			wantServed(t, fmt.Sprintf("%s %d", path, i), e.Do("GET", path, key, nil), 60, 60-i)
		}
		wantLimited(t, "auth/status past the family's limit", e.Do("GET", "/api/v1/auth/status", key, nil), 60, 60)
		wantLimited(t, "organizations past the family's limit", e.Do("GET", "/api/v1/enterprise/organizations", key, nil), 60, 60)
		wantServed(t, "credits, a count of its own", e.Do("POST", "/api/v1/oem/account/credits", key, map[string]any{}), 30, 29)
	})
}
