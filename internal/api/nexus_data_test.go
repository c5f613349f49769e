package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/tor"
	"github.com/periscope-oss/periscope/internal/torstore"
	"github.com/periscope-oss/periscope/internal/whoislookup"
	"github.com/periscope-oss/periscope/internal/whoisstore"
)

func TestNexusTorCheckIP(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		acct, key := e.Account(periscope.Account{Company: "Tor Co", Plan: "free", CreditsPerMonth: 10})
		type check struct {
			Status int `json:"status"`
			Data   struct {
				IP        string `json:"ip_address"`
				FirstSeen int64  `json:"first_seen"`
				LastSeen  int64  `json:"last_seen"`
			} `json:"data"`
			Count      int   `json:"count"`
			ListLoaded int64 `json:"list_loaded"`
		}
		var c check
		// A fresh install: no list, so no address is an exit, and it says so.
		if r := doJSON(t, e, http.MethodGet, "/api/v1/nexus/tor/check-ip?ip=185.241.208.232", key, nil, &c); r.Status != 200 || c.Count != 0 || c.ListLoaded != 0 {
			t.Fatalf("before a list: %d %s", r.Status, r.Body)
		}
		f, err := os.Open("../tor/testdata/exit-addresses_2024-03-12.txt")
		if err != nil {
			t.Fatal(err)
		}
		exits, err := tor.Read(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := torstore.New(e.Store).Load(ctx, "exit-addresses", exits); err != nil {
			t.Fatal(err)
		}
		c = check{}
		if r := doJSON(t, e, http.MethodGet, "/api/v1/nexus/tor/check-ip?ip=185.241.208.232", key, nil, &c); r.Status != 200 || c.Count != 1 ||
			c.Data.IP != "185.241.208.232" || c.Data.FirstSeen != time.Date(2024, 3, 12, 8, 10, 51, 0, time.UTC).Unix() || c.ListLoaded != e.Clock.Now().Unix() {
			t.Fatalf("an exit: %d %s", r.Status, r.Body)
		}
		c = check{}
		if r := doJSON(t, e, http.MethodGet, "/api/v1/nexus/tor/check-ip?ip=8.8.8.8", key, nil, &c); r.Status != 200 || c.Count != 0 || c.Data.IP != "8.8.8.8" {
			t.Fatalf("not an exit: %d %s", r.Status, r.Body)
		}
		for _, bad := range []string{"", "?ip=", "?ip=999.1.1.1", "?ip=fe80::1%25eth0", "?ip=example.com"} {
			if r := e.Do(http.MethodGet, "/api/v1/nexus/tor/check-ip"+bad, key, nil); r.Status != 422 || r.ErrorCode() != "unprocessable_parameter" {
				t.Errorf("%q: %d %s", bad, r.Status, r.Body)
			}
		}
		if a, err := e.Store.Account(ctx, acct.ID); err != nil || a.CreditsUsed != 3 {
			t.Errorf("credits used %d (%v), want 3: failures are not charged", a.CreditsUsed, err)
		}
	})
}

func TestNexusWhois(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		acct, key := e.Account(periscope.Account{Company: "Whois Co", Plan: "free", CreditsPerMonth: 20})
		ws := whoisstore.New(e.Store)
		for _, f := range []string{"testdata/whois/whoisit_rdap.verisign.com_domain_GOOGLE.COM.json", "testdata/whois/it_google.it.txt"} {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := whoislookup.Ingest(ctx, ws, b, f, e.Clock.Now(), whoislookup.DefaultCacheTTL); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
		}
		var l struct {
			Domain    string         `json:"domain"`
			WhoisData map[string]any `json:"whois_data"`
		}
		if r := doJSON(t, e, http.MethodGet, "/api/v1/nexus/whois/lookup?domain=www.Google.com", key, nil, &l); r.Status != 200 || l.Domain != "google.com" || l.WhoisData["domain"] != "google.com" {
			t.Fatalf("lookup: %d %s", r.Status, r.Body)
		}
		if r := e.Do(http.MethodGet, "/api/v1/nexus/whois/lookup?domain=example.net", key, nil); r.Status != 200 || string(r.Body) != "{\"domain\":\"example.net\",\"whois_data\":null}\n" {
			t.Fatalf("not collected: %d %s", r.Status, r.Body)
		}
		for _, bad := range []string{"", "?domain=", "?domain=8.8.8.8", "?domain=https://google.com/"} {
			if r := e.Do(http.MethodGet, "/api/v1/nexus/whois/lookup"+bad, key, nil); r.Status != 422 {
				t.Errorf("lookup%s: %d %s", bad, r.Status, r.Body)
			}
		}

		type search struct {
			Total   int              `json:"total_results"`
			Results []map[string]any `json:"results"`
		}
		domains := func(path string) []string {
			t.Helper()
			var s search
			if r := doJSON(t, e, http.MethodGet, "/api/v1/nexus/whois/search?"+path, key, nil, &s); r.Status != 200 || s.Total < len(s.Results) {
				t.Fatalf("search %s: %d %s", path, r.Status, r.Body)
			}
			var out []string
			for _, x := range s.Results {
				out = append(out, x["domain"].(string))
			}
			return out
		}
		both := []string{"google.com", "google.it"}
		if got := domains("nameserver=ns1.google.com"); len(got) != 2 {
			t.Errorf("name server: %v, want %v", got, both)
		}
		// ORed: a registrar no record has, or a name server both have.
		if got := domains("registrar=Nobody+Registrar&nameserver=ns1.google.com"); len(got) != 2 {
			t.Errorf("registrar OR name server: %v, want %v", got, both)
		}
		// tld is ANDed with the others.
		if got := domains("tld=it&nameserver=ns1.google.com"); len(got) != 1 || got[0] != "google.it" {
			t.Errorf("tld AND name server: %v", got)
		}
		if got := domains("expires_before=2000-01-01&registrar=Nobody"); len(got) != 0 {
			t.Errorf("nothing: %v", got)
		}
		if got := domains("nameserver=ns1.google.com&limit=1"); len(got) != 1 {
			t.Errorf("limit 1: %v", got)
		}
		for _, bad := range []string{"", "limit=5", "nameserver=ns1.google.com&limit=11", "tld=com&expires_before=soon"} {
			if r := e.Do(http.MethodGet, "/api/v1/nexus/whois/search?"+bad, key, nil); r.Status != 422 {
				t.Errorf("search %q: %d %s", bad, r.Status, r.Body)
			}
		}
		if a, err := e.Store.Account(ctx, acct.ID); err != nil || a.CreditsUsed != 7 {
			t.Errorf("credits used %d (%v), want 7", a.CreditsUsed, err)
		}
	})
}

// doJSON sends a request and decodes a JSON answer into v (left as it is
// when the answer is not JSON).
func doJSON(t *testing.T, e *apitest.Env, method, path, key string, body, v any) apitest.Response {
	t.Helper()
	r := e.Do(method, path, key, body)
	json.Unmarshal(r.Body, v)
	return r
}
