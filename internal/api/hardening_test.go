package api_test

// Regression tests of issue 12's defects, each over real HTTP on both engines.

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/periscope"
)

func oemAccount(e *apitest.Env, credits int64) (periscope.Account, string) {
	return e.Account(periscope.Account{Company: fmt.Sprintf("OEM %d", credits), Plan: "enterprise", Enterprise: true, OEM: true,
		CreditsPerMonth: credits, OEMCreditsPerMonth: credits})
}

func usage(t *testing.T, e *apitest.Env, id string) (int64, int64) {
	t.Helper()
	a, err := e.Store.Account(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a.Usage(e.Clock.Now())
}

type auditPage struct {
	Response struct {
		Logs []struct {
			Endpoint  string         `json:"endpoint"`
			Status    int            `json:"status_code"`
			Charged   int            `json:"credits_charged"`
			QueryTags map[string]any `json:"query_tags"`
			Request   map[string]any `json:"request"`
		} `json:"logs"`
	} `json:"response"`
}

// Defect 1: a domain claim covers its subdomains.
func TestDomainClaimsCoverSubdomains(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		ent := func(name string) (periscope.Account, string, string) {
			a, key := e.Account(periscope.Account{Company: name, Plan: "enterprise", Enterprise: true, CreditsPerMonth: 100})
			var org struct {
				ID string `json:"id"`
			}
			e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]any{"name": name}).JSON(t, &org)
			return a, key, org.ID
		}
		a, keyA, orgA := ent("Alpha")
		b, keyB, orgB := ent("Beta")
		add := func(key, org, d string) int {
			return e.Do("POST", "/api/v1/enterprise/organizations/"+org+"/domains", key, map[string]any{"domain": d}).Status
		}
		if s := add(keyA, orgA, "example.com"); s != 201 {
			t.Fatalf("A claims example.com: %d", s)
		}
		if s := add(keyA, orgA, "shop.example.org"); s != 201 {
			t.Fatalf("A claims shop.example.org: %d", s)
		}
		for _, d := range []string{"www.example.com", "a.b.example.com", "example.org"} {
			if s := add(keyB, orgB, d); s != 409 {
				t.Errorf("B claims %s: %d, want 409", d, s)
			}
		}
		if s := add(keyA, orgA, "www.example.com"); s != 201 {
			t.Errorf("A claims its own subdomain: %d", s)
		}
		if s := add(keyB, orgB, "notexample.com"); s != 201 {
			t.Errorf("B claims an unrelated name ending alike: %d", s)
		}

		// A claim made before the check (rows written directly) shows B
		// nothing of A's: neither findings for the parent nor A's
		// certificates.
		ctx := context.Background()
		db := e.Store.DB()
		for _, q := range []string{`INSERT INTO asset_claims (kind, value, account_id) VALUES ('dns', 'old.example.com', ?)`,
			`INSERT INTO org_assets (organization_id, account_id, kind, value, created_at) VALUES (?, ?, 'dns', 'old.example.com', 0)`} {
			args := []any{b.ID}
			if strings.Contains(q, "org_assets") {
				args = []any{orgB, b.ID}
			}
			if _, err := db.ExecContext(ctx, e.Store.Rebind(q), args...); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range []brandstore.Finding{
			{OrganizationID: orgA, AccountID: a.ID, Kind: "TypoSquatting", Domain: "exampel.com", BaseDomain: "example.com", Score: 50, Reason: "t"},
			{OrganizationID: orgB, AccountID: b.ID, Kind: "TypoSquatting", Domain: "exampel.com", BaseDomain: "example.com", Score: 50, Reason: "t"},
		} {
			if _, err := brandstore.New(e.Store).UpsertFindings(ctx, []brandstore.Finding{f}); err != nil {
				t.Fatal(err)
			}
		}
		var l struct {
			TotalResults int `json:"total_results"`
		}
		e.Do("GET", "/api/v1/enterprise/darkweb/typosquatting", keyB, nil).JSON(t, &l)
		if l.TotalResults != 0 {
			t.Errorf("B sees %d findings of A's domain", l.TotalResults)
		}
		e.Do("GET", "/api/v1/enterprise/darkweb/typosquatting", keyA, nil).JSON(t, &l)
		if l.TotalResults != 1 {
			t.Errorf("A sees %d findings of its own domain, want 1", l.TotalResults)
		}
	})
}

