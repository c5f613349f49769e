package api_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// TestWhoisDataBesideDomainListings: domain details, subdomains and the
// OEM attack-surface search of a domain carry whois_data, the stored WHOIS
// record of the registered domain in the shape /oem/whois/lookup gives
// (issue 17 item 4), null when none is stored, and never ask a registry
// (with the registry throttled, an unstored domain is still a 200 with
// null, where a lookup would be a 503).
func TestWhoisDataBesideDomainListings(t *testing.T) {
	u := newWhoisUpstream(t)
	eachWith(t, whoisOptions(t, u), func(t *testing.T, e *apitest.Env) {
		u.throttled.Store(false)
		_, key := e.Account(periscope.Account{Company: "Whois Data Co", Plan: "enterprise", Enterprise: true, OEM: true,
			CreditsPerMonth: 100, OEMCreditsPerMonth: 100})
		whoisData := func(r apitest.Response, path string, inResponse bool) json.RawMessage {
			t.Helper()
			if r.Status != 200 {
				t.Fatalf("%s: %d %s", path, r.Status, r.Body)
			}
			var body map[string]json.RawMessage
			r.JSON(t, &body)
			if inResponse {
				var resp map[string]json.RawMessage
				if err := json.Unmarshal(body["response"], &resp); err != nil {
					t.Fatalf("%s: %v in %.300s", path, err, r.Body)
				}
				body = resp
			}
			got, ok := body["whois_data"]
			if !ok {
				t.Fatalf("%s: no whois_data field in %.300s", path, r.Body)
			}
			return got
		}
		listings := func(domain string) map[string]json.RawMessage {
			return map[string]json.RawMessage{
				"details":        whoisData(e.Do("GET", "/api/v1/domain/"+domain+"/details", key, nil), domain+" details", false),
				"subdomains":     whoisData(e.Do("GET", "/api/v1/domain/"+domain+"/subdomains", key, nil), domain+" subdomains", false),
				"attack-surface": whoisData(e.Do("POST", "/api/v1/oem/attack-surface/search", key, map[string]any{"query": domain}), domain+" attack surface", true),
			}
		}
		// Nothing stored yet: null.
		for route, wd := range listings("google.com") {
			if string(wd) != "null" {
				t.Errorf("%s before any lookup: whois_data %s, want null", route, wd)
			}
		}
		// A lookup stores the record (from the recorded RDAP answer).
		r := e.Do("POST", "/api/v1/oem/whois/lookup", key, map[string]any{"domain": "google.com"})
		var lookup struct {
			WhoisData json.RawMessage `json:"whois_data"`
		}
		r.JSON(t, &lookup)
		if r.Status != 200 || !bytes.Contains(lookup.WhoisData, []byte(`"registrar":"MarkMonitor Inc."`)) {
			t.Fatalf("lookup: %d %.300s", r.Status, r.Body)
		}
		// Registry throttled from here: listings read only what is stored.
		u.throttled.Store(true)
		for _, domain := range []string{"google.com", "www.google.com"} {
			for route, wd := range listings(domain) {
				if !bytes.Equal(wd, lookup.WhoisData) {
					t.Errorf("%s of %s: whois_data\n%s\nwant the lookup's\n%s", route, domain, wd, lookup.WhoisData)
				}
			}
		}
		for _, domain := range []string{"other.com", "shop.example.org"} {
			for route, wd := range listings(domain) {
				if string(wd) != "null" {
					t.Errorf("%s of %s, not stored: whois_data %.200s, want null", route, domain, wd)
				}
			}
		}
		// An IP range search has no domain and no whois_data.
		r = e.Do("POST", "/api/v1/oem/attack-surface/search", key, map[string]any{"query": "192.0.2.0/24"})
		if r.Status != 200 || bytes.Contains(r.Body, []byte("whois_data")) {
			t.Errorf("range search: %d %.200s", r.Status, r.Body)
		}
	})
}
