package api_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// seedHosts stores a small index: 12 hosts of acme.example (even ones on
// AWS in the US with ssh, odd ones in Germany), one unresolved name, and
// the bare IP of a scan.
func seedHosts(t *testing.T, e *apitest.Env) {
	t.Helper()
	var hs []host.Host
	for i := range 12 {
		ip := fmt.Sprintf("52.1.2.%d", 10+i)
		h := host.Host{
			Host: fmt.Sprintf("h%02d.acme.com", i), IPAddress: ip, DNS: host.DNS{A: []string{ip}},
			IPMetadata:      host.IPMetadata{ASN: 16509, Organization: "Amazon.com, Inc.", CountryCode: "US", CountryName: "United States", CityName: "Ashburn"},
			NetworkServices: []host.Service{{Port: 443, Service: "https", Product: "nginx"}},
			Web:             []string{"WordPress"}, Tags: []string{"web"},
			HTTPStatusCode: 200, HTTPTitle: fmt.Sprintf("Acme portal %d", i),
			FirstSeen: 1763000000, LastSeen: 1763800000 + int64(i),
		}
		if i%2 == 0 {
			h.NetworkServices = append(h.NetworkServices, host.Service{Port: 22, Service: "ssh", Product: "OpenSSH", Version: "9.6"})
			h.Cloud = host.Cloud{Provider: "aws", Region: "us-east-1"}
		} else {
			h.IPMetadata = host.IPMetadata{ASN: 24940, Organization: "Hetzner Online GmbH", CountryCode: "DE", CountryName: "Germany", CityName: "Falkenstein"}
		}
		hs = append(hs, h)
	}
	hs = append(hs, host.Host{Host: "old.acme.com", FirstSeen: 1700000000, LastSeen: 1700000000},
		host.Host{Host: "acme-shop.com", IPAddress: "52.1.3.1"},
		host.Host{Host: "52.1.2.200", NetworkServices: []host.Service{{Port: 3389, Service: "ms-wbt-server"}}})
	if _, err := e.Hosts.UpsertHosts(context.Background(), hs); err != nil {
		t.Fatal(err)
	}
}

