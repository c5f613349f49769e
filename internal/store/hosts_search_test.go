package store_test

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"testing"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

func searchFixture(t *testing.T, s *store.Store) {
	t.Helper()
	var hs []host.Host
	for i := range 30 {
		h := host.Host{
			Host:      fmt.Sprintf("h%02d.example.com", i),
			IPAddress: fmt.Sprintf("203.0.113.%d", i),
			DNS:       host.DNS{A: []string{fmt.Sprintf("203.0.113.%d", i)}},
			IPMetadata: host.IPMetadata{
				ASN: 64500 + i%3, CountryCode: []string{"US", "DE", "FR"}[i%3], Organization: "Example Org",
			},
			NetworkServices: []host.Service{{Port: 443, Service: "https", Product: "nginx"}},
			Web:             []string{"WordPress"},
			HTTPTitle:       fmt.Sprintf("Welcome page %d", i),
		}
		if i%2 == 0 {
			h.NetworkServices = append(h.NetworkServices, host.Service{Port: 22, Service: "ssh", Product: "OpenSSH"})
			h.Cloud.Provider = "aws"
		}
		hs = append(hs, h)
	}
	hs = append(hs, host.Host{Host: "example.com"}, host.Host{Host: "example-shop.com"}, host.Host{Host: "a.b.example.com"})
	if _, err := s.UpsertHosts(context.Background(), hs); err != nil {
		t.Fatal(err)
	}
}

func TestSearchHosts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		searchFixture(t, s)
		cases := []struct {
			name  string
			q     store.HostQuery
			total int
			first string
		}{
			{"country", store.HostQuery{Terms: []string{"cc:us"}}, 10, "h00.example.com"},
			{"country upper case", store.HostQuery{Terms: []string{"cc:US"}}, 10, "h00.example.com"},
			{"three filters", store.HostQuery{Terms: []string{"port:22", "cc:de", "tech:wordpress"}}, 5, "h04.example.com"},
			{"product of a service", store.HostQuery{Terms: []string{"prod:openssh"}}, 15, "h00.example.com"},
			{"asn and cloud", store.HostQuery{Terms: []string{"asn:64501", "cloud:aws"}}, 5, "h04.example.com"},
			{"no match", store.HostQuery{Terms: []string{"cc:us", "cc:de"}}, 0, ""},
			{"under a name", store.HostQuery{Under: "example.com"}, 32, "a.b.example.com"},
			{"exact name", store.HostQuery{Name: "a.b.example.com"}, 1, "a.b.example.com"},
			{"ip range", store.HostQuery{IPRange: netip.MustParsePrefix("203.0.113.8/29")}, 8, "h08.example.com"},
			{"flag", store.HostQuery{Flags: map[store.HostFlag]bool{store.FlagCloud: true}}, 15, "h00.example.com"},
			{"title", store.HostQuery{Terms: []string{"cc:fr"}, TitleContains: "PAGE 8"}, 1, "h08.example.com"},
			{"title is not a pattern", store.HostQuery{TitleContains: "%"}, 0, ""},
		}
		for _, c := range cases {
			c.q.Limit = 5
			p, err := s.SearchHosts(ctx, c.q)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if p.Total != c.total || !p.Exact || len(p.Hosts) != min(5, c.total) {
				t.Errorf("%s: total %d (exact %v), %d hosts; want %d", c.name, p.Total, p.Exact, len(p.Hosts), c.total)
				continue
			}
			if c.total > 0 && p.Hosts[0].Host != c.first {
				t.Errorf("%s: first %s, want %s", c.name, p.Hosts[0].Host, c.first)
			}
		}
		// Paging walks every host once.
		var all []string
		for off := 0; ; off += 7 {
			p, err := s.SearchHosts(ctx, store.HostQuery{Terms: []string{"port:443"}, Limit: 7, Offset: off})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Hosts) == 0 {
				break
			}
			for _, h := range p.Hosts {
				all = append(all, h.Host)
			}
		}
		if len(all) != 30 || len(slices.Compact(slices.Sorted(slices.Values(all)))) != 30 {
			t.Errorf("paging returned %d hosts", len(all))
		}
	})
}

func TestSubdomains(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		searchFixture(t, s)
		names, total, err := s.Subdomains(ctx, "example.com", false, 3, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if total != 32 || !slices.Equal(names, []string{"example.com", "a.b.example.com", "h00.example.com"}) {
			t.Errorf("Subdomains = %v, %d", names, total)
		}
		// Only the 30 hosts with A records resolve; example-shop.com is not
		// below example.com.
		names, total, err = s.Subdomains(ctx, "example.com", true, 100, 1000)
		if err != nil || total != 30 || len(names) != 30 || slices.Contains(names, "example-shop.com") {
			t.Errorf("resolvable Subdomains = %d names, total %d, %v", len(names), total, err)
		}
		names, total, err = s.Subdomains(ctx, "nothing.test", false, 10, 1000)
		if err != nil || total != 0 || names == nil || len(names) != 0 {
			t.Errorf("unknown domain: %v, %d, %v", names, total, err)
		}
		if last, err := s.LastSeenUnder(ctx, "example.com"); err != nil || last == 0 {
			t.Errorf("LastSeenUnder = %d, %v", last, err)
		}
	})
}

// Combined common terms are counted over a sample of the rarest one: the
// total is a lower bound said to be inexact, and pages beyond it still
// answer. A rare term among them gives an exact count.
func TestSearchHostsSampledCount(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		const n = 6000
		hs := make([]host.Host, 0, n)
		for i := range n {
			h := host.Host{Host: fmt.Sprintf("s%05d.example.net", i), IPMetadata: host.IPMetadata{CountryCode: "US"},
				NetworkServices: []host.Service{{Port: 443, Service: "https"}}}
			if i%2 == 0 {
				h.Web = []string{"React"}
			}
			hs = append(hs, h)
		}
		for c := range slices.Chunk(hs, 2000) {
			if _, err := s.UpsertHosts(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		p, err := s.SearchHosts(ctx, store.HostQuery{Terms: []string{"cc:us", "port:443"}, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if p.Exact || p.Total < 5000 || p.Total > n || len(p.Hosts) != 10 {
			t.Fatalf("common terms: total %d exact %v, %d hosts", p.Total, p.Exact, len(p.Hosts))
		}
		p, err = s.SearchHosts(ctx, store.HostQuery{Terms: []string{"cc:us", "port:443"}, Limit: 10, Offset: 5990})
		if err != nil || len(p.Hosts) != 10 || p.Hosts[0].Host != "s05990.example.net" {
			t.Fatalf("page beyond the sampled count: %v %d hosts", err, len(p.Hosts))
		}
		p, err = s.SearchHosts(ctx, store.HostQuery{Terms: []string{"cc:us", "tech:react", "port:443"}, Limit: 10})
		if err != nil || !p.Exact || p.Total != n/2 {
			t.Fatalf("rare term: %v total %d exact %v", err, p.Total, p.Exact)
		}
		p, err = s.SearchHosts(ctx, store.HostQuery{Terms: []string{"cc:us"}, Limit: 10})
		if err != nil || !p.Exact || p.Total != n {
			t.Fatalf("one term: %v total %d exact %v", err, p.Total, p.Exact)
		}
	})
}
