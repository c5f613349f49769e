package main

import (
	"encoding/json"
	"testing"

	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// TestDemoDomainsHaveWhois: the demo's domains with hosts carry a WHOIS
// record, so whois_data is filled in where FullHunt's recipes read it:
// domain details, subdomains and the OEM attack-surface search.
func TestDemoDomainsHaveWhois(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			s := startServer(t, storetest.DSN(t, engine), "--demo")
			keys := demoKeys(t, s.stdout.String())
			type whoisAnswer struct {
				WhoisData *struct {
					Domain string `json:"domain"`
					Whois  *struct {
						Registrar string `json:"registrar"`
					} `json:"whois"`
				} `json:"whois_data"`
				Response *struct {
					WhoisData *struct {
						Domain string `json:"domain"`
					} `json:"whois_data"`
				} `json:"response"`
			}
			for _, d := range []string{"megacorp.com", "initech.io", "globex.com"} {
				for _, path := range []string{"/api/v1/domain/" + d + "/details", "/api/v1/domain/" + d + "/subdomains"} {
					code, body := s.do(t, "GET", path, keys["enterprise"], "")
					var a whoisAnswer
					if err := json.Unmarshal(body, &a); err != nil || code != 200 || a.WhoisData == nil || a.WhoisData.Domain != d || a.WhoisData.Whois == nil || a.WhoisData.Whois.Registrar != "Example Registrar, Inc." {
						t.Errorf("%s: %d %.400s", path, code, body)
					}
				}
				code, body := s.do(t, "POST", "/api/v1/oem/attack-surface/search", keys["oem"], `{"query":"`+d+`"}`)
				var a whoisAnswer
				if err := json.Unmarshal(body, &a); err != nil || code != 200 || a.Response == nil || a.Response.WhoisData == nil || a.Response.WhoisData.Domain != d {
					t.Errorf("attack-surface search %s: %d %.400s", d, code, body)
				}
			}
		})
	}
}