// Defect 2: NUL, lone surrogates and invalid UTF-8 are refused before any
// charge; an OEM request whose audit record cannot be written is failed and
// refunded.
func TestNonTextRefusedAndOEMNeverUnaudited(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		acct, key := oemAccount(e, 10)
		const route = "/api/v1/oem/vulnerability-intelligence/vulnerability-search"
		for _, body := range []string{`{"query":"a\u0000b"}`, `{"query":"\ud800"}`, `{"query":"\udc00x"}`, "{\"query\":\"\xff\xfe\"}",
			`{"query":"CVE-2024-1","query_tags":{"t":"x\u0000"}}`, `{"query":"CVE-2024-1","query_tags":{"t":["\ud83d"]}}`, `{"a\u0000":1}`} {
			r := e.Do("POST", route, key, body)
			if r.Status != 400 || r.ErrorCode() != "invalid_text" {
				t.Errorf("%q: %d %s", body, r.Status, r.Body)
			}
		}
		if r := e.Do("GET", "/api/v1/auth/status?x=%ed%a0%80", key, nil); r.Status != 400 || r.ErrorCode() != "invalid_text" {
			t.Errorf("encoded surrogate in the query: %d %s", r.Status, r.Body)
		}
		// A correctly paired surrogate escape is text.
		if r := e.Do("POST", route, key, `{"query":"\ud83d\ude00"}`); r.Status == 400 && r.ErrorCode() == "invalid_text" {
			t.Errorf("paired surrogates refused: %s", r.Body)
		}
		// An escaped backslash before "u0000" is text too.
		if r := e.Do("POST", route, key, `{"query":"a\\u0000"}`); r.ErrorCode() == "invalid_text" {
			t.Errorf("escaped backslash refused: %s", r.Body)
		}
		_, before := usage(t, e, acct.ID)
		var page auditPage
		r := e.Do("POST", "/api/v1/oem/account/audit-logs", key, nil)
		r.JSON(t, &page) // every page parses
		if len(page.Response.Logs) < 7 {
			t.Errorf("audit records of the refused requests: %d", len(page.Response.Logs))
		}

		// The audit table is unreachable: the request fails and costs nothing.
		db := e.Store.DB()
		if _, err := db.Exec(`ALTER TABLE audit_logs RENAME TO audit_logs_away`); err != nil {
			t.Fatal(err)
		}
		r = e.Do("POST", route, key, `{"query":"CVE-2024-1"}`)
		if _, err := db.Exec(`ALTER TABLE audit_logs_away RENAME TO audit_logs`); err != nil {
			t.Fatal(err)
		}
		if r.Status != 503 || r.ErrorCode() != "unavailable" || r.Header.Get("Retry-After") == "" {
			t.Errorf("unaudited OEM request: %d %s", r.Status, r.Body)
		}
		if _, after := usage(t, e, acct.ID); after != before {
			t.Errorf("OEM credits used %d → %d across an unaudited request", before, after)
		}
		// And once the trail works again, so does the route, charged once.
		if r := e.Do("POST", route, key, `{"query":"CVE-2024-1"}`); r.Status != 200 {
			t.Errorf("after recovery: %d %s", r.Status, r.Body)
		}
		if _, after := usage(t, e, acct.ID); after != before+1 {
			t.Errorf("OEM credits used %d → %d, want +1", before, after)
		}
	})
}

