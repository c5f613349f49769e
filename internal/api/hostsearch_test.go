package api_test

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/periscope"
)

type facetValue struct {
	Value any `json:"value"`
	Count int `json:"count"`
}

type hostsSearch struct {
	Query        string                  `json:"query"`
	Total        int                     `json:"total"`
	TotalIsExact bool                    `json:"total_is_exact"`
	Matches      []host.Host             `json:"matches"`
	Facets       map[string][]facetValue `json:"facets"`
}

func creditsUsed(t *testing.T, e *apitest.Env, key string) int {
	t.Helper()
	var st struct {
		UserCredits struct {
			CreditsUsage int `json:"credits_usage"`
		} `json:"user_credits"`
	}
	e.Do("GET", "/api/v1/auth/status", key, nil).JSON(t, &st)
	return st.UserCredits.CreditsUsage
}

func q(route, query string, extra ...string) string {
	v := url.Values{"query": {query}}
	for i := 0; i+1 < len(extra); i += 2 {
		v.Set(extra[i], extra[i+1])
	}
	return "/api/v1/hosts/" + route + "?" + v.Encode()
}

func names(hs []host.Host) []string {
	out := []string{}
	for _, h := range hs {
		out = append(out, h.Host)
	}
	return out
}

func TestHostsSearch(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		seedHosts(t, e)
		_, key := e.Account(periscope.Account{Company: "Query Co", Plan: "free", CreditsPerMonth: 100, MaxResultsPerRequest: 500})
		cases := []struct {
			query string
			total int
			first string
		}{
			{`country:US`, 6, "h00.acme.com"},
			{`country:US,DE port:22`, 6, "h00.acme.com"},
			{`-port:22,443`, 3, "52.1.2.200"},                  // neither port: 52.1.2.200 (3389), acme-shop.com, old.acme.com
			{`NOT port:22 domain:acme.com`, 7, "h01.acme.com"}, // 6 odd hosts and old.acme.com
			{`port:>1024`, 1, "52.1.2.200"},
			{`port:[20 TO 30] OR asn:AS24940`, 12, "h00.acme.com"},
			{`http.title:"portal 1"`, 3, "h01.acme.com"}, // 1, 10, 11
			{`portal -country:DE`, 6, "h00.acme.com"},
			{`wordpress`, 12, "h00.acme.com"}, // a bare word finds a technology
			{`openssh`, 6, "h00.acme.com"},
			{`last_seen:<2025-01-01`, 1, "old.acme.com"},
			{`net:52.1.2.0/28 org:"amazon.com, inc."`, 3, "h00.acme.com"}, // .10 .12 .14
			{`hostname:acme.com -host:h00.acme.com is_cloud:true`, 5, "h02.acme.com"},
			{`(country:US OR country:DE) AND NOT tech:wordpress`, 0, ""},
		}
		for _, c := range cases {
			r := e.Do("GET", q("search", c.query), key, nil)
			if r.Status != 200 {
				t.Errorf("%s: %d %s", c.query, r.Status, r.Body)
				continue
			}
			var got hostsSearch
			r.JSON(t, &got)
			if got.Total != c.total || !got.TotalIsExact || got.Query != c.query || len(got.Matches) != c.total {
				t.Errorf("%s: total %d (exact %v), %d matches %v, want %d", c.query, got.Total, got.TotalIsExact, len(got.Matches), names(got.Matches), c.total)
			}
			if c.first != "" && (len(got.Matches) == 0 || got.Matches[0].Host != c.first) {
				t.Errorf("%s: matches %v, want %s first", c.query, names(got.Matches), c.first)
			}
		}
		// Facets: exact counts of query AND value, largest first.
		r := e.Do("GET", q("search", "domain:acme.com", "facets", "country:10,port,asn:1,org:2", "limit", "2", "page", "2"), key, nil)
		var got hostsSearch
		r.JSON(t, &got)
		want := map[string][]facetValue{
			"country": {{"DE", 6}, {"US", 6}},
			"port":    {{float64(443), 12}, {float64(22), 6}},
			"asn":     {{float64(16509), 6}},
			"org":     {{"amazon.com, inc.", 6}, {"hetzner online gmbh", 6}},
		}
		if diff := cmp.Diff(want, got.Facets); diff != "" || got.Total != 13 || !slicesEqual(names(got.Matches), []string{"h02.acme.com", "h03.acme.com"}) {
			t.Errorf("facets (-want +got):\n%s\ntotal %d matches %v", diff, got.Total, names(got.Matches))
		}
		used := creditsUsed(t, e, key)
		if used != len(cases)+1 {
			t.Errorf("credits used %d, want %d", used, len(cases)+1)
		}

		// Invalid queries: 400 query_invalid, not charged.
		bad := []struct{ query, code, msg string }{
			{`contry:US`, "query_invalid", "unknown field 'contry' at 1:1 (did you mean 'country'?)"},
			{`port:abc`, "query_invalid", `port must be an integer (got "abc") at 1:6`},
			{`(port:22`, "query_invalid", "'(' is not closed, found end of query at 1:1"},
			{``, "missing_parameter", "query is required"},
		}
		for _, c := range bad {
			for _, route := range []string{"search", "count", "export"} {
				r := e.Do("GET", q(route, c.query), key, nil)
				var body struct{ Message string }
				json.Unmarshal(r.Body, &body)
				if r.Status != 400 || r.ErrorCode() != c.code || !strings.Contains(body.Message, c.msg) {
					t.Errorf("%s %q: %d %s", route, c.query, r.Status, r.Body)
				}
			}
		}
		r = e.Do("GET", q("search", "port:22", "facets", "contry:5"), key, nil)
		if r.Status != 400 || !strings.Contains(string(r.Body), "did you mean 'country'") {
			t.Errorf("bad facet: %d %s", r.Status, r.Body)
		}
		r = e.Do("GET", q("search", "port:22", "facets", "country:101"), key, nil)
		if r.Status != 400 || !strings.Contains(string(r.Body), "from 1 to 100") {
			t.Errorf("facet over 100: %d %s", r.Status, r.Body)
		}
		if now := creditsUsed(t, e, key); now != used {
			t.Errorf("invalid queries charged %d credits", now-used)
		}
	})
}

