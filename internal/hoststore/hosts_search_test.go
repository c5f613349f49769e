package hoststore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
)

func searchFixture(t *testing.T, s *hoststore.Store) {
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
	each(t, func(t *testing.T, s *hoststore.Store) {
		ctx := context.Background()
		searchFixture(t, s)
		cases := []struct {
			name  string
			q     hoststore.HostQuery
			total int
			first string
		}{
			{"country", hoststore.HostQuery{Terms: []string{"cc:us"}}, 10, "h00.example.com"},
			{"country upper case", hoststore.HostQuery{Terms: []string{"cc:US"}}, 10, "h00.example.com"},
			{"three filters", hoststore.HostQuery{Terms: []string{"port:22", "cc:de", "tech:wordpress"}}, 5, "h04.example.com"},
			{"product of a service", hoststore.HostQuery{Terms: []string{"prod:openssh"}}, 15, "h00.example.com"},
			{"asn and cloud", hoststore.HostQuery{Terms: []string{"asn:64501", "cloud:aws"}}, 5, "h04.example.com"},
			{"no match", hoststore.HostQuery{Terms: []string{"cc:us", "cc:de"}}, 0, ""},
			{"under a name", hoststore.HostQuery{Under: "example.com"}, 32, "a.b.example.com"},
			{"exact name", hoststore.HostQuery{Name: "a.b.example.com"}, 1, "a.b.example.com"},
			{"ip range", hoststore.HostQuery{IPRange: netip.MustParsePrefix("203.0.113.8/29")}, 8, "h08.example.com"},
			{"flag", hoststore.HostQuery{Flags: map[hoststore.HostFlag]bool{hoststore.FlagCloud: true}}, 15, "h00.example.com"},
			{"title", hoststore.HostQuery{Terms: []string{"cc:fr"}, TitleContains: "PAGE 8"}, 1, "h08.example.com"},
			{"title is not a pattern", hoststore.HostQuery{TitleContains: "%"}, 0, ""},
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
			p, err := s.SearchHosts(ctx, hoststore.HostQuery{Terms: []string{"port:443"}, Limit: 7, Offset: off})
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
	each(t, func(t *testing.T, s *hoststore.Store) {
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

// Filters alone are counted exactly on the posting lists, however common;
// a row condition (here a title) over many hosts stops counting at
// CountCap and says so, and pages beyond the count still answer. Updates
// move hosts between posting lists: taking a list's first host out, adding
// terms to old hosts, flipping flags.
func TestSearchHostsCountsAndPostingUpdates(t *testing.T) {
	each(t, func(t *testing.T, s *hoststore.Store) {
		ctx := context.Background()
		const n = 12000
		hs := make([]host.Host, 0, n)
		for i := range n {
			h := host.Host{Host: fmt.Sprintf("s%05d.example.net", i), IPMetadata: host.IPMetadata{CountryCode: "US"},
				NetworkServices: []host.Service{{Port: 443, Service: "https"}}, HTTPTitle: "Welcome",
				FirstSeen: 1700000000, LastSeen: 1700000000}
			if i%2 == 0 {
				h.Web = []string{"React"}
			}
			hs = append(hs, h)
		}
		for c := range slices.Chunk(hs, 5000) {
			if _, err := s.UpsertHosts(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		search := func(q hoststore.HostQuery) hoststore.HostPage {
			t.Helper()
			p, err := s.SearchHosts(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		if p := search(hoststore.HostQuery{Terms: []string{"cc:us", "port:443"}, Limit: 10}); !p.Exact || p.Total != n || len(p.Hosts) != 10 {
			t.Fatalf("common terms: total %d exact %v, %d hosts", p.Total, p.Exact, len(p.Hosts))
		}
		if p := search(hoststore.HostQuery{Terms: []string{"cc:us", "port:443"}, Limit: 10, Offset: 11990}); len(p.Hosts) != 10 || p.Hosts[0].Host != "s11990.example.net" {
			t.Fatalf("last page: %d hosts", len(p.Hosts))
		}
		if p := search(hoststore.HostQuery{Terms: []string{"cc:us", "tech:react", "port:443"}, Limit: 10}); !p.Exact || p.Total != n/2 || p.Hosts[1].Host != "s00002.example.net" {
			t.Fatalf("three terms: total %d exact %v", p.Total, p.Exact)
		}
		if p := search(hoststore.HostQuery{Terms: []string{"port:443"}, Limit: 3, Offset: 6000}); !p.Exact || p.Total != n || p.Hosts[0].Host != "s06000.example.net" {
			t.Fatalf("one term past a row: total %d exact %v %v", p.Total, p.Exact, p.Hosts)
		}
		p := search(hoststore.HostQuery{Terms: []string{"cc:us"}, TitleContains: "welcome", Limit: 10})
		if p.Exact || p.Total < hoststore.CountCap || len(p.Hosts) != 10 {
			t.Fatalf("title over many hosts: total %d exact %v, %d hosts", p.Total, p.Exact, len(p.Hosts))
		}
		if p := search(hoststore.HostQuery{Terms: []string{"cc:us"}, TitleContains: "welcome", Limit: 10, Offset: 11995}); len(p.Hosts) != 5 || p.Hosts[4].Host != "s11999.example.net" {
			t.Fatalf("title page beyond the count: %d hosts", len(p.Hosts))
		}

		// The first 100 hosts move to DE (s00000 led the US list), three
		// old hosts gain a technology, one becomes a cloud host.
		var upd []host.Host
		for i := range 100 {
			upd = append(upd, host.Host{Host: fmt.Sprintf("s%05d.example.net", i), IPMetadata: host.IPMetadata{CountryCode: "DE"},
				FirstSeen: 1700000100, LastSeen: 1700000100})
		}
		for _, i := range []int{107, 5006, 11000} {
			upd = append(upd, host.Host{Host: fmt.Sprintf("s%05d.example.net", i), Web: []string{"Vue"}})
		}
		upd = append(upd, host.Host{Host: "s00209.example.net", Cloud: host.Cloud{Provider: "aws"}})
		// A new host among them takes the next id.
		upd = append(upd, host.Host{Host: "a-new.example.net", IPMetadata: host.IPMetadata{CountryCode: "US"}})
		st, err := s.UpsertHosts(ctx, upd)
		if err != nil || st.Updated != 104 || st.Inserted != 1 {
			t.Fatalf("update: %+v %v", st, err)
		}
		if p := search(hoststore.HostQuery{Terms: []string{"cc:us"}, Limit: 1}); p.Total != n-100+1 || p.Hosts[0].Host != "s00100.example.net" {
			t.Fatalf("after the move, US: total %d %v", p.Total, p.Hosts)
		}
		if p := search(hoststore.HostQuery{Terms: []string{"cc:us"}, Limit: 1, Offset: n - 100}); len(p.Hosts) != 1 || p.Hosts[0].Host != "a-new.example.net" {
			t.Fatalf("the new host is not last: %v", p.Hosts)
		}
		if p := search(hoststore.HostQuery{Terms: []string{"cc:de", "port:443"}, Limit: 200}); p.Total != 100 || len(p.Hosts) != 100 || p.Hosts[99].Host != "s00099.example.net" {
			t.Fatalf("after the move, DE: total %d", p.Total)
		}
		p = search(hoststore.HostQuery{Terms: []string{"tech:vue"}, Limit: 10})
		if p.Total != 3 || len(p.Hosts) != 3 || p.Hosts[0].Host != "s00107.example.net" || p.Hosts[2].Host != "s11000.example.net" {
			t.Fatalf("added technology: total %d %v", p.Total, p.Hosts)
		}
		if p := search(hoststore.HostQuery{Terms: []string{"tech:vue", "tech:react"}, Limit: 10}); p.Total != 2 || p.Hosts[0].Host != "s05006.example.net" {
			t.Fatalf("added and old technology: total %d", p.Total)
		}
		cloud := search(hoststore.HostQuery{Flags: map[hoststore.HostFlag]bool{hoststore.FlagCloud: true}, Limit: 10})
		notCloud := search(hoststore.HostQuery{Flags: map[hoststore.HostFlag]bool{hoststore.FlagCloud: false}, Limit: 10})
		if cloud.Total != 1 || cloud.Hosts[0].Host != "s00209.example.net" || notCloud.Total != n-1+1 || notCloud.Hosts[9].Host != "s00009.example.net" {
			t.Fatalf("flag: cloud %d, not cloud %d %v", cloud.Total, notCloud.Total, notCloud.Hosts)
		}
		// The same updates again change nothing.
		if st, err := s.UpsertHosts(ctx, upd); err != nil || st.Unchanged != 105 {
			t.Fatalf("update again: %+v %v", st, err)
		}
	})
}

// A host's own address and its own name in its certificate are found
// through the hosts table, not posted as terms; together with the posted
// values they answer the same as any term, also after the address moves.
func TestSearchSelfAnsweredTerms(t *testing.T) {
	each(t, func(t *testing.T, s *hoststore.Store) {
		ctx := context.Background()
		_, err := s.UpsertHosts(ctx, []host.Host{
			{Host: "www.example.org", IPAddress: "192.0.2.10", DNS: host.DNS{A: []string{"192.0.2.10", "192.0.2.11"}},
				Cert:       host.Cert{SubjectCommonName: "www.example.org", DNSNames: []string{"WWW.example.org", "example.org"}},
				IPMetadata: host.IPMetadata{CountryCode: "US"}, LastSeen: 1700000000},
			{Host: "api.example.org", IPAddress: "192.0.2.11",
				Cert:       host.Cert{SubjectCommonName: "www.example.org", DNSNames: []string{"www.example.org", "api.example.org"}},
				IPMetadata: host.IPMetadata{CountryCode: "US"}, LastSeen: 1700000000},
		})
		if err != nil {
			t.Fatal(err)
		}
		check := func(terms []string, want ...string) {
			t.Helper()
			p, err := s.SearchHosts(ctx, hoststore.HostQuery{Terms: terms, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range p.Hosts {
				got = append(got, h.Host)
			}
			slices.Sort(got)
			if p.Total != len(want) || !p.Exact || !slices.Equal(got, want) {
				t.Errorf("%v: total %d exact %v %v, want %v", terms, p.Total, p.Exact, got, want)
			}
		}
		check([]string{"ip:192.0.2.10"}, "www.example.org")
		check([]string{"ip:192.0.2.11"}, "api.example.org", "www.example.org")
		check([]string{"ip:192.0.2.11", "cc:us"}, "api.example.org", "www.example.org")
		check([]string{"ip:not-an-ip"})
		check([]string{"scn:www.example.org"}, "api.example.org", "www.example.org")
		check([]string{"scn:api.example.org"})
		check([]string{"san:api.example.org"}, "api.example.org")
		check([]string{"san:www.example.org", "ip:192.0.2.10"}, "www.example.org")
		check([]string{"san:example.org"}, "www.example.org")

		// The address moves: the old one stays an A record, now posted.
		if _, err := s.UpsertHosts(ctx, []host.Host{{Host: "www.example.org", IPAddress: "192.0.2.99", LastSeen: 1700000100}}); err != nil {
			t.Fatal(err)
		}
		check([]string{"ip:192.0.2.99"}, "www.example.org")
		check([]string{"ip:192.0.2.10"}, "www.example.org")
		check([]string{"ip:192.0.2.11"}, "api.example.org", "www.example.org")
	})
}

// A query of terms and flags alone answers the same through the posting
// cache as without it: totals, pages in id order (past the end too),
// self-answered terms, flags and empty results; while the cache fills, once
// it holds the terms, and after writes through another store.
func TestSearchHostsCacheOnOff(t *testing.T) {
	each(t, func(t *testing.T, s *hoststore.Store) {
		ctx := context.Background()
		r := rand.New(rand.NewPCG(3, 11))
		var hs []host.Host
		for i := range 300 {
			h := genHost(r, i)
			if i%4 == 0 && h.Cert.SubjectCommonName != "" {
				h.Cert.DNSNames = []string{h.Host, "www." + h.Host}
			}
			hs = append(hs, h)
		}
		for c := range slices.Chunk(hs, 70) {
			if _, err := s.UpsertHosts(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		s.SetPostingCacheMiB(64)
		off := hoststore.New(s.Core())
		off.SetPostingCacheMiB(0)

		flags := func(kv ...any) map[hoststore.HostFlag]bool {
			m := map[hoststore.HostFlag]bool{}
			for i := 0; i < len(kv); i += 2 {
				m[kv[i].(hoststore.HostFlag)] = kv[i+1].(bool)
			}
			return m
		}
		queries := []hoststore.HostQuery{
			{Terms: []string{"cc:us"}},
			{Terms: []string{"cc:DE", "port:443", "prod:nginx"}},
			{Terms: []string{"port:443", "port:443"}},
			{Flags: flags(hoststore.FlagCloud, true)},
			{Flags: flags(hoststore.FlagCloud, false, hoststore.FlagCDN, true)},
			{Terms: []string{"tag:web"}, Flags: flags(hoststore.FlagCDN, false)},
			{Terms: []string{"ip:" + hs[5].IPAddress}},
			{Terms: []string{"ip:" + hs[5].IPAddress, "cc:" + hs[5].IPMetadata.CountryCode}},
			{Terms: []string{"scn:" + hs[8].Host}},
			{Terms: []string{"san:" + hs[0].Host}},
			{Terms: []string{"san:www." + hs[0].Host, "iorg:" + hs[0].Cert.IssuerOrg}},
			{Terms: []string{"tag:no-such-tag"}},
			{Terms: []string{"cc:us", "cc:de"}},
			{Terms: []string{"tag:no-such-tag", "cc:us"}},
		}
		// And random ones: one to three terms of the pools, flags.
		candidates := []string{"port:22", "port:80", "port:443", "prod:nginx", "prod:openssh", "tech:wordpress", "tech:react",
			"tag:web", "tag:ssh", "cloud:aws", "cdn:cloudflare", "cc:us", "cc:jp", "asn:13335", "iorg:let's encrypt", "status:200"}
		for range 24 {
			var q hoststore.HostQuery
			for range 1 + r.IntN(3) {
				q.Terms = append(q.Terms, pick(r, candidates))
			}
			if r.IntN(3) == 0 {
				q.Flags = flags(pick(r, []hoststore.HostFlag{hoststore.FlagCloud, hoststore.FlagCDN, hoststore.FlagLive}), r.IntN(2) == 0)
			}
			queries = append(queries, q)
		}

		compare := func(round string) {
			t.Helper()
			for _, q := range queries {
				all, err := off.SearchHosts(ctx, hoststore.HostQuery{Terms: q.Terms, Flags: q.Flags})
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range [][2]int{{7, 0}, {7, 5}, {50, max(all.Total-3, 0)}, {10, all.Total}, {10, all.Total + 10}, {0, 0}} {
					q.Limit, q.Offset = w[0], w[1]
					want, err := off.SearchHosts(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					got, err := s.SearchHosts(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(pageNames(want), pageNames(got)); diff != "" {
						t.Errorf("%s: %v %v limit %d offset %d (-without the cache +with it):\n%s", round, q.Terms, q.Flags, q.Limit, q.Offset, diff)
					}
				}
			}
		}
		compare("cache filling")
		if st := s.PostingCacheStats(); st.Terms == 0 || st.Used == 0 {
			t.Fatalf("nothing cached: %+v", st)
		}
		compare("cache filled")
		// Writes through another store: new hosts, changed terms.
		other := hoststore.New(s.Core())
		for round := range 2 {
			more := changedHosts(r, hs, round)
			for i := range 20 {
				more = append(more, genHost(r, 300+20*round+i))
			}
			if _, err := other.UpsertHosts(ctx, more); err != nil {
				t.Fatal(err)
			}
			compare(fmt.Sprintf("after write %d", round+1))
			compare(fmt.Sprintf("after write %d, cache filled", round+1))
		}
	})
}

// pageNames is a page as its total, exactness and host names.
func pageNames(p hoststore.HostPage) string {
	var b strings.Builder
	fmt.Fprintf(&b, "total %d exact %v:", p.Total, p.Exact)
	for _, h := range p.Hosts {
		b.WriteString(" " + h.Host)
	}
	return b.String()
}

// A term stored over many writes has a row each; a page of its first
// hosts, and one deep in it, read its rows a few at a time and answer as
// a read of them all would (with the posting cache off, so the rows are
// what answers).
func TestSearchOneTermOverManyRows(t *testing.T) {
	each(t, func(t *testing.T, s *hoststore.Store) {
		ctx := context.Background()
		s.SetPostingCacheMiB(0)
		const n = 90
		for i := range n {
			h := host.Host{Host: fmt.Sprintf("r%03d.example.com", i), NetworkPorts: []int{8081}, LastSeen: 5}
			if _, err := s.UpsertHosts(ctx, []host.Host{h}); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range []struct{ offset, limit int }{{0, 3}, {0, 50}, {40, 50}, {85, 10}} {
			page, err := s.SearchHosts(ctx, hoststore.HostQuery{Terms: []string{"port:8081"}, Offset: c.offset, Limit: c.limit})
			if err != nil {
				t.Fatal(err)
			}
			if page.Total != n {
				t.Errorf("offset %d: total %d, want %d", c.offset, page.Total, n)
			}
			want := min(c.limit, n-c.offset)
			if len(page.Hosts) != want {
				t.Fatalf("offset %d limit %d: %d hosts, want %d", c.offset, c.limit, len(page.Hosts), want)
			}
			for i, h := range page.Hosts {
				if w := fmt.Sprintf("r%03d.example.com", c.offset+i); h.Host != w {
					t.Fatalf("offset %d: host %d is %s, want %s", c.offset, i, h.Host, w)
				}
			}
		}
	})
}