// Defects 3 and 4: recursive redaction and a bounded excerpt.
func TestAuditRedactsDeeplyAndBoundsRequests(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		_, key := oemAccount(e, 10)
		secrets := []string{"s3cr3t-1", "s3cr3t-2", "s3cr3t-3", "s3cr3t-4", "s3cr3t-5", "s3cr3t-6"}
		body := fmt.Sprintf(`{"query_tags":{"api_key":%q,"ticket":"T-1"},"nested":{"token":%q,"list":[{"Authorization":%q}]},
			"X-Session-Id":%q,"cookie":%q,"deep":{"a":{"b":{"passphrase":%q}}},"keywords":"kept"}`,
			secrets[0], secrets[1], secrets[2], secrets[3], secrets[4], secrets[5])
		if r := e.Do("POST", "/api/v1/oem/account/credits", key, body); r.Status != 200 {
			t.Fatalf("credits: %d %s", r.Status, r.Body)
		}
		big := fmt.Sprintf(`{"query":%q}`, strings.Repeat("x", 200<<10))
		if r := e.Do("POST", "/api/v1/oem/account/credits", key, big); r.Status != 200 {
			t.Fatalf("big body: %d", r.Status)
		}
		r := e.Do("POST", "/api/v1/oem/account/audit-logs", key, nil)
		for _, s := range secrets {
			if strings.Contains(string(r.Body), s) {
				t.Errorf("secret %s in the audit log: %s", s, r.Body)
			}
		}
		if len(r.Body) > 16<<10 {
			t.Errorf("audit page of two requests is %d bytes", len(r.Body))
		}
		var page auditPage
		r.JSON(t, &page)
		if len(page.Response.Logs) != 2 {
			t.Fatalf("logs: %s", r.Body)
		}
		if got := page.Response.Logs[0].Request["request_truncated"]; got != true {
			t.Errorf("big request not marked truncated: %v", page.Response.Logs[0].Request)
		}
		small := page.Response.Logs[1]
		if small.QueryTags["ticket"] != "T-1" || small.QueryTags["api_key"] != "[redacted]" || small.Request["keywords"] != "kept" {
			t.Errorf("redaction went too far or not far enough: tags %v request %v", small.QueryTags, small.Request)
		}
		if tags := fmt.Sprintf(`{"query_tags":{"t":%q}}`, strings.Repeat("t", 5000)); e.Do("POST", "/api/v1/oem/account/credits", key, tags).Status != 400 {
			t.Errorf("5 KB of query_tags accepted")
		}
	})
}

// Defect 5: the same 400 on both engines.
func TestOrganizationTextAndAuditPageBounds(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		_, key := oemAccount(e, 10)
		cases := []struct {
			body map[string]any
			want string
		}{
			{map[string]any{"name": "a\u0000b"}, "name must be UTF-8 text without NUL"},
			{map[string]any{"name": "ok", "description": "x\u0000"}, "description must be UTF-8 text without NUL"},
			{map[string]any{"name": "a\u0001b"}, "name must not contain control characters."},
			{map[string]any{"name": "a\nb"}, "name must not contain control characters."},
			{map[string]any{"name": "ok", "description": "x\u001b[31m"}, "description must not contain control characters"},
		}
		for _, c := range cases {
			r := e.Do("POST", "/api/v1/enterprise/organizations", key, c.body)
			if r.Status != 400 || !strings.Contains(string(r.Body), c.want) {
				t.Errorf("%q: %d %s, want 400 %q", c.body, r.Status, r.Body, c.want)
			}
		}
		if r := e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]any{"name": "ok", "description": "line 1\nline\t2"}); r.Status != 201 {
			t.Errorf("multi-line description: %d %s", r.Status, r.Body)
		}
		for _, p := range []string{"9223372036854775807", "1000001"} {
			r := e.Do("POST", "/api/v1/oem/account/audit-logs", key, `{"page":`+p+`}`)
			if r.Status != 400 || !strings.Contains(string(r.Body), "page must be between 1 and 1000000") {
				t.Errorf("page %s: %d %s", p, r.Status, r.Body)
			}
		}
	})
}

// Defect 7: metric labels come from fixed sets.
func TestMetricsLabelsAreBounded(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		c := e.HTTP.Client()
		for i := 0; i < 50; i++ {
			req, _ := http.NewRequest(fmt.Sprintf("M%dETHOD", i), e.HTTP.URL+fmt.Sprintf("/api/v1/x%d", i), nil)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		r := e.Do("GET", "/metrics", "", nil)
		m := string(r.Body)
		if strings.Contains(m, "ETHOD") || strings.Contains(m, "/x1") {
			t.Errorf("request text in metric labels")
		}
		if !strings.Contains(m, `method="other"`) || !strings.Contains(m, `route="unmatched"`) {
			t.Errorf("unknown methods not counted as other")
		}
	})
}

