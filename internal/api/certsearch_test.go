package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/periscope"
)

func TestNexusCertDNSSearch(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		hs := []host.Host{
			// A shared certificate: its other names are index terms.
			{Host: "shop.initech.io", IPAddress: "203.0.113.10", NetworkServices: []host.Service{{Port: 8443, Service: "https-alt"}},
				Cert: host.Cert{SubjectCommonName: "shop.initech.io", DNSNames: []string{"shop.initech.io", "pay.initech.io", "checkout.initech.io"}}},
			// Certificates naming only their own host.
			{Host: "www.initech.io", IPAddress: "203.0.113.11", NetworkServices: []host.Service{{Port: 443, Service: "https"}},
				Cert: host.Cert{SubjectCommonName: "www.initech.io", DNSNames: []string{"www.initech.io"}}},
			{Host: "api.www.initech.io", Cert: host.Cert{DNSNames: []string{"api.www.initech.io"}}},
			{Host: "plain.initech.io"}, // no certificate
		}
		if _, err := e.Hosts.UpsertHosts(context.Background(), hs); err != nil {
			t.Fatal(err)
		}
		_, key := e.Account(periscope.Account{Company: "Cert Co", Plan: "free", CreditsPerMonth: 100})
		type answer struct {
			Count int `json:"count"`
			Data  []struct {
				DNS  []string `json:"dns"`
				Host string   `json:"host"`
				Port int      `json:"port"`
			} `json:"data"`
		}
		for _, c := range []struct {
			q     string
			hosts []string
		}{
			{"pay.init", []string{"shop.initech.io"}},
			{"CHECKOUT.initech.io", []string{"shop.initech.io"}},
			{"www.initech.io", []string{"www.initech.io", "api.www.initech.io"}},
			{"nothing.example", nil},
		} {
			var a answer
			r := e.Do(http.MethodGet, "/api/v1/nexus/cloud-certs/dns-search?query="+c.q, key, nil)
			r.JSON(t, &a)
			if r.Status != 200 || a.Count != len(c.hosts) || len(a.Data) != len(c.hosts) {
				t.Errorf("%s: %d %s", c.q, r.Status, r.Body)
				continue
			}
			for i, h := range c.hosts {
				if a.Data[i].Host != h {
					t.Errorf("%s: row %d = %s, want %s", c.q, i, a.Data[i].Host, h)
				}
			}
			if c.q == "pay.init" && (a.Data[0].Port != 8443 || len(a.Data[0].DNS) != 3) {
				t.Errorf("shared certificate row = %+v", a.Data[0])
			}
		}
		for _, q := range []string{"", "?query=ab"} {
			if r := e.Do(http.MethodGet, "/api/v1/nexus/cloud-certs/dns-search"+q, key, nil); r.Status != http.StatusUnprocessableEntity {
				t.Errorf("%q: %d %s", q, r.Status, r.Body)
			}
		}
	})
}
