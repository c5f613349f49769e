package api_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/egress"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/rdap"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/whois"
	"github.com/periscope-oss/periscope/internal/whoislookup"
	"github.com/periscope-oss/periscope/internal/whoisstore"
)

// whoisUpstream is a loopback RDAP registry for .com and a port-43 server
// for .it answering with recorded data.
type whoisUpstream struct {
	rdapURL   string
	whoisAddr string
	throttled atomic.Bool
	// queries counts the domain queries the RDAP registry answered.
	queries atomic.Int64
}

func newWhoisUpstream(t *testing.T) *whoisUpstream {
	u := &whoisUpstream{}
	googleRDAP, err := os.ReadFile("testdata/whois/whoisit_rdap.verisign.com_domain_GOOGLE.COM.json")
	if err != nil {
		t.Fatal(err)
	}
	itRaw, _ := os.ReadFile("testdata/whois/it_google.it.txt")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/com/v1/domain/") {
			u.queries.Add(1)
		}
		switch {
		case u.throttled.Load():
			w.Header().Set("Retry-After", "42")
			w.WriteHeader(http.StatusTooManyRequests)
		case r.URL.Path == "/com/v1/domain/google.com":
			w.Write([]byte(strings.ReplaceAll(string(googleRDAP), "https://rdap.markmonitor.com/rdap", u.rdapURL+"/registrar")))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	u.rdapURL = srv.URL
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				bufio.NewReader(c).ReadString('\n')
				io.WriteString(c, string(itRaw))
			}()
		}
	}()
	u.whoisAddr = ln.Addr().String()
	return u
}

func whoisOptions(t *testing.T, u *whoisUpstream) apitest.Options {
	return apitest.Options{Deps: func(d *api.Deps, s *store.Store) {
		lab := egress.New(egress.Options{AllowPrivate: true})
		d.Whois = whoislookup.New(whoislookup.Config{
			Store:        whoisstore.New(s),
			RDAP:         &rdap.Client{HTTP: lab.HTTPClient(5 * time.Second)},
			WHOIS:        &whois.Client{Dial: lab.DialContext, Servers: whois.Servers{"it": u.whoisAddr}},
			Limiter:      whoislookup.NewLimiter(600, 10, time.Second, time.Now),
			Now:          d.Now,
			DNSBootstrap: &rdap.Registry{Services: [][][]string{{{"com"}, {u.rdapURL + "/com/v1/"}}}},
		})
	}}
}

