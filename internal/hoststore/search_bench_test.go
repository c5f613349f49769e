package hoststore

import (
	"context"
	"strings"
	"testing"
)

// benchSearches are the global searches of periscope-bench's mix
// (cmd/periscope-bench/hosts.go, searchMix) as the terms their filters
// plan to (hostquery.Leaf): one filter, and three.
var benchSearches = []struct {
	class string
	terms []string
}{
	{"1term", []string{TermCountry + ":de"}},
	{"1term", []string{TermProduct + ":nginx"}},
	{"1term", []string{TermPort + ":22"}},
	{"1term", []string{TermTech + ":wordpress"}},
	{"1term", []string{TermOrg + ":hetzner online gmbh"}},
	{"1term", []string{TermASN + ":16509"}},
	{"1term", []string{TermCloud + ":aws"}},
	{"1term", []string{TermCDN + ":cloudflare"}},
	{"1term", []string{TermTag + ":login-page"}},
	{"3terms", []string{TermCountry + ":us", TermPort + ":443", TermProduct + ":nginx"}},
	{"3terms", []string{TermCloud + ":aws", TermTech + ":react", TermPort + ":22"}},
	{"3terms", []string{TermASN + ":24940", TermProduct + ":openssh", TermTag + ":self-signed"}},
	{"3terms", []string{TermCountry + ":de", TermTech + ":wordpress", TermPort + ":80"}},
}

// BenchmarkSearchHostsDB times SearchHosts (POST /global/search's filters:
// a total and the first page of 50 hosts) over each search of the mix on
// the database PERISCOPE_BENCH_HOSTS_DB names, three ways: without the
// posting cache ("nocache"), with the search's terms in the cache ("cache":
// put there by a count of each, as counts, facets and searches of several
// terms leave them), and with the cache on but emptied before every search
// ("cold": the cost of terms not yet cached). It reports CPU time per
// search, this process's only (on PostgreSQL the server's own CPU is not
// in it).
func BenchmarkSearchHostsDB(b *testing.B) {
	ctx := context.Background()
	st := benchHostsDB(b)
	for _, mode := range []string{"nocache", "cache", "cold"} {
		for _, q := range benchSearches {
			b.Run(mode+"/"+q.class+"/"+strings.Join(q.terms, ","), func(b *testing.B) {
				s := New(st)
				if mode == "nocache" {
					s.SetPostingCacheMiB(0)
				}
				search := func() {
					if mode == "cold" {
						s.SetPostingCacheMiB(DefaultPostingCacheMiB) // empties it
					}
					page, err := s.SearchHosts(ctx, HostQuery{Terms: q.terms, Limit: 50})
					if err != nil {
						b.Fatal(err)
					}
					if page.Total == 0 {
						b.Fatalf("%v matched no host", q.terms)
					}
				}
				if mode == "cache" {
					for _, t := range q.terms {
						if _, err := s.MatchHosts(ctx, &Expr{Op: OpCond, Cond: Cond{Kind: CondTerm, Term: t}}); err != nil {
							b.Fatal(err)
						}
					}
				}
				search() // outside the timing
				start := cpuTime()
				for b.Loop() {
					search()
				}
				reportCPU(b, start)
			})
		}
	}
}