// Defect 8: invalid requests never hold credits.
func TestInvalidRequestsDoNotHoldCredits(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		const good = 20
		acct, key := e.Account(periscope.Account{Company: "One", CreditsPerMonth: good, RateLimit: 1 << 30})
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					req, _ := http.NewRequest("POST", e.HTTP.URL+"/api/v1/global/search", strings.NewReader(`{"country":"US","limit":201}`))
					req.Header.Set("X-API-KEY", key)
					if resp, err := e.HTTP.Client().Do(req); err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
				}
			}()
		}
		for i := 0; i < good; i++ {
			if r := e.Do("GET", "/api/v1/vulnerability-intelligence/feed", key, nil); r.Status != 200 {
				t.Errorf("good request %d while invalid ones run: %d %s", i, r.Status, r.Body)
			}
		}
		close(stop)
		wg.Wait()
		if used, _ := usage(t, e, acct.ID); used != good {
			t.Errorf("credits used %d, want %d", used, good)
		}
		if r := e.Do("GET", "/api/v1/vulnerability-intelligence/feed", key, nil); r.Status != 403 || r.ErrorCode() != "credits_exhausted" {
			t.Errorf("past the credits: %d %s", r.Status, r.Body)
		}
	})
}

// Defect 10: the failed-authentication limit follows the client behind a
// trusted proxy and spares valid keys.
func TestFailedAuthLimitBehindTrustedProxy(t *testing.T) {
	cfg := api.DefaultConfig()
	cfg.AuthFailLimit = 3
	cfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	eachWith(t, apitest.Options{Config: &cfg}, func(t *testing.T, e *apitest.Env) {
		_, key := e.Account(periscope.Account{Company: "Acme", CreditsPerMonth: 10})
		do := func(k, xff string) int {
			req, _ := http.NewRequest("GET", e.HTTP.URL+"/api/v1/auth/status", nil)
			req.Header.Set("X-API-KEY", k)
			req.Header.Set("X-Forwarded-For", xff)
			return e.Send(req).Status
		}
		for i := 0; i < 3; i++ {
			do("bad", "198.51.100.1, 203.0.113.5") // the left part is the client's to forge
		}
		if s := do("bad", "203.0.113.5"); s != 429 {
			t.Errorf("fourth failure from 203.0.113.5: %d", s)
		}
		if s := do("bad", "203.0.113.6"); s != 401 {
			t.Errorf("another client behind the proxy: %d", s)
		}
		if s := do(key, "203.0.113.5"); s != 200 {
			t.Errorf("valid key from the limited address: %d", s)
		}
	})
}

// Defect 12: HEAD is not charged; unclean paths are JSON 404s.
func TestHeadAndUncleanPaths(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		acct, key := e.Account(periscope.Account{Company: "Head", CreditsPerMonth: 10})
		req, _ := http.NewRequest("HEAD", e.HTTP.URL+"/api/v1/vulnerability-intelligence/feed", nil)
		req.Header.Set("X-API-KEY", key)
		resp, err := e.HTTP.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET" {
			t.Errorf("HEAD on a charged route: %d allow %q", resp.StatusCode, resp.Header.Get("Allow"))
		}
		if used, _ := usage(t, e, acct.ID); used != 0 {
			t.Errorf("HEAD charged %d credits", used)
		}
		for _, p := range []string{"/api/v1/../api/v1/auth/status", "/api/v1/./auth/status", "//api/v1/auth/status", "/api/v1//auth/status", "/x/.."} {
			req, _ := http.NewRequest("GET", e.HTTP.URL+"/", nil)
			req.URL.Path, req.URL.RawPath = p, ""
			req.Header.Set("X-API-KEY", key)
			resp, err := e.HTTP.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 404 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
				resp.Header.Get("X-Request-ID") == "" || !strings.Contains(string(b), `"not_found"`) {
				t.Errorf("%s: %d %s %s", p, resp.StatusCode, resp.Header.Get("Content-Type"), b)
			}
		}
	})
}

// tcpProxy forwards connections to target until stopped; it can be started
// again on the same port.
type tcpProxy struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        []net.Conn
}

func (p *tcpProxy) start(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { io.Copy(u, c); u.Close() }()
			go func() { io.Copy(c, u); c.Close() }()
		}
	}()
}

func (p *tcpProxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ln.Close()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}
