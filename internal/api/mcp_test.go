package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// headerTransport adds headers to every request of the MCP client.
type headerTransport struct {
	next http.RoundTripper
	hdr  http.Header
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.hdr {
		r.Header[k] = v
	}
	return h.next.RoundTrip(r)
}

// mcpSession connects the SDK's own client to the server over real HTTP,
// with every answer validated against the OpenAPI document.
func mcpSession(t *testing.T, e *apitest.Env, hdr http.Header) (*mcp.ClientSession, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "periscope-test", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: e.HTTP.URL + "/api/v1/mcp", DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: headerTransport{next: e.Client.Transport, hdr: hdr}}}
	s, err := client.Connect(context.Background(), tr, nil)
	if err == nil {
		t.Cleanup(func() { s.Close() })
	}
	return s, err
}

func keyHeader(key string) http.Header { return http.Header{"X-Api-Key": {key}} }

// callJSON calls a tool and returns its text content and error flag.
func callJSON(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("call %s: %d content items", name, len(res.Content))
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

func canonical(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, s)
	}
	return v
}

// sameAnswer compares a REST answer with a tool's made right after it by
// the same key: equal but for the credit balance, which the tool's own
// charge lowered by exactly one.
func sameAnswer(t *testing.T, name string, rest []byte, tool string) {
	t.Helper()
	r, _ := canonical(t, string(rest)).(map[string]any)
	m, _ := canonical(t, tool).(map[string]any)
	rc, rok := r["credits"].(float64)
	mc, mok := m["credits"].(float64)
	if rok != mok || (rok && rc-mc != 1) {
		t.Errorf("%s: balance after REST %v, after the tool %v; want one credit less", name, r["credits"], m["credits"])
	}
	delete(r, "credits")
	delete(m, "credits")
	if diff := cmp.Diff(r, m); diff != "" {
		t.Errorf("%s differs from its REST route (-rest +mcp):\n%s", name, diff)
	}
}