func slicesEqual(a, b []string) bool { return cmp.Equal(a, b) }

func TestHostsCountIsFree(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		seedHosts(t, e)
		_, key := e.Account(periscope.Account{Company: "Counter", Plan: "free", CreditsPerMonth: 1, MaxResultsPerRequest: 500})
		for range 3 {
			r := e.Do("GET", q("count", "port:443", "facets", "country,tech:1"), key, nil)
			var got struct {
				Total  int                     `json:"total"`
				Exact  bool                    `json:"total_is_exact"`
				Facets map[string][]facetValue `json:"facets"`
			}
			r.JSON(t, &got)
			want := map[string][]facetValue{"country": {{"DE", 6}, {"US", 6}}, "tech": {{"wordpress", 12}}}
			if r.Status != 200 || got.Total != 12 || !got.Exact || !cmp.Equal(got.Facets, want) {
				t.Errorf("count: %d %s", r.Status, r.Body)
			}
			if r.Header.Get("X-RateLimit-Limit") == "" {
				t.Errorf("count is not rate-limited: %v", r.Header)
			}
		}
		if used := creditsUsed(t, e, key); used != 0 {
			t.Errorf("count charged %d credits", used)
		}
	})
}

func TestHostsExport(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		seedHosts(t, e)
		_, key := e.Account(periscope.Account{Company: "Exporter", Plan: "free", CreditsPerMonth: 10, MaxResultsPerRequest: 5})
		r := e.Do("GET", q("export", "domain:acme.com"), key, nil)
		if r.Status != 200 || r.Header.Get("Content-Type") != "application/x-ndjson" || r.Header.Get("X-Total-Count") != "13" {
			t.Fatalf("export: %d %v %s", r.Status, r.Header, r.Body)
		}
		var got []string
		sc := bufio.NewScanner(bytes.NewReader(r.Body))
		for sc.Scan() {
			var h host.Host
			if err := json.Unmarshal(sc.Bytes(), &h); err != nil {
				t.Fatalf("line %q: %v", sc.Text(), err)
			}
			got = append(got, h.Host)
		}
		if len(got) != 13 || got[0] != "h00.acme.com" || got[12] != "old.acme.com" {
			t.Errorf("export hosts: %v", got)
		}
		// 13 hosts at 5 a request: 3 credits.
		if used := creditsUsed(t, e, key); used != 3 || r.Header.Get("X-Credits-Charged") != "3" {
			t.Errorf("export charged %d (%s), want 3", used, r.Header.Get("X-Credits-Charged"))
		}

		r = e.Do("GET", q("export", "country:DE", "format", "csv"), key, nil)
		rows, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
		if err != nil || r.Status != 200 || len(rows) != 7 || rows[0][0] != "host" || rows[1][0] != "h01.acme.com" || rows[1][5] != "Hetzner Online GmbH" || rows[1][6] != "443" {
			t.Errorf("csv: %d %v %v", r.Status, err, rows)
		}
		r = e.Do("GET", q("export", "port:3389 OR host:h01.acme.com OR host:old.acme.com", "format", "ips"), key, nil)
		if string(r.Body) != "52.1.2.200\n52.1.2.11\n" { // id order: 52.1.2.200 was stored first
			t.Errorf("ips: %q", r.Body)
		}
		// 6 rows at 5 a request: 2 credits; 2 addresses (3 hosts): 1.
		if used := creditsUsed(t, e, key); used != 6 {
			t.Errorf("credits used %d, want 6", used)
		}
		// 13 hosts need 3 credits; 4 are left: paid. Then 1 is left: refused, nothing sent.
		if r := e.Do("GET", q("export", "domain:acme.com"), key, nil); r.Status != 200 {
			t.Errorf("second export: %d", r.Status)
		}
		r = e.Do("GET", q("export", "domain:acme.com"), key, nil)
		if r.Status != 403 || r.ErrorCode() != "credits_exhausted" {
			t.Errorf("unpaid export: %d %s", r.Status, r.Body)
		}
		if used := creditsUsed(t, e, key); used != 9 {
			t.Errorf("credits used %d, want 9", used)
		}
		if r := e.Do("GET", q("export", "port:22", "format", "xml"), key, nil); r.Status != 400 || !strings.Contains(string(r.Body), "format must be") {
			t.Errorf("bad format: %d %s", r.Status, r.Body)
		}
	})
}