func TestGlobalSearch(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		seedHosts(t, e)
		_, key := e.Account(periscope.Account{Company: "Searcher", Plan: "free", CreditsPerMonth: 1000, MaxResultsPerRequest: 500})
		type result struct {
			Status            int         `json:"status"`
			Results           []host.Host `json:"results"`
			TotalQueryResults int         `json:"total_query_results"`
			TotalPages        int         `json:"total_pages"`
			Page              int         `json:"page"`
			PageSize          int         `json:"page_size"`
		}
		good := []struct {
			body         map[string]any
			total, pages int
			first        string
		}{
			{map[string]any{"country": "US"}, 6, 1, "h00.acme.com"},
			{map[string]any{"country": "germany"}, 6, 1, "h01.acme.com"},
			{map[string]any{"port": 22, "cloud_provider": "AWS", "technology": "wordpress"}, 6, 1, "h00.acme.com"},
			{map[string]any{"asn": 24940, "product": "nginx", "organization": "hetzner online gmbh"}, 6, 1, "h01.acme.com"},
			{map[string]any{"tags": "web", "cdn": "cloudflare"}, 0, 0, ""},
			{map[string]any{"tag": []string{"web"}, "tech": "WordPress", "port": []int{443, 22}}, 6, 1, "h00.acme.com"},
			{map[string]any{"ip_address": "52.1.2.13"}, 1, 1, "h03.acme.com"},
			{map[string]any{"ip": "52.1.2.200"}, 1, 1, "52.1.2.200"},
			{map[string]any{"city_name": "Ashburn", "cloud_region": "us-east-1"}, 6, 1, "h00.acme.com"},
			{map[string]any{"domain": "acme.com"}, 13, 1, "h00.acme.com"},
			{map[string]any{"host": "H05.ACME.COM"}, 1, 1, "h05.acme.com"},
			{map[string]any{"subdomain": "acme.com", "is_resolvable": false}, 1, 1, "old.acme.com"},
			{map[string]any{"http_title": "portal 1", "country_code": "de"}, 2, 1, "h01.acme.com"},
			{map[string]any{"http_status_code": 200, "is_live": true, "is_cloud": true, "has_ipv6": false}, 6, 1, "h00.acme.com"},
			{map[string]any{"service": "ms-wbt-server", "tld": "com"}, 0, 0, ""},
			{map[string]any{"service": "ms-wbt-server"}, 1, 1, "52.1.2.200"},
			{map[string]any{"dns_a": "52.1.2.10", "cert_sha256_fingerprint": "ab"}, 0, 0, ""},
			{map[string]any{"country": "US", "limit": 4}, 6, 2, "h00.acme.com"},
			{map[string]any{"country": "US", "limit": 4, "page": 2}, 6, 2, "h08.acme.com"},
			{map[string]any{"country": "US", "page": 9}, 6, 1, ""},
		}
		for _, c := range good {
			r := e.Do("POST", "/api/v1/global/search", key, c.body)
			if r.Status != 200 {
				t.Errorf("%v: %d %s", c.body, r.Status, r.Body)
				continue
			}
			var got result
			r.JSON(t, &got)
			if got.TotalQueryResults != c.total || got.TotalPages != c.pages {
				t.Errorf("%v: total %d pages %d, want %d %d", c.body, got.TotalQueryResults, got.TotalPages, c.total, c.pages)
			}
			if c.first != "" && (len(got.Results) == 0 || got.Results[0].Host != c.first) {
				t.Errorf("%v: first result %v, want %s", c.body, got.Results, c.first)
			}
			if c.first == "" && len(got.Results) != 0 {
				t.Errorf("%v: %d results, want none", c.body, len(got.Results))
			}
		}
		// Lists are [] and ip_address is absent, never "".
		r := e.Do("POST", "/api/v1/global/search", key, map[string]any{"host": "old.acme.com"})
		if s := string(r.Body); strings.Contains(s, "null") || strings.Contains(s, `"ip_address"`) || !strings.Contains(s, `"network_ports":[]`) {
			t.Errorf("host object: %s", s)
		}

		bad := []struct {
			body any
			want string // in the message
		}{
			{map[string]any{}, "at least one search filter"},
			{map[string]any{"page": 1, "limit": 10}, "at least one search filter"},
			{map[string]any{"contry": "US"}, `contry\" is not a search filter`},
			{map[string]any{"asn": "16509"}, "asn must be an integer"},
			{map[string]any{"port": 443.5}, "port must be an integer"},
			{`{"port": 1e3}`, "port must be an integer"},
			{map[string]any{"country": 1}, "country must be a string"},
			{map[string]any{"country": ""}, "country must not be empty"},
			{map[string]any{"is_live": "yes"}, "is_live must be true or false"},
			{map[string]any{"country": "US", "limit": 0}, "limit must be between 1 and 200"},
			{map[string]any{"country": "US", "limit": 201}, "limit must be between 1 and 200"},
			{map[string]any{"country": "US", "page": 0}, "page must be >= 1"},
			{map[string]any{"country": "US", "page": "2"}, "page must be an integer"},
			{map[string]any{"ip": "52.1.2"}, "ip must be an IP address"},
			{map[string]any{"domain": "1.2.3.4"}, "domain must be a domain name"},
			{map[string]any{"http_favicon_hash": "123"}, "not indexed"},
			{map[string]any{"country": "D\u0000E"}, "country must be UTF-8 text without NUL"},
			{map[string]any{"product": []string{"nginx", "x\u0001"}}, "product must be UTF-8 text"},
			{map[string]any{"http_title": strings.Repeat("a", 1025)}, "http_title must be at most 1024 characters"},
			{`["country"]`, "JSON object"},
		}
		for _, c := range bad {
			r := e.Do("POST", "/api/v1/global/search", key, c.body)
			if r.Status != 400 || !strings.Contains(string(r.Body), c.want) {
				t.Errorf("%v: %d %s, want 400 with %q", c.body, r.Status, r.Body, c.want)
			}
		}
		// Failed searches are not charged: only the good ones above and the
		// host-object one cost a credit.
		var st struct {
			UserCredits struct {
				CreditsUsage int `json:"credits_usage"`
			} `json:"user_credits"`
		}
		e.Do("GET", "/api/v1/auth/status", key, nil).JSON(t, &st)
		if st.UserCredits.CreditsUsage != len(good)+1 {
			t.Errorf("credits used %d, want %d", st.UserCredits.CreditsUsage, len(good)+1)
		}
	})
}