func TestWhoisLookup(t *testing.T) {
	u := newWhoisUpstream(t)
	eachWith(t, whoisOptions(t, u), func(t *testing.T, e *apitest.Env) {
		u.throttled.Store(false)
		_, oem := e.Account(periscope.Account{Company: "OEM", Plan: "enterprise", Enterprise: true, OEM: true, OEMCreditsPerMonth: 100})
		var res whoislookup.Result
		r := e.Do("POST", "/api/v1/oem/whois/lookup", oem, map[string]any{"domain": "WWW.Google.com", "query_tags": map[string]any{"case": "1"}})
		if r.Status != 200 {
			t.Fatalf("lookup: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &res)
		if res.Domain != "google.com" || res.WhoisData.TLD != "com" || !res.WhoisData.Registered || res.Cached ||
			!strings.Contains(string(res.WhoisData.RDAP), `"registrar":"MarkMonitor Inc."`) {
			t.Fatalf("lookup answer %s", r.Body)
		}
		if r = e.Do("POST", "/api/v1/oem/whois/lookup", oem, map[string]any{"domain": "google.com"}); !strings.Contains(string(r.Body), `"cached":true`) {
			t.Fatalf("second lookup not cached: %s", r.Body)
		}
		// Port 43 for a TLD without RDAP.
		r = e.Do("POST", "/api/v1/oem/whois/lookup", oem, map[string]any{"domain": "google.it"})
		r.JSON(t, &res)
		if r.Status != 200 || res.WhoisData.WHOIS == nil || res.WhoisData.WHOIS.Registrar != "MARKMONITOR-REG" || !strings.Contains(res.WhoisData.WHOIS.Raw, "Domain:             google.it") {
			t.Fatalf("port 43: %d %.400s", r.Status, r.Body)
		}
		// Not registered: a 200 saying so.
		r = e.Do("POST", "/api/v1/oem/whois/lookup", oem, map[string]any{"domain": "no-such-name-here.com"})
		if r.Status != 200 || !strings.Contains(string(r.Body), `"registered":false`) {
			t.Fatalf("not registered: %d %s", r.Status, r.Body)
		}
		// Refused inputs cost nothing.
		for _, bad := range []any{"", "1.2.3.4", "2001:db8::1", "https://google.com", "google.com/path", "com", "co.uk", "goo gle.com", "bad\x00.com", "a..com", 42} {
			r := e.Do("POST", "/api/v1/oem/whois/lookup", oem, map[string]any{"domain": bad})
			if r.Status != 400 {
				t.Errorf("domain %q: %d %s", bad, r.Status, r.Body)
			}
		}
		// Upstream throttled, nothing stored: 503 with Retry-After.
		u.throttled.Store(true)
		r = e.Do("POST", "/api/v1/oem/whois/lookup", oem, map[string]any{"domain": "other.com"})
		if r.Status != 503 || r.Header.Get("Retry-After") != "42" {
			t.Fatalf("throttled: %d %q %s", r.Status, r.Header.Get("Retry-After"), r.Body)
		}
		// Upstream throttled, stored answer: stale.
		r = e.Do("POST", "/api/v1/oem/whois/lookup", oem, map[string]any{"domain": "google.com", "no_cache": true})
		if r.Status != 200 || !strings.Contains(string(r.Body), `"stale":true`) {
			t.Fatalf("stale: %d %.300s", r.Status, r.Body)
		}
		// Search over what was looked up.
		var sr struct {
			Filters      map[string]any     `json:"filters"`
			TotalResults int                `json:"total_results"`
			Results      []whoislookup.Data `json:"results"`
		}
		r = e.Do("POST", "/api/v1/oem/whois/search", oem, map[string]any{"registrar": "markmonitor", "nameserver": "ns1.google.com", "limit": 10})
		r.JSON(t, &sr)
		if r.Status != 200 || sr.TotalResults != 2 || len(sr.Results) != 2 || sr.Filters["registrar"] != "markmonitor" {
			t.Fatalf("search: %d %.500s", r.Status, r.Body)
		}
		r = e.Do("POST", "/api/v1/oem/whois/search", oem, map[string]any{"tld": "com", "expires_before": "2030-01-01", "status": "clientDeleteProhibited"})
		r.JSON(t, &sr)
		if sr.TotalResults != 1 || sr.Results[0].Domain != "google.com" {
			t.Fatalf("search by expiry and status: %.500s", r.Body)
		}
		for _, bad := range []map[string]any{{"limit": 0}, {"limit": 5000}, {"expires_before": "soon"}, {"registrar": "x\x00y"}} {
			if r := e.Do("POST", "/api/v1/oem/whois/search", oem, bad); r.Status != 400 {
				t.Errorf("search %v: %d", bad, r.Status)
			}
		}
		// Charged: 3 lookups answered upstream, 1 cached, 1 stale, 2
		// searches; not the 11 refusals, the 503 or the 4 bad searches.
		var cr struct {
			Response struct {
				CreditsRemaining int `json:"credits_remaining"`
			} `json:"response"`
		}
		e.Do("POST", "/api/v1/oem/account/credits", oem, nil).JSON(t, &cr)
		if cr.Response.CreditsRemaining != 100-7 {
			t.Errorf("credits remaining %d, want 93", cr.Response.CreditsRemaining)
		}
	})
}

func TestWhoisNotConfigured(t *testing.T) {
	eachWith(t, apitest.Options{Deps: func(d *api.Deps, s *store.Store) { d.Whois = nil }}, func(t *testing.T, e *apitest.Env) {
		_, oem := e.Account(periscope.Account{Company: "OEM", Plan: "enterprise", Enterprise: true, OEM: true, OEMCreditsPerMonth: 100})
		if r := e.Do("POST", "/api/v1/oem/whois/lookup", oem, map[string]any{"domain": "google.com"}); r.Status != 503 {
			t.Fatalf("no service: %d %s", r.Status, r.Body)
		}
	})
}

// TestWhoisLookupChargesBeforeQuerying: concurrent lookups of distinct
// names from an account with fewer OEM credits than lookups. The credit is
// taken before the registry is asked, so the registry answers at most as
// many queries as credits were taken, and refused requests ask nothing.
func TestWhoisLookupChargesBeforeQuerying(t *testing.T) {
	u := newWhoisUpstream(t)
	o := whoisOptions(t, u)
	cfg := api.DefaultConfig()
	cfg.RateLimit = 0
	o.Config = &cfg
	eachWith(t, o, func(t *testing.T, e *apitest.Env) {
		u.throttled.Store(false)
		const credits, requests = 5, 30
		acct, oem := e.Account(periscope.Account{Company: "Racer", Plan: "enterprise", Enterprise: true, OEM: true, OEMCreditsPerMonth: credits})
		before := u.queries.Load()
		codes := make([]int, requests)
		var wg sync.WaitGroup
		for i := range requests {
			wg.Go(func() {
				codes[i] = e.Do("POST", "/api/v1/oem/whois/lookup", oem, map[string]any{"domain": fmt.Sprintf("race-%d.com", i)}).Status
			})
		}
		wg.Wait()
		ok := 0
		for _, c := range codes {
			if c == 200 {
				ok++
			} else if c != 403 {
				t.Fatalf("answers %v", codes)
			}
		}
		a, err := e.Store.Account(context.Background(), acct.ID)
		if err != nil {
			t.Fatal(err)
		}
		queried := u.queries.Load() - before
		t.Logf("%d lookups, %d answered 200, %d credits taken, %d registry queries", requests, ok, a.OEMCreditsUsed, queried)
		if ok != credits || a.OEMCreditsUsed != credits || queried > credits {
			t.Fatalf("%d answered 200, %d credits taken, %d registry queries; want %d, %d, at most %d", ok, a.OEMCreditsUsed, queried, credits, credits, credits)
		}
	})
}
