package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/periscope"
)

type intelAnswer struct {
	Results []struct {
		Host         string `json:"host"`
		Domain       string `json:"domain"`
		IPAddress    string `json:"ip_address"`
		DNSPTR       string `json:"dns_ptr"`
		ASN          int    `json:"asn"`
		Organization string `json:"organization"`
	} `json:"results"`
	Query             map[string]string `json:"query"`
	TotalQueryResults int               `json:"total_query_results"`
	Credits           int64             `json:"credits"`
}

// seedIntelHosts adds, beside seedHosts, hosts with mail and name servers
// (one source writing the trailing dot, one not) and a reverse name.
func seedIntelHosts(t *testing.T, e *apitest.Env) {
	t.Helper()
	seedHosts(t, e)
	hs := []host.Host{
		{Host: "mail.globex.org", IPAddress: "198.51.100.7", Tags: []string{"smtp"},
			DNS:        host.DNS{A: []string{"198.51.100.7"}, MX: []string{"mx1.globex.org."}, NS: []string{"ns1.dnsco.net"}, PTR: []string{"mail.globex.org"}},
			IPMetadata: host.IPMetadata{ASN: 64500, Organization: "Globex"}},
		{Host: "www.globex.org", IPAddress: "198.51.100.8", Products: []string{"Citrix-NetScaler"},
			DNS:        host.DNS{A: []string{"198.51.100.8"}, MX: []string{"mx1.globex.org"}, NS: []string{"ns1.dnsco.net."}},
			IPMetadata: host.IPMetadata{ASN: 64500, Organization: "Globex"}},
		{Host: "198.51.100.9", IPAddress: "198.51.100.9", IPMetadata: host.IPMetadata{ASN: 64500, Organization: "Globex"}},
	}
	if _, err := e.Hosts.UpsertHosts(context.Background(), hs); err != nil {
		t.Fatal(err)
	}
}