func TestMCPToolsAnswerAsREST(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		seedHosts(t, e)
		_, key := e.Account(periscope.Account{Company: "Agent Co", Plan: "enterprise", Enterprise: true, OEM: true, CreditsPerMonth: 100, OEMCreditsPerMonth: 100})
		s, err := mcpSession(t, e, keyHeader(key))
		if err != nil {
			t.Fatal(err)
		}
		if got := s.InitializeResult().ServerInfo.Name; got != "periscope" {
			t.Errorf("server name %q", got)
		}
		list, err := s.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, tool := range list.Tools {
			names[tool.Name] = true
			if tool.Description == "" {
				t.Errorf("%s has no description", tool.Name)
			}
		}
		for _, want := range []string{"search", "fetch", "auth_status", "public_my_ip", "fullhunt_host", "fullhunt_domain_details",
			"fullhunt_domain_subdomains", "global_search", "intel_ip_to_hosts", "nexus_ip_lookup", "enterprise_organizations",
			"enterprise_alerts", "oem_attack_surface_host", "oem_account_credits", "search_vulnerabilities"} {
			if !names[want] {
				t.Errorf("tools/list lacks %s", want)
			}
		}
		// Every listed tool answers: none names a route the server lacks.
		routes := map[string]bool{}
		for _, r := range e.Server.Routes() {
			routes[r] = true
		}
		for _, tool := range api.MCPToolRoutes(e.Server) {
			if !routes[tool] {
				t.Errorf("tool route %s is not registered", tool)
			}
		}

		// A charged tool: the same answer as REST, and one credit, as REST.
		before := credits(t, e, key)
		rest := e.Do(http.MethodGet, "/api/v1/host/h01.acme.com", key, nil)
		if rest.Status != 200 {
			t.Fatalf("REST host: %d", rest.Status)
		}
		afterREST := credits(t, e, key)
		text, isErr := callJSON(t, s, "fullhunt_host", map[string]any{"host": "h01.acme.com"})
		if isErr {
			t.Fatalf("fullhunt_host: %s", text)
		}
		afterMCP := credits(t, e, key)
		if diff := cmp.Diff(canonical(t, string(rest.Body)), canonical(t, text)); diff != "" {
			t.Errorf("fullhunt_host differs from GET /host (-rest +mcp):\n%s", diff)
		}
		if afterREST-before != 1 || afterMCP-afterREST != 1 {
			t.Errorf("credits: REST cost %d, tool cost %d; want 1 and 1", afterREST-before, afterMCP-afterREST)
		}

		// Renamed arguments reach their REST parameter.
		restIP := e.Do(http.MethodGet, "/api/v1/nexus/ip-lookup?query=52.1.2.10", key, nil)
		text, isErr = callJSON(t, s, "nexus_ip_lookup", map[string]any{"ip": "52.1.2.10"})
		if isErr || restIP.Status != 200 {
			t.Fatalf("nexus_ip_lookup: %s (REST %d)", text, restIP.Status)
		}
		sameAnswer(t, "nexus_ip_lookup", restIP.Body, text)

		// A body route with its 47 filters as arguments.
		restGS := e.Do(http.MethodPost, "/api/v1/global/search", key, map[string]any{"port": 22, "country_code": "US"})
		text, isErr = callJSON(t, s, "global_search", map[string]any{"port": 22, "country_code": "US"})
		if isErr || restGS.Status != 200 {
			t.Fatalf("global_search: %s (REST %d)", text, restGS.Status)
		}
		sameAnswer(t, "global_search", restGS.Body, text)

		// An intel tool (its route type is fixed by the tool).
		restIntel := e.Do(http.MethodGet, "/api/v1/intel/ip-to-hosts?ip=52.1.2.11", key, nil)
		text, _ = callJSON(t, s, "intel_ip_to_hosts", map[string]any{"ip": "52.1.2.11"})
		sameAnswer(t, "intel_ip_to_hosts", restIntel.Body, text)

		// OEM tools are audited and charged OEM credits like their routes.
		restOEM := e.Do(http.MethodPost, "/api/v1/oem/attack-surface/host", key, map[string]any{"query": "h02.acme.com"})
		text, isErr = callJSON(t, s, "oem_attack_surface_host", map[string]any{"query": "h02.acme.com"})
		if isErr || restOEM.Status != 200 {
			t.Fatalf("oem_attack_surface_host: %s (REST %d)", text, restOEM.Status)
		}
		restCredits := e.Do(http.MethodPost, "/api/v1/oem/account/credits", key, map[string]any{})
		text, _ = callJSON(t, s, "oem_account_credits", nil)
		if diff := cmp.Diff(canonical(t, string(restCredits.Body)), canonical(t, text)); diff != "" {
			t.Errorf("oem_account_credits differs (-rest +mcp):\n%s", diff)
		}
		if !bytes.Contains(e.Do(http.MethodPost, "/api/v1/oem/account/audit-logs", key, map[string]any{}).Body, []byte("attack-surface/host")) {
			t.Errorf("the OEM tool call left no audit record")
		}

		// Bare arrays arrive wrapped.
		e.Do(http.MethodPost, "/api/v1/enterprise/organizations", key, map[string]any{"name": "Acme"})
		text, isErr = callJSON(t, s, "enterprise_organizations", nil)
		var wrapped struct {
			Results []map[string]any `json:"results"`
			Count   int              `json:"count"`
		}
		if err := json.Unmarshal([]byte(text), &wrapped); isErr || err != nil || wrapped.Count != len(wrapped.Results) {
			t.Errorf("enterprise_organizations: %s", text)
		}

		// search is free and reads nothing; fetch costs what its route costs.
		before = credits(t, e, key)
		text, isErr = callJSON(t, s, "search", map[string]any{"query": "h03.acme.com"})
		if isErr || !strings.Contains(text, `"host:h03.acme.com"`) || !strings.Contains(text, `"domain:acme.com"`) {
			t.Errorf("search: %s", text)
		}
		text, _ = callJSON(t, s, "search", map[string]any{"query": "cve-2021-44228"})
		if !strings.Contains(text, `"cve:CVE-2021-44228"`) {
			t.Errorf("search of a CVE: %s", text)
		}
		if got := credits(t, e, key); got != before {
			t.Errorf("search cost %d credits", got-before)
		}
		text, isErr = callJSON(t, s, "fetch", map[string]any{"id": "host:h03.acme.com"})
		restH3 := e.Do(http.MethodGet, "/api/v1/host/h03.acme.com", key, nil)
		if diff := cmp.Diff(canonical(t, string(restH3.Body)), canonical(t, text)); isErr || diff != "" {
			t.Errorf("fetch host: differs (-rest +mcp):\n%s", diff)
		}
		if got := credits(t, e, key); got-before != 2 {
			t.Errorf("fetch and REST cost %d credits together, want 2", got-before)
		}

		// 404 reads as FullHunt's words, and costs nothing.
		before = credits(t, e, key)
		text, isErr = callJSON(t, s, "fullhunt_host", map[string]any{"host": "nothing.acme.com"})
		if !isErr || text != "no data found for that query" {
			t.Errorf("unknown host: %v %s", isErr, text)
		}
		if got := credits(t, e, key); got != before {
			t.Errorf("a 404 cost %d credits", got-before)
		}
	})
}