func TestGlobalSearchClipsToMaxResults(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		seedHosts(t, e)
		_, key := e.Account(periscope.Account{Company: "Small", Plan: "free", CreditsPerMonth: 10, MaxResultsPerRequest: 4})
		var got struct {
			Results           []host.Host `json:"results"`
			TotalQueryResults int         `json:"total_query_results"`
			TotalPages        int         `json:"total_pages"`
			PageSize          int         `json:"page_size"`
		}
		e.Do("POST", "/api/v1/global/search", key, map[string]any{"domain": "acme.com", "limit": 200}).JSON(t, &got)
		if len(got.Results) != 4 || got.PageSize != 4 || got.TotalQueryResults != 13 || got.TotalPages != 4 {
			t.Errorf("clipped page: %d results, size %d, total %d, pages %d", len(got.Results), got.PageSize, got.TotalQueryResults, got.TotalPages)
		}
	})
}

func TestSubdomainsAndHost(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		seedHosts(t, e)
		_, key := e.Account(periscope.Account{Company: "Subs", Plan: "free", CreditsPerMonth: 100, MaxResultsPerRequest: 500})
		var subs struct {
			Hosts    []string `json:"hosts"`
			Metadata struct {
				AllResultsCount int   `json:"all_results_count"`
				LastScanned     int64 `json:"last_scanned"`
			} `json:"metadata"`
		}
		e.Do("GET", "/api/v1/domain/acme.com/subdomains", key, nil).JSON(t, &subs)
		if len(subs.Hosts) != 13 || subs.Metadata.AllResultsCount != 13 || subs.Hosts[0] != "h00.acme.com" || subs.Metadata.LastScanned != 1763800011 {
			t.Errorf("subdomains = %+v", subs)
		}
		e.Do("GET", "/api/v1/domain/ACME.com./subdomains?resolvable_only=true", key, nil).JSON(t, &subs)
		if len(subs.Hosts) != 12 || subs.Metadata.AllResultsCount != 12 {
			t.Errorf("resolvable subdomains = %+v", subs)
		}
		var details struct {
			Hosts []host.Host `json:"hosts"`
		}
		e.Do("GET", "/api/v1/domain/acme.com/details?limit=2&page=2", key, nil).JSON(t, &details)
		// Most recently seen first: h11, h10 | h09, h08.
		if len(details.Hosts) != 2 || details.Hosts[0].Host != "h09.acme.com" {
			t.Errorf("details = %+v", details.Hosts)
		}
		r := e.Do("GET", "/api/v1/host/h02.acme.com", key, nil)
		var h host.Host
		r.JSON(t, &h)
		if r.Status != 200 || h.Cloud.Provider != "aws" || len(h.NetworkServices) != 2 || h.IPMetadata.ASN != 16509 {
			t.Errorf("host: %d %s", r.Status, r.Body)
		}
		// FullHunt's fields are there, empty rather than null when unknown,
		// and raw is the stored document: the same host.
		m := r.Map(t)
		for _, k := range []string{"categories", "urls"} {
			if l, ok := m[k].([]any); !ok || len(l) != 0 {
				t.Errorf("%s = %#v, want []", k, m[k])
			}
		}
		if x, ok := m["extracted"].(map[string]any); !ok || len(x) != 0 {
			t.Errorf("extracted = %#v, want {}", m["extracted"])
		}
		cert, _ := m["cert_object"].(map[string]any)
		for _, k := range []string{"subject_country", "issuer_string", "ip_addresses", "email_addresses", "is_valid_hostname", "remote_ip_address"} {
			if v, ok := cert[k]; !ok || v == nil {
				t.Errorf("cert_object.%s = %#v", k, v)
			}
		}
		var withRaw struct {
			Raw host.Host `json:"raw"`
		}
		r.JSON(t, &withRaw)
		if diff := cmp.Diff(h, withRaw.Raw); diff != "" {
			t.Errorf("raw differs from the host object (-host +raw):\n%s", diff)
		}
		used := credits(t, e, key)
		if r := e.Do("GET", "/api/v1/host/nothing.acme.com", key, nil); r.Status != 404 || r.ErrorCode() != "not_found" {
			t.Errorf("unknown host: %d %s", r.Status, r.Body)
		}
		for _, p := range []string{
			"/api/v1/domain/1.2.3.4/subdomains", "/api/v1/domain/acme.com%2Fadmin/subdomains",
			"/api/v1/domain/com/subdomains", "/api/v1/domain/acme.com/subdomains?resolvable_only=maybe",
			"/api/v1/domain/acme.com/details?limit=0", "/api/v1/domain/acme.com/details?page=0",
			"/api/v1/domain/a%20b.com/details", "/api/v1/host/a%20b",
		} {
			if r := e.Do("GET", p, key, nil); r.Status != 400 {
				t.Errorf("%s: %d %s, want 400", p, r.Status, r.Body)
			}
		}
		if got := credits(t, e, key); got != used {
			t.Errorf("failed requests were charged: %d credits used, want %d", got, used)
		}
	})
}