func TestIntelRoutes(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		seedIntelHosts(t, e)
		_, key := e.Account(periscope.Account{Company: "Intel Co", Plan: "free", CreditsPerMonth: 1000})
		intel := func(typ string, params url.Values) apitest.Response {
			return e.Do(http.MethodGet, "/api/v1/intel/"+typ+"?"+params.Encode(), key, nil)
		}
		good := []struct {
			typ    string
			params url.Values
			hosts  []string
		}{
			{"host", url.Values{"host": {"MAIL.globex.org"}}, []string{"mail.globex.org"}},
			{"domain", url.Values{"domain": {"globex.org"}}, []string{"mail.globex.org", "www.globex.org"}},
			{"tag", url.Values{"tag": {"smtp"}}, []string{"mail.globex.org"}},
			{"web-tech", url.Values{"tech": {"wordpress"}}, []string{"h00.acme.com", "h01.acme.com", "h02.acme.com", "h03.acme.com", "h04.acme.com", "h05.acme.com", "h06.acme.com", "h07.acme.com", "h08.acme.com", "h09.acme.com", "h10.acme.com", "h11.acme.com"}},
			{"product", url.Values{"product": {"Citrix-NetScaler"}}, []string{"www.globex.org"}},
			{"ip-to-hosts", url.Values{"ip": {"52.1.2.13"}}, []string{"h03.acme.com"}},
			{"ip-range-to-hosts", url.Values{"ip_start": {"52.1.2.19"}, "ip_end": {"52.1.2.21"}}, []string{"h09.acme.com", "h10.acme.com", "h11.acme.com"}},
			{"ip-range-to-hosts", url.Values{"ip_start": {"198.51.100.8"}, "ip_end": {"198.51.100.9"}}, []string{"www.globex.org", "198.51.100.9"}},
			{"asn-to-hosts", url.Values{"asn": {"64500"}}, []string{"mail.globex.org", "www.globex.org", "198.51.100.9"}},
			{"asn-to-virtual-hosts", url.Values{"asn": {"AS64500"}}, []string{"mail.globex.org", "www.globex.org"}},
			{"dns-mx-to-hosts", url.Values{"dns_mx": {"mx1.globex.org."}}, []string{"mail.globex.org", "www.globex.org"}},
			{"dns-ns-to-hosts", url.Values{"dns_ns": {"ns1.dnsco.net"}}, []string{"www.globex.org", "mail.globex.org"}},
			{"tag", url.Values{"tag": {"nothing-has-this"}}, []string{}},
		}
		spent := int64(0)
		for _, c := range good {
			r := intel(c.typ, c.params)
			if r.Status != http.StatusOK {
				t.Fatalf("%s %v: %d %s", c.typ, c.params, r.Status, r.Body)
			}
			spent++
			var a intelAnswer
			r.JSON(t, &a)
			got := map[string]bool{}
			for _, row := range a.Results {
				got[row.Host] = true
			}
			if len(a.Results) != len(c.hosts) || a.TotalQueryResults != len(c.hosts) {
				t.Errorf("%s %v: %d rows (total %d), want %v: %s", c.typ, c.params, len(a.Results), a.TotalQueryResults, c.hosts, r.Body)
			}
			for _, h := range c.hosts {
				if !got[h] {
					t.Errorf("%s %v: %s missing: %s", c.typ, c.params, h, r.Body)
				}
			}
			if a.Query["route_type"] != c.typ {
				t.Errorf("%s: query %v", c.typ, a.Query)
			}
			if a.Credits != 1000-spent {
				t.Errorf("%s: credits %d, want %d (balance after the charge)", c.typ, a.Credits, 1000-spent)
			}
		}
		// One row in full.
		var a intelAnswer
		intel("host", url.Values{"host": {"mail.globex.org"}}).JSON(t, &a)
		spent++
		row := a.Results[0]
		if row.Domain != "globex.org" || row.IPAddress != "198.51.100.7" || row.DNSPTR != "mail.globex.org" || row.ASN != 64500 || row.Organization != "Globex" {
			t.Errorf("row = %+v", row)
		}

		bad := []struct {
			typ    string
			params url.Values
			status int
		}{
			{"host", url.Values{"host": {"nowhere.example"}}, http.StatusNotFound},
			{"host", url.Values{}, http.StatusUnprocessableEntity},
			{"hosts", url.Values{"host": {"mail.globex.org"}}, http.StatusUnprocessableEntity},
			{"tag", url.Values{"tags": {"smtp"}}, http.StatusUnprocessableEntity},
			{"asn-to-hosts", url.Values{"asn": {"sixty"}}, http.StatusUnprocessableEntity},
			{"ip-to-hosts", url.Values{"ip": {"300.1.1.1"}}, http.StatusUnprocessableEntity},
			{"ip-range-to-hosts", url.Values{"ip_start": {"10.0.0.0"}}, http.StatusUnprocessableEntity},
			{"ip-range-to-hosts", url.Values{"ip_start": {"10.0.0.9"}, "ip_end": {"10.0.0.1"}}, http.StatusUnprocessableEntity},
			{"ip-range-to-hosts", url.Values{"ip_start": {"10.0.0.0"}, "ip_end": {"10.1.0.0"}}, http.StatusUnprocessableEntity},
			{"ip-range-to-hosts", url.Values{"ip_start": {"10.0.0.0"}, "ip_end": {"2001:db8::1"}}, http.StatusUnprocessableEntity},
			{"domain", url.Values{"domain": {"1.2.3.4"}}, http.StatusUnprocessableEntity},
			{"dns-mx-to-hosts", url.Values{"dns_mx": {"bad name!"}}, http.StatusUnprocessableEntity},
			{"tag", url.Values{"tag": {"a\x01b"}}, http.StatusUnprocessableEntity},
		}
		for _, c := range bad {
			r := intel(c.typ, c.params)
			if r.Status != c.status {
				t.Errorf("%s %v: %d %s, want %d", c.typ, c.params, r.Status, r.Body, c.status)
			}
		}
		// Failures are not charged: the next success reports one credit
		// less than the last.
		intel("tag", url.Values{"tag": {"smtp"}}).JSON(t, &a)
		if want := 1000 - spent - 1; a.Credits != want {
			t.Errorf("credits after failures = %d, want %d", a.Credits, want)
		}
	})
}

func TestIntelLimits(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		var hs []host.Host
		for i := range 150 {
			hs = append(hs, host.Host{Host: fmt.Sprintf("n%03d.many.example", i), Tags: []string{"bulk"}})
		}
		if _, err := e.Hosts.UpsertHosts(context.Background(), hs); err != nil {
			t.Fatal(err)
		}
		_, free := e.Account(periscope.Account{Company: "Small Co", Plan: "free", CreditsPerMonth: 10})
		_, ent := e.Account(periscope.Account{Company: "Big Co", Plan: "enterprise", Enterprise: true, CreditsPerMonth: 10})
		for key, want := range map[string]int{free: 100, ent: 150} {
			var a intelAnswer
			r := e.Do(http.MethodGet, "/api/v1/intel/tag?tag=bulk&page=3", key, nil)
			r.JSON(t, &a)
			if r.Status != http.StatusOK || len(a.Results) != want || a.TotalQueryResults != want {
				t.Errorf("%d rows (total %d), want %d", len(a.Results), a.TotalQueryResults, want)
			}
		}
	})
}