func TestGlobalSearchQuery(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		seedHosts(t, e)
		_, key := e.Account(periscope.Account{Company: "FH client", Plan: "free", CreditsPerMonth: 100, MaxResultsPerRequest: 500})
		var got struct {
			Results []host.Host    `json:"results"`
			Total   int            `json:"total_query_results"`
			Exact   bool           `json:"total_is_exact"`
			Query   map[string]any `json:"query"`
		}
		r := e.Do("POST", "/api/v1/global/search", key, map[string]any{"query": "port:22,3389 OR country:DE", "cloud_provider": "aws"})
		r.JSON(t, &got)
		if r.Status != 200 || got.Total != 6 || !got.Exact || got.Query["query"] != "port:22,3389 OR country:DE" || got.Results[0].Host != "h00.acme.com" {
			t.Errorf("query and filter: %d %s", r.Status, r.Body)
		}
		r = e.Do("POST", "/api/v1/global/search", key, map[string]any{"query": "-country:US,DE"})
		r.JSON(t, &got)
		if r.Status != 200 || got.Total != 3 {
			t.Errorf("query alone: %d %s", r.Status, r.Body)
		}
		r = e.Do("POST", "/api/v1/global/search", key, map[string]any{"query": "contry:US"})
		if r.Status != 400 || r.ErrorCode() != "query_invalid" {
			t.Errorf("bad query: %d %s", r.Status, r.Body)
		}
		r = e.Do("POST", "/api/v1/global/search", key, map[string]any{"query": 3})
		if r.Status != 400 || !strings.Contains(string(r.Body), "query must be a string") {
			t.Errorf("query not a string: %d %s", r.Status, r.Body)
		}
		if used := creditsUsed(t, e, key); used != 2 {
			t.Errorf("credits used %d, want 2", used)
		}
	})
}