func credits(t *testing.T, e *apitest.Env, key string) int {
	var st struct {
		UserCredits struct {
			CreditsUsage int `json:"credits_usage"`
		} `json:"user_credits"`
	}
	e.Do("GET", "/api/v1/auth/status", key, nil).JSON(t, &st)
	return st.UserCredits.CreditsUsage
}

func TestAttackSurface(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		seedHosts(t, e)
		keys := profiles(e)
		type resp struct {
			Response struct {
				Domain   string      `json:"domain"`
				IPRange  string      `json:"ip_range"`
				Host     string      `json:"host"`
				Hosts    []host.Host `json:"hosts"`
				Data     host.Host   `json:"data"`
				Metadata struct {
					AllResultsCount int `json:"all_results_count"`
				} `json:"metadata"`
			} `json:"response"`
		}
		cases := []struct {
			body         map[string]any
			domain, cidr string
			n            int
		}{
			{map[string]any{"query": "acme.com"}, "acme.com", "", 13},
			{map[string]any{"query": "acme.com", "type": "domain", "query_tags": map[string]any{"ticket": "T-1"}}, "acme.com", "", 13},
			{map[string]any{"query": "52.1.2.0/28"}, "", "52.1.2.0/28", 6},
			{map[string]any{"query": "52.1.2.200", "type": "ip_range"}, "", "52.1.2.200/32", 1},
			{map[string]any{"query": "52.1.0.0/16"}, "", "52.1.0.0/16", 14},
		}
		for _, c := range cases {
			r := e.Do("POST", "/api/v1/oem/attack-surface/search", keys["oem"], c.body)
			var got resp
			r.JSON(t, &got)
			if r.Status != 200 || got.Response.Domain != c.domain || got.Response.IPRange != c.cidr ||
				len(got.Response.Hosts) != c.n || got.Response.Metadata.AllResultsCount != c.n {
				t.Errorf("%v: %d %s", c.body, r.Status, r.Body)
			}
		}
		for _, b := range []map[string]any{
			{}, {"query": ""}, {"query": "52.0.0.0/8"}, {"query": "2001:db8::/32"}, {"query": "acme.com", "type": "asn"},
			{"query": "acme.com/x"}, {"query": "1.2.3.4", "type": "domain"}, {"query": 5},
		} {
			if r := e.Do("POST", "/api/v1/oem/attack-surface/search", keys["oem"], b); r.Status != 400 {
				t.Errorf("%v: %d %s, want 400", b, r.Status, r.Body)
			}
		}
		r := e.Do("POST", "/api/v1/oem/attack-surface/host", keys["oem"], map[string]any{"query": "H01.acme.com"})
		var got resp
		r.JSON(t, &got)
		if r.Status != 200 || got.Response.Host != "h01.acme.com" || got.Response.Data.IPMetadata.CountryCode != "DE" {
			t.Errorf("attack-surface host: %d %s", r.Status, r.Body)
		}
		if r := e.Do("POST", "/api/v1/oem/attack-surface/host", keys["oem"], map[string]any{"query": "nope.acme.com"}); r.Status != 404 {
			t.Errorf("unknown host: %d %s", r.Status, r.Body)
		}
		if r := e.Do("POST", "/api/v1/oem/attack-surface/host", keys["oem"], map[string]any{"query": "bad name!"}); r.Status != 400 {
			t.Errorf("bad host: %d %s", r.Status, r.Body)
		}
		if r := e.Do("POST", "/api/v1/oem/attack-surface/host", keys["enterprise"], map[string]any{"query": "h01.acme.com"}); r.Status != 403 || r.ErrorCode() != "oem_required" {
			t.Errorf("non-OEM account: %d %s", r.Status, r.Body)
		}
	})
}