func TestMCPTiersAuthAndLimits(t *testing.T) {
	cfg := api.DefaultConfig()
	cfg.RateLimit = 12
	eachWith(t, apitest.Options{Config: &cfg}, func(t *testing.T, e *apitest.Env) {
		keys := profiles(e)
		// A free key: 403 with the paid-plans message, before any session.
		post := func(hdr http.Header, body string) apitest.Response {
			req, _ := http.NewRequest(http.MethodPost, e.HTTP.URL+"/api/v1/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range hdr {
				req.Header[k] = v
			}
			return e.Send(req)
		}
		initBody := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`
		r := post(keyHeader(keys["free"]), initBody)
		if r.Status != http.StatusForbidden || !strings.Contains(string(r.Body), "only available for paid plans") {
			t.Errorf("free key: %d %s", r.Status, r.Body)
		}
		if _, err := mcpSession(t, e, keyHeader(keys["free"])); err == nil {
			t.Errorf("a free key connected")
		}
		// No key, a wrong key: 401.
		if r := post(nil, initBody); r.Status != http.StatusUnauthorized {
			t.Errorf("no key: %d %s", r.Status, r.Body)
		}
		// A Bearer token is a key here (not on REST routes).
		r = post(http.Header{"Authorization": {"Bearer " + keys["enterprise"]}}, initBody)
		if r.Status != 200 || !strings.Contains(string(r.Body), `"serverInfo"`) {
			t.Errorf("bearer: %d %s", r.Status, r.Body)
		}
		if r := e.Send(bearerGet(e, keys["enterprise"])); r.Status != http.StatusUnauthorized {
			t.Errorf("bearer on a REST route: %d", r.Status)
		}
		// Neither JSON nor both media types accepted: JSON errors.
		req, _ := http.NewRequest(http.MethodPost, e.HTTP.URL+"/api/v1/mcp", strings.NewReader(initBody))
		req.Header.Set("X-Api-Key", keys["enterprise"])
		req.Header.Set("Content-Type", "application/json")
		if r := e.Send(req); r.Status != http.StatusBadRequest || r.ErrorCode() != "invalid_parameter" {
			t.Errorf("without Accept: %d %s", r.Status, r.Body)
		}

		// An enterprise key calling an OEM tool: the route's 403, as a tool error.
		s, err := mcpSession(t, e, keyHeader(keys["oem"]))
		if err != nil {
			t.Fatal(err)
		}
		se, err := mcpSession(t, e, keyHeader(keys["enterprise"]))
		if err != nil {
			t.Fatal(err)
		}
		text, isErr := callJSON(t, se, "oem_attack_surface_host", map[string]any{"query": "a.example.com"})
		if !isErr || !strings.Contains(text, "403 oem_required") {
			t.Errorf("enterprise key on an OEM tool: %v %s", isErr, text)
		}
		// Bad arguments: refused before the route, nothing charged.
		for _, args := range []map[string]any{
			{"host": 5},
			{"host": "a.example.com", "extra": "x"},
			{},
			{"host": strings.Repeat("a", 300)},
		} {
			text, isErr = callJSON(t, s, "fullhunt_host", args)
			if !isErr {
				t.Errorf("fullhunt_host %v answered %s", args, text)
			}
		}
		// The endpoint's own limit: 12 a minute for this key in this
		// configuration (the session above spent some).
		limited := false
		for range 13 {
			if r := post(keyHeader(keys["oem"]), initBody); r.Status == http.StatusTooManyRequests {
				limited = r.ErrorCode() == "rate_limited"
				break
			}
		}
		if !limited {
			t.Errorf("the MCP endpoint was not rate-limited")
		}
	})
}

func bearerGet(e *apitest.Env, key string) *http.Request {
	req, _ := http.NewRequest(http.MethodGet, e.HTTP.URL+"/api/v1/auth/status", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	return req
}

// mcpCall posts one stateless tools/call and returns the HTTP status and,
// for a 200, the tool result.
func mcpCall(t testing.TB, e *apitest.Env, c *http.Client, key, name string, args json.RawMessage) (int, *mcp.CallToolResult) {
	t.Helper()
	msg := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":` + strconv.Quote(name) + `,"arguments":` + string(args) + `}}`
	req, _ := http.NewRequest(http.MethodPost, e.HTTP.URL+"/api/v1/mcp", strings.NewReader(msg))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Api-Key", key)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	defer resp.Body.Close()
	r := apitest.Response{Status: resp.StatusCode}
	r.Body, _ = io.ReadAll(resp.Body)
	if r.Status != http.StatusOK {
		return r.Status, nil
	}
	var rpc struct {
		Result *mcp.CallToolResult `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.Body, &rpc); err != nil {
		t.Fatalf("tools/call %s: %v: %s", name, err, r.Body)
	}
	if rpc.Error != nil {
		return r.Status, &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: rpc.Error.Message}}}
	}
	return r.Status, rpc.Result
}

// hostileArgs are argument values no tool should answer with a 5xx.
var hostileArgs = []any{"", " ", "\x00", "\u202e", "é", strings.Repeat("x", 5000), "../../etc/passwd", "%2e%2e/", "a b?c=d&e",
	"1.2.3.4/0", -1, 0, 1e300, true, nil, []any{"a", 1}, map[string]any{"$ref": "#"}}

// TestMCPHostileArguments calls every tool with hostile arguments: no call
// may panic or answer a 5xx, as HTTP or inside a tool result.
func TestMCPHostileArguments(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		seedHosts(t, e)
		_, key := e.Account(periscope.Account{Company: "Fuzz Co", Plan: "enterprise", Enterprise: true, OEM: true,
			CreditsPerMonth: 100000, OEMCreditsPerMonth: 100000, RateLimit: 100000})
		failures := 0
		for _, tool := range api.MCPTools(e.Server) {
			if tool.Writes {
				continue // starting scans is not what this test is for
			}
			props := append([]string{"zz"}, tool.Args...)
			for i, v := range hostileArgs {
				args, _ := json.Marshal(map[string]any{props[i%len(props)]: v})
				status, res := mcpCall(t, e, e.Client, key, tool.Name, args)
				bad, text := status >= 500, ""
				if res != nil && len(res.Content) == 1 {
					text = res.Content[0].(*mcp.TextContent).Text
					// A 503 of a capability this server runs without
					// (active monitoring here) is its documented answer.
					bad = bad || strings.HasPrefix(text, "5") && !strings.HasPrefix(text, "503 unavailable")
				}
				if bad {
					failures++
					t.Errorf("%s(%.80s): HTTP %d %s", tool.Name, args, status, text)
				}
				if failures > 5 {
					t.FailNow()
				}
			}
		}
	})
}

// FuzzMCPToolArguments sends fuzzed arguments to every tool in turn.
func FuzzMCPToolArguments(f *testing.F) {
	e := apitest.New(f, "sqlite")
	_, key := e.Account(periscope.Account{Company: "Fuzz Co", Plan: "enterprise", Enterprise: true, OEM: true,
		CreditsPerMonth: 1 << 40, OEMCreditsPerMonth: 1 << 40, RateLimit: 1 << 30})
	var tools []string
	for _, tool := range api.MCPTools(e.Server) {
		if !tool.Writes {
			tools = append(tools, tool.Name)
		}
	}
	f.Add(uint8(0), `{"host":"a.example.com"}`)
	f.Add(uint8(3), `{"query":"x","query_type":"domain"}`)
	f.Add(uint8(9), `{"port":"22,80","page":-1}`)
	f.Add(uint8(20), `[1,2]`)
	f.Fuzz(func(t *testing.T, n uint8, args string) {
		if !json.Valid([]byte(args)) {
			return
		}
		status, res := mcpCall(t, e, http.DefaultClient, key, tools[int(n)%len(tools)], json.RawMessage(args))
		if status >= 500 {
			t.Fatalf("HTTP %d", status)
		}
		if res != nil && len(res.Content) == 1 {
			text := res.Content[0].(*mcp.TextContent).Text
			if strings.HasPrefix(text, "5") && !strings.HasPrefix(text, "503 unavailable") {
				t.Fatalf("tool answered %s", text)
			}
		}
	})
}

// mcpBenchEnv is the MCP benchmarks' server: one host, and the key of an
// Enterprise account that neither credits nor rate limits stop.
func mcpBenchEnv(b *testing.B) (*apitest.Env, string) {
	e := apitest.New(b, "sqlite")
	if _, err := e.Hosts.UpsertHosts(context.Background(), []host.Host{{Host: "www.bench.example", IPAddress: "52.0.0.1",
		NetworkServices: []host.Service{{Port: 443, Service: "https", Product: "nginx"}}}}); err != nil {
		b.Fatal(err)
	}
	_, key := e.Account(periscope.Account{Company: "Bench Co", Plan: "enterprise", Enterprise: true, CreditsPerMonth: 1 << 40, RateLimit: 1 << 30})
	return e, key
}

// mcpBenchCall is the benchmarks' tool call, as one JSON-RPC message.
const mcpBenchCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fullhunt_host","arguments":{"host":"www.bench.example"}}}`

// BenchmarkMCPOverhead measures a tool call against its REST route over
// real HTTP, interleaved so both see the same machine: fullhunt_host
// against GET /host/{host}. Each sub-benchmark reports both p95s, the
// difference (the overhead; target ≤ 1 ms at p95) and the difference of
// the p50s: plain-post sends the call as one plain POST (the server's
// share alone), sdk-client through the SDK's own client (its encoding and
// decoding included). They run apart: the SDK client's garbage, which
// lives in the agent's process, would otherwise be collected during the
// server's requests.
func BenchmarkMCPOverhead(b *testing.B) {
	e, key := mcpBenchEnv(b)
	timed := func(req *http.Request) time.Duration {
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return time.Since(start)
	}
	restCall := func() time.Duration {
		req, _ := http.NewRequest(http.MethodGet, e.HTTP.URL+"/api/v1/host/www.bench.example", nil)
		req.Header.Set("X-Api-Key", key)
		return timed(req)
	}
	report := func(b *testing.B, rest, tool []time.Duration) {
		at := func(d []time.Duration, q float64) float64 {
			slices.Sort(d)
			return float64(d[int(float64(len(d)-1)*q)].Microseconds()) / 1000
		}
		b.ReportMetric(at(rest, 0.95), "rest-p95-ms")
		b.ReportMetric(at(tool, 0.95), "tool-p95-ms")
		b.ReportMetric(at(tool, 0.95)-at(rest, 0.95), "overhead-p95-ms")
		b.ReportMetric(at(tool, 0.5)-at(rest, 0.5), "overhead-p50-ms")
	}
	b.Run("plain-post", func(b *testing.B) {
		var rest, tool []time.Duration
		for b.Loop() {
			rest = append(rest, restCall())
			req, _ := http.NewRequest(http.MethodPost, e.HTTP.URL+"/api/v1/mcp", strings.NewReader(mcpBenchCall))
			req.Header.Set("X-Api-Key", key)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			tool = append(tool, timed(req))
		}
		report(b, rest, tool)
	})
	b.Run("sdk-client", func(b *testing.B) {
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		tr := &mcp.StreamableClientTransport{Endpoint: e.HTTP.URL + "/api/v1/mcp", DisableStandaloneSSE: true,
			HTTPClient: &http.Client{Transport: headerTransport{next: http.DefaultTransport, hdr: keyHeader(key)}}}
		s, err := client.Connect(context.Background(), tr, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		var rest, tool []time.Duration
		for b.Loop() {
			rest = append(rest, restCall())
			start := time.Now()
			res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "fullhunt_host", Arguments: map[string]any{"host": "www.bench.example"}})
			if err != nil || res.IsError {
				b.Fatal(err)
			}
			tool = append(tool, time.Since(start))
		}
		report(b, rest, tool)
	})
}

// BenchmarkMCPServerCPU is the server's own share of a tool call, in
// process (no network, no client): the same fullhunt_host call as one plain
// POST against GET /host/{host}, each a sub-benchmark reporting the
// process's CPU time per call (GC and the SDK's goroutines included) and
// its allocations, which a loaded machine does not change the way it
// changes wall time. The tool's figures less the REST route's are the MCP
// layer's cost.
func BenchmarkMCPServerCPU(b *testing.B) {
	e, key := mcpBenchEnv(b)
	serve := func(b *testing.B, newReq func() *http.Request) {
		cpu := benchCPU()
		for b.Loop() {
			w := httptest.NewRecorder()
			e.Server.ServeHTTP(w, newReq())
			if w.Code != http.StatusOK {
				b.Fatalf("%d %s", w.Code, w.Body)
			}
		}
		b.ReportMetric(float64((benchCPU()-cpu).Microseconds())/float64(b.N), "cpu-us/op")
	}
	b.Run("rest", func(b *testing.B) {
		b.ReportAllocs()
		serve(b, func() *http.Request {
			req := httptest.NewRequest(http.MethodGet, "/api/v1/host/www.bench.example", nil)
			req.Header.Set("X-Api-Key", key)
			return req
		})
	})
	post := func(body string) func() *http.Request {
		return func() *http.Request {
			req := httptest.NewRequest(http.MethodPost, "/api/v1/mcp", strings.NewReader(body))
			req.Header.Set("X-Api-Key", key)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			return req
		}
	}
	b.Run("tool", func(b *testing.B) {
		b.ReportAllocs()
		serve(b, post(mcpBenchCall))
	})
	// A ping: the endpoint's chain and the SDK's handling of one request,
	// no tool; what any MCP request costs before its tool runs.
	b.Run("ping", func(b *testing.B) {
		b.ReportAllocs()
		serve(b, post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	})
}

// TestMCPDocsToolList keeps the tool table of docs/mcp.md equal to the
// tools the server offers (go test ./internal/api -run TestMCPDocsToolList
// -update rewrites it).
func TestMCPDocsToolList(t *testing.T) {
	e := apitest.New(t, "sqlite")
	var b strings.Builder
	b.WriteString("| tool | arguments (`?` optional) | route | what it does |\n|---|---|---|---|\n")
	b.WriteString("| `search` | `query` | none | Classify a domain, host, IP address, CVE id or company name into ids for `fetch`. Reads no data; no credit. |\n")
	b.WriteString("| `fetch` | `id` | the route of the id's tool | Expand an id from `search`; costs what that route costs. |\n")
	for _, tool := range api.MCPTools(e.Server) {
		var args []string
		for _, a := range tool.Args {
			if tool.Required[a] {
				args = append(args, "`"+a+"`")
			} else {
				args = append(args, "`"+a+"?`")
			}
		}
		if len(args) > 12 {
			args = append(args[:6], fmt.Sprintf("… (%d in all)", len(tool.Args)))
		}
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | %s |\n", tool.Name, strings.Join(args, ", "), tool.Route, tool.Description)
	}
	const path = "../../docs/mcp.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- tools:begin (generated by TestMCPDocsToolList) -->\n", "<!-- tools:end -->"
	i, j := bytes.Index(doc, []byte(begin)), bytes.Index(doc, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s lacks the tool table markers", path)
	}
	got := string(doc[i+len(begin) : j])
	if got == b.String() {
		return
	}
	if *update {
		out := append(append(append([]byte{}, doc[:i+len(begin)]...), b.String()...), doc[j:]...)
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/mcp.md's tool table is out of date; run go test ./internal/api -run TestMCPDocsToolList -update")
}
