package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/scan"
)

// acmeHTTPX is an httpx -json -include-response line whose body names the
// site, describes it and links its logo and social pages.
const acmeHTTPX = `{"timestamp":"2026-11-20T10:00:00Z","port":"443","url":"https://www.acme-widgets.com","input":"www.acme-widgets.com","title":"Acme Widgets - Industrial widgets since 1950","scheme":"https","webserver":"nginx","host":"52.1.2.40","a":["52.1.2.40"],"status_code":200,"failed":false,` +
	`"body":"<!doctype html><html><head><title>Acme Widgets</title><meta property=\"og:site_name\" content=\"Acme Widgets Inc.\"><meta name=\"description\" content=\"Industrial   widgets, made to last.\"><meta property=\"og:image\" content=\"/static/logo.png\"><link rel=\"icon\" href=\"/favicon.ico\"></head>` +
	`<body><a href=\"https://twitter.com/acmewidgets\">Twitter</a> <a href=\"https://www.linkedin.com/company/acme-widgets/\">LinkedIn</a> <a href=\"https://github.com/\">GitHub home</a> <a href=\"/about\">About</a></body></html>"}`

func TestDomainCollection(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		acct, key := e.Account(periscope.Account{Company: "Collect Co", Plan: "free", CreditsPerMonth: 20})
		var hs []host.Host
		if _, err := scan.ParseHTTPX(strings.NewReader(acmeHTTPX+"\n"), func(h host.Host) error { hs = append(hs, h); return nil }); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Hosts.UpsertHosts(ctx, append(hs, host.Host{Host: "acme-widgets.com", IPAddress: "52.1.2.41"})); err != nil {
			t.Fatal(err)
		}
		var out struct {
			Status int            `json:"status"`
			Data   map[string]any `json:"data"`
		}
		r := doJSON(t, e, http.MethodGet, "/api/v1/nexus/domain-collection/lookup?domain=Acme-Widgets.com", key, nil, &out)
		d := out.Data
		if r.Status != 200 || d["company_name"] != "Acme Widgets Inc." || d["company_name_source"] != "page_site_name" || d["description"] != "Industrial widgets, made to last." ||
			d["meta_logo_url"] != "https://www.acme-widgets.com/static/logo.png" || d["host"] != "www.acme-widgets.com" || d["title"] != "Acme Widgets - Industrial widgets since 1950" {
			t.Fatalf("lookup: %d %s", r.Status, r.Body)
		}
		if tw, _ := d["twitter_urls"].([]any); len(tw) != 1 || tw[0] != "https://twitter.com/acmewidgets" {
			t.Errorf("twitter: %v", d["twitter_urls"])
		}
		if li, _ := d["linkedin_urls"].([]any); len(li) != 1 {
			t.Errorf("linkedin: %v", d["linkedin_urls"])
		}
		if gh, _ := d["github_urls"].([]any); len(gh) != 0 {
			t.Errorf("a network's home page is no profile: %v", d["github_urls"])
		}
		for q, want := range map[string]int{"?domain=unknown-site.com": 404, "": 422, "?domain=not+a+domain": 422} {
			if r := e.Do(http.MethodGet, "/api/v1/nexus/domain-collection/lookup"+q, key, nil); r.Status != want {
				t.Errorf("lookup%s: %d %s", q, r.Status, r.Body)
			}
		}
		var cs struct {
			Data []map[string]string `json:"data"`
		}
		if r := doJSON(t, e, http.MethodGet, "/api/v1/nexus/domain-collection/company-lookup?query=industrial+WIDGETS", key, nil, &cs); r.Status != 200 ||
			len(cs.Data) != 1 || cs.Data[0]["company_name"] != "Acme Widgets Inc." || cs.Data[0]["domain"] != "acme-widgets.com" {
			t.Fatalf("company lookup: %d %s", r.Status, r.Body)
		}
		cs.Data = nil
		if r := doJSON(t, e, http.MethodGet, "/api/v1/nexus/domain-collection/company-lookup?query=nothing+like+it", key, nil, &cs); r.Status != 200 || cs.Data == nil || len(cs.Data) != 0 {
			t.Errorf("no match: %d %s", r.Status, r.Body)
		}
		for _, q := range []string{"", "?query=ab"} {
			if r := e.Do(http.MethodGet, "/api/v1/nexus/domain-collection/company-lookup"+q, key, nil); r.Status != 422 {
				t.Errorf("company lookup%s: %d %s", q, r.Status, r.Body)
			}
		}
		if a, err := e.Store.Account(ctx, acct.ID); err != nil || a.CreditsUsed != 3 {
			t.Errorf("credits used %d (%v), want 3", a.CreditsUsed, err)
		}
	})
}