// The structs below are shaped like the FullHunt clients' own decoders:
// subfinder and uncover (Go, strict types: hosts []string, metadata ints),
// theHarvester and bbot (Python: response["hosts"] iterated as strings;
// bbot's auth check reads user_credits.remaining_credits as a number).
type subfinderFullHunt struct {
	Hosts   []string `json:"hosts"`
	Message string   `json:"message"`
	Status  int      `json:"status"`
}

type uncoverFullHunt struct {
	Domain   string   `json:"domain"`
	Hosts    []string `json:"hosts"`
	Message  string   `json:"message"`
	Metadata struct {
		AllResultsCount         int    `json:"all_results_count"`
		AvailableResultsForUser int    `json:"available_results_for_user"`
		Domain                  string `json:"domain"`
		LastScanned             int    `json:"last_scanned"`
		MaxResultsForUser       int    `json:"max_results_for_user"`
		Timestamp               int    `json:"timestamp"`
		UserPlan                string `json:"user_plan"`
	} `json:"metadata"`
	Status int `json:"status"`
}

type bbotAuthStatus struct {
	UserCredits struct {
		RemainingCredits int `json:"remaining_credits"`
	} `json:"user_credits"`
}

func TestFullHuntClientsDecodeSubdomains(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		seedHosts(t, e)
		_, key := e.Account(periscope.Account{Company: "Clients", Plan: "free", CreditsPerMonth: 100, MaxResultsPerRequest: 5})
		r := e.Do("GET", "/api/v1/domain/acme.com/subdomains", key, nil)
		golden(t, "subdomains.golden.json", r.Body)
		dec := func(v any) {
			t.Helper()
			if err := strictDecode(r.Body, v); err != nil {
				t.Fatalf("decode into %T: %v", v, err)
			}
		}
		var sf subfinderFullHunt
		dec(&sf)
		var uc uncoverFullHunt
		dec(&uc)
		if sf.Status != 200 || len(sf.Hosts) != 5 || uc.Metadata.AllResultsCount != 13 || uc.Metadata.AvailableResultsForUser != 5 ||
			uc.Metadata.MaxResultsForUser != 5 || uc.Metadata.UserPlan != "free" {
			t.Errorf("decoded %+v %+v", sf, uc)
		}
		// theHarvester: `for host in response["hosts"]` with str methods.
		var harvester map[string]any
		dec(&harvester)
		for _, h := range harvester["hosts"].([]any) {
			if _, ok := h.(string); !ok {
				t.Errorf("theHarvester host %v is not a string", h)
			}
		}
		// An unknown domain still gives a list, never null.
		r = e.Do("GET", "/api/v1/domain/unknown.org/subdomains", key, nil)
		if !strings.Contains(string(r.Body), `"hosts":[]`) {
			t.Errorf("empty subdomains: %s", r.Body)
		}

		r = e.Do("GET", "/api/v1/auth/status", key, nil)
		golden(t, "auth_status.golden.json", r.Body)
		var bb bbotAuthStatus
		dec(&bb)
		if bb.UserCredits.RemainingCredits <= 0 {
			t.Errorf("bbot would disable itself: %s", r.Body)
		}
	})
}

// golden compares got with testdata/name; -update rewrites it.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}
