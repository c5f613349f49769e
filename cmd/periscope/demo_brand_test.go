package main

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// TestServeDemoBrand checks that the demo enterprise organization has
// certificates, typosquats and phishing candidates, through the real server.
func TestServeDemoBrand(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			s := startServer(t, storetest.DSN(t, engine), "--demo")
			s.client.Transport = apitest.Validator(t, fetchOpenAPI(t, s.base)).Transport(http.DefaultTransport)
			keys := demoKeys(t, s.stdout.String())
			want := map[string]string{
				"/api/v1/enterprise/darkweb/typosquatting":               "githuh.com",
				"/api/v1/enterprise/darkweb/potential-phishing?q=github": "github-login.com",
				"/api/v1/enterprise/certificates?q=letsencrypt":          "letsencrypt.org",
			}
			for path, name := range want {
				status, body := s.do(t, "GET", path, keys["enterprise"], "")
				var l struct {
					TotalResults int `json:"total_results"`
					Results      struct {
						Items []map[string]any `json:"items"`
					} `json:"results"`
				}
				if err := json.Unmarshal(body, &l); err != nil || status != 200 || l.TotalResults == 0 {
					t.Fatalf("%s: %d %s", path, status, body)
				}
				found := false
				for _, it := range l.Results.Items {
					found = found || it["domain"] == name || it["domain_name"] == name
				}
				if !found {
					t.Errorf("%s: %s not listed: %s", path, name, body)
				}
			}
			if status, body := s.do(t, "GET", "/api/v1/enterprise/darkweb/typosquatting", keys["free"], ""); status != 403 {
				t.Errorf("free account: %d %s", status, body)
			}
		})
	}
}
