package hoststore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hostquery"
	"github.com/periscope-oss/periscope/internal/hoststore"
)

// The differential test: generated queries evaluated by the index
// (MatchHosts, Facet) and by brute force over every stored host object
// (bruteMatch, below, which reads the host's fields directly and shares no
// code with the index) must agree on every match and every facet count.

var pools = struct {
	countries, orgs, products, tech, tags, clouds, cdns, titles, issuers, domains []string
	names                                                                         []string // country names
	asns, ports, statuses                                                         []int
}{
	countries: []string{"US", "DE", "FR", "NL", "JP"},
	names:     []string{"United States", "Germany", "France", "Netherlands", "Japan"},
	orgs:      []string{"Cloudflare, Inc.", "Amazon.com, Inc.", "Hetzner Online GmbH", "Google LLC"},
	asns:      []int{13335, 16509, 24940, 15169},
	ports:     []int{22, 25, 80, 443, 3389, 8080, 8443},
	products:  []string{"nginx", "Apache httpd", "OpenSSH", "Microsoft IIS", "lighttpd"},
	tech:      []string{"WordPress", "jQuery", "React", "PHP"},
	tags:      []string{"web", "ssh", "rdp", "self-signed"},
	clouds:    []string{"aws", "gcp", "azure", ""},
	cdns:      []string{"cloudflare", "akamai", "", ""},
	statuses:  []int{200, 301, 403, 404, 500, 0},
	titles:    []string{"Welcome to nginx!", "Acme portal", "Login", "Index of /", "", "IIS Windows Server"},
	issuers:   []string{"Let's Encrypt", "DigiCert Inc", "Sectigo Limited", ""},
	domains:   []string{"acme.com", "example.org", "shop.example.net", "corp.example.co.uk"},
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// genHost returns a random host with values from the pools.
func genHost(r *rand.Rand, i int) host.Host {
	dom := pick(r, pools.domains)
	name := fmt.Sprintf("h%03d.%s", i, dom)
	if r.IntN(5) == 0 {
		name = fmt.Sprintf("a.h%03d.%s", i, dom)
	}
	ip := fmt.Sprintf("198.51.%d.%d", 100+r.IntN(3), r.IntN(256))
	c := r.IntN(len(pools.countries))
	k := r.IntN(len(pools.orgs))
	h := host.Host{
		Host: name, IPAddress: ip, DNS: host.DNS{A: []string{ip}},
		IPMetadata: host.IPMetadata{ASN: pools.asns[k], Organization: pools.orgs[k],
			CountryCode: pools.countries[c], CountryName: pools.names[c]},
		Cloud: host.Cloud{Provider: pick(r, pools.clouds)}, CDN: pick(r, pools.cdns),
		HTTPStatusCode: pick(r, pools.statuses), HTTPTitle: pick(r, pools.titles),
		FirstSeen: 1761955200, LastSeen: 1761955200 + int64(r.IntN(40))*86400 + int64(r.IntN(86400)),
	}
	if r.IntN(10) == 0 {
		h.IPMetadata = host.IPMetadata{} // no address metadata at all
	}
	for range r.IntN(4) {
		h.NetworkServices = append(h.NetworkServices, host.Service{Port: pick(r, pools.ports), Service: "svc", Product: pick(r, pools.products)})
	}
	for range r.IntN(3) {
		h.Web = append(h.Web, pick(r, pools.tech))
	}
	for range r.IntN(3) {
		h.Tags = append(h.Tags, pick(r, pools.tags))
	}
	if is := pick(r, pools.issuers); is != "" {
		h.Cert = host.Cert{IssuerOrg: is, IssuerCommonName: "R" + strconv.Itoa(r.IntN(3)), SubjectCommonName: name}
	}
	return h
}

// fieldValues returns the values a host holds for an index field, read
// from its fields.
func fieldValues(h *host.Host, field string) []string {
	var out []string
	add := func(vs ...string) {
		for _, v := range vs {
			if v = strings.ToLower(strings.TrimSpace(v)); v != "" && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	num := func(n int) {
		if n > 0 {
			add(strconv.Itoa(n))
		}
	}
	m := h.IPMetadata
	switch field {
	case hoststore.TermCountry:
		add(m.CountryCode)
	case hoststore.TermCountryName:
		add(m.CountryName)
	case hoststore.TermASN:
		num(m.ASN)
	case hoststore.TermOrg:
		add(m.Organization, m.ISP)
	case hoststore.TermCloud:
		add(h.Cloud.Provider)
	case hoststore.TermCDN:
		add(h.CDN)
	case hoststore.TermRegion:
		add(h.Cloud.Region)
	case hoststore.TermStatus:
		num(h.HTTPStatusCode)
	case hoststore.TermPort:
		for _, p := range h.NetworkPorts {
			num(p)
		}
	case hoststore.TermProduct:
		for _, s := range h.NetworkServices {
			add(s.Product)
		}
		add(h.Products...)
	case hoststore.TermService:
		for _, s := range h.NetworkServices {
			add(s.Service)
		}
	case hoststore.TermTech:
		add(h.Web...)
	case hoststore.TermTag:
		add(h.Tags...)
	case hoststore.TermDomain:
		add(h.Domain)
	case hoststore.TermTLD:
		add(h.TLD)
	case hoststore.TermCertIssuerOrg:
		add(h.Cert.IssuerOrg)
	case hoststore.TermCertIssuerCN:
		add(h.Cert.IssuerCommonName)
	case hoststore.TermCertSubjectCN:
		add(h.Cert.SubjectCommonName)
	case hoststore.TermIP:
		add(h.IPAddress)
		add(h.DNS.A...)
		add(h.DNS.AAAA...)
	default:
		flags := map[string]bool{"is_live": h.IsLive, "is_resolvable": h.IsResolvable, "is_cloud": h.IsCloud, "is_cdn": h.IsCDN,
			"is_cloudflare": h.IsCloudflare, "has_ipv6": h.HasIPv6, "has_private_ip": h.HasPrivateIP}
		if v, ok := flags[field]; ok {
			add(strconv.FormatBool(v))
			return out
		}
		panic("no brute-force reader for field " + field)
	}
	return out
}

// bruteMatch evaluates an expression on one host.
func bruteMatch(e *hoststore.Expr, h *host.Host) bool {
	switch e.Op {
	case hoststore.OpAnd:
		for _, k := range e.Kids {
			if !bruteMatch(k, h) {
				return false
			}
		}
		return true
	case hoststore.OpOr:
		for _, k := range e.Kids {
			if bruteMatch(k, h) {
				return true
			}
		}
		return false
	case hoststore.OpNot:
		return !bruteMatch(e.Kids[0], h)
	}
	c := e.Cond
	switch c.Kind {
	case hoststore.CondTerm:
		f, v, _ := strings.Cut(c.Term, ":")
		return slices.Contains(fieldValues(h, f), v)
	case hoststore.CondName:
		return h.Host == strings.ToLower(c.Text)
	case hoststore.CondUnder:
		d := strings.ToLower(c.Text)
		return h.Host == d || strings.HasSuffix(h.Host, "."+d)
	case hoststore.CondIPRange:
		a, err := netip.ParseAddr(h.IPAddress)
		return err == nil && c.Prefix.Contains(a)
	case hoststore.CondTitle:
		return strings.Contains(strings.ToLower(h.HTTPTitle), strings.ToLower(c.Text))
	case hoststore.CondTermRange:
		for _, v := range fieldValues(h, c.Field) {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= c.Lo && n <= c.Hi {
				return true
			}
		}
		return false
	case hoststore.CondTermContains:
		for _, f := range c.Fields {
			for _, v := range fieldValues(h, f) {
				if strings.Contains(v, strings.ToLower(c.Text)) {
					return true
				}
			}
		}
		return false
	case hoststore.CondLastSeen:
		return h.LastSeen >= c.Lo && h.LastSeen <= c.Hi
	}
	panic(fmt.Sprintf("no brute-force reader for condition %d", c.Kind))
}

// quoteIf quotes a value the grammar would otherwise split.
func quoteIf(v string) string {
	if strings.ContainsAny(v, " ,()\"") {
		return `"` + strings.ReplaceAll(v, `"`, `\"`) + `"`
	}
	return v
}

// genQuery returns a random query of the language over the pools' values.
func genQuery(r *rand.Rand, depth int) string {
	if depth > 0 && r.IntN(3) == 0 {
		n := 2 + r.IntN(2)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = genQuery(r, depth-1)
		}
		op := pick(r, []string{" ", " AND ", " OR "})
		s := "(" + strings.Join(parts, op) + ")"
		if r.IntN(4) == 0 {
			s = pick(r, []string{"-", "NOT "}) + s
		}
		return s
	}
	var t string
	list := func(vals []string) string {
		n := 1 + r.IntN(3)
		var out []string
		for range n {
			out = append(out, quoteIf(pick(r, vals)))
		}
		return strings.Join(out, ",")
	}
	ints := func(xs []int) []string {
		var out []string
		for _, x := range xs {
			out = append(out, strconv.Itoa(x))
		}
		return out
	}
	switch r.IntN(16) {
	case 0:
		t = "country:" + list(append(pools.countries, "germany", "Japan"))
	case 1:
		t = pick(r, []string{"org:", "organization:"}) + list(pools.orgs)
	case 2:
		t = "asn:" + list(append(ints(pools.asns), "AS13335", "as24940"))
	case 3:
		t = "port:" + pick(r, []string{list(ints(pools.ports)), ">1024", ">=443", "<80", "[80 TO 8080]", "[* TO 25]", "[8000 TO *]"})
	case 4:
		t = "product:" + list(pools.products)
	case 5:
		t = pick(r, []string{"tech:", "technology:"}) + list(pools.tech)
	case 6:
		t = pick(r, []string{"tag:", "tags:"}) + list(pools.tags)
	case 7:
		t = "cloud_provider:" + list([]string{"aws", "gcp", "azure"})
	case 8:
		t = "cdn:" + list([]string{"cloudflare", "akamai"})
	case 9:
		t = "domain:" + list(append(pools.domains, "example.net", "example.co.uk"))
	case 10:
		t = pick(r, []string{"http_status_code:", "http.status:"}) + pick(r, []string{list(ints(pools.statuses[:5])), "<400", ">=400", "[300 TO 404]"})
	case 11:
		t = pick(r, []string{"cert_issuer_organization:", "ssl.cert.issuer.o:"}) + list(pools.issuers[:3])
	case 12:
		t = "last_seen:" + pick(r, []string{">2025-11-20", "<2025-11-10", "[2025-11-05 TO 2025-11-25]", "2025-11-15", ">=2025-12-01"})
	case 13:
		t = pick(r, []string{"net:198.51.100.0/24", "net:198.51.101.128/25", "net:198.51.102.7", "ip:198.51.100.7"})
	case 14:
		t = pick(r, []string{"http_title:login", `http.title:"acme portal"`, "nginx", `"index of"`, "wordpress", "ssh", "IIS", "press"})
	case 15:
		t = pick(r, []string{"is_cloud:true", "is_cdn:false", "is_live:true", "hostname:example.org", "subdomain:shop.example.net", "cloud_region:x", "ssl.cert.issuer.cn:R1"})
	}
	if r.IntN(5) == 0 {
		t = pick(r, []string{"-", "NOT "}) + t
	}
	return t
}

// facetFields are the facets compared: the list.
var facetFields = []string{"country", "port", "product", "tech", "tag", "org", "asn", "cloud_provider", "cdn", "domain", "http_status_code", "cert_issuer_organization", "ssl.cert.issuer.cn"}

func TestMatchHostsDifferential(t *testing.T) {
	each(t, func(t *testing.T, s *hoststore.Store) {
		ctx := context.Background()
		r := rand.New(rand.NewPCG(31, 7))
		// Hosts in several batches (postings of several rows per term),
		// then a batch that changes some stored hosts (terms moved by
		// updates).
		var hs []host.Host
		for i := range 400 {
			hs = append(hs, genHost(r, i))
		}
		for c := range slices.Chunk(hs, 90) {
			if _, err := s.UpsertHosts(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.UpsertHosts(ctx, changedHosts(r, hs, 0)); err != nil {
			t.Fatal(err)
		}
		all := storedHosts(t, s)
		if len(all) != 400 {
			t.Fatalf("%d hosts stored", len(all))
		}
		// Without the posting cache, facets every other query on the
		// documents and on the posting lists.
		s.SetPostingCacheMiB(0)
		var uncached diffStats
		for i := range 300 {
			restore := hoststore.SetFacetDocLimit(100000)
			if i%2 == 1 {
				hoststore.SetFacetDocLimit(0)
			}
			checkQuery(t, s, all, genValidQuery(t, r), i, &uncached)
			restore()
		}
		if uncached.matched < 150 {
			t.Errorf("only %d of 300 queries matched anything: the generator is too narrow", uncached.matched)
		}

		// With the cache: every query twice, filling it then answered
		// from it. Its facets stop early at small counts (topValues):
		// cuts between values of equal count must be among the checks
		// (TestTopValues tries the rarer tie of a value all of whose
		// hosts match).
		s.SetPostingCacheMiB(64)
		var cached diffStats
		for i := range 100 {
			q := genValidQuery(t, r)
			checkQuery(t, s, all, q, i, &cached)
			checkQuery(t, s, all, q, i, &cached)
		}
		if cached.ties < 20 {
			t.Errorf("only %d cached facets were cut between two values of equal count", cached.ties)
		}
		// Writes through another Store on the same database, as another
		// serve or the CLI would make them: every cached answer after them
		// is the new index's, new hosts and changed terms included.
		other := hoststore.New(s.Core())
		var more []host.Host
		for i := 400; i < 460; i++ {
			more = append(more, genHost(r, i))
		}
		for round := range 2 {
			if _, err := other.UpsertHosts(ctx, append(changedHosts(r, hs, round+1), more[30*round:30*round+30]...)); err != nil {
				t.Fatal(err)
			}
			all = storedHosts(t, s)
			for i := range 60 {
				q := genValidQuery(t, r)
				checkQuery(t, s, all, q, i, &cached)
				checkQuery(t, s, all, q, i, &cached)
			}
		}
		if len(all) != 460 {
			t.Fatalf("%d hosts stored after the writes", len(all))
		}
	})
}

// changedHosts returns new observations of every seventh host of hs (from
// the k-th), with other values.
func changedHosts(r *rand.Rand, hs []host.Host, k int) []host.Host {
	var upd []host.Host
	for i := k; i < len(hs); i += 7 {
		h := genHost(r, i)
		h.Host = hs[i].Host
		h.LastSeen = hs[i].LastSeen + 86400*int64(k+1)
		upd = append(upd, h)
	}
	return upd
}

// storedHosts returns every stored host object.
func storedHosts(t *testing.T, s *hoststore.Store) []host.Host {
	t.Helper()
	var all []host.Host
	if err := s.EachHost(context.Background(), "", func(h host.Host) error { all = append(all, h); return nil }); err != nil {
		t.Fatal(err)
	}
	return all
}

// genValidQuery returns a generated query within the parser's limits.
func genValidQuery(t *testing.T, r *rand.Rand) string {
	t.Helper()
	for {
		text := genQuery(r, 2)
		_, err := hostquery.ParsePlan(text)
		if err == nil {
			return text
		}
		if !strings.Contains(err.Error(), "more than") {
			t.Fatalf("query %q: %v", text, err)
		}
	}
}

// diffFacets are the facets compared, parsed.
var diffFacets = func() []hostquery.Facet {
	var facets []hostquery.Facet
	for _, f := range facetFields {
		fs, err := hostquery.ParseFacets(f + ":100")
		if err != nil {
			panic(err)
		}
		facets = append(facets, fs...)
	}
	return facets
}()

// diffStats counts what checkQuery compared.
type diffStats struct {
	matched int // queries matching some host
	// ties counts facets of a small n cut between two values of equal
	// count: the n-th is chosen by value.
	ties int
}

// checkQuery compares the index's answer to a query (its matches and a
// third of the facets, chosen by i, each at 100 values and at 1, 2 or 3)
// with brute force over all.
func checkQuery(t *testing.T, s *hoststore.Store, all []host.Host, text string, i int, st *diffStats) {
	t.Helper()
	ctx := context.Background()
	e, err := hostquery.ParsePlan(text)
	if err != nil {
		t.Fatalf("query %q: %v", text, err)
	}
	m, err := s.MatchHosts(ctx, e)
	if err != nil {
		t.Fatalf("query %q: %v", text, err)
	}
	var want []string
	var matched []*host.Host
	for j := range all {
		if bruteMatch(e, &all[j]) {
			want = append(want, all[j].Host)
			matched = append(matched, &all[j])
		}
	}
	page, err := m.Page(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range page {
		got = append(got, h.Host)
	}
	if m.Count() != len(want) || !cmp.Equal(got, want) {
		t.Errorf("query %q: index %d hosts, brute force %d\n%s", text, m.Count(), len(want), cmp.Diff(want, got))
		return
	}
	if m.Count() > 0 {
		st.matched++
	}
	// A third of the facets each query, in turn.
	for k, f := range diffFacets {
		if (i+k)%3 != 0 {
			continue
		}
		vals, err := m.Facet(ctx, f.Term, f.Limit)
		if err != nil {
			t.Fatal(err)
		}
		counts := map[string]int{}
		for _, h := range matched {
			for _, v := range fieldValues(h, f.Term) {
				counts[v]++
			}
		}
		var wantVals []hoststore.FacetValue
		for v, n := range counts {
			wantVals = append(wantVals, hoststore.FacetValue{Value: v, Count: n})
		}
		slices.SortFunc(wantVals, func(a, b hoststore.FacetValue) int {
			if a.Count != b.Count {
				return b.Count - a.Count
			}
			return strings.Compare(a.Value, b.Value)
		})
		if len(wantVals) == 0 {
			wantVals = []hoststore.FacetValue{}
		}
		if diff := cmp.Diff(wantVals, vals); diff != "" {
			t.Errorf("query %q facet %s (-brute +index):\n%s", text, f.Name, diff)
		}
		// And the first few alone, where the cache's count stops early.
		small := 1 + (i+k/3)%3
		top, err := m.Facet(ctx, f.Term, small)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantVals[:min(small, len(wantVals))], top); diff != "" {
			t.Errorf("query %q facet %s:%d (-brute +index):\n%s", text, f.Name, small, diff)
		}
		if len(wantVals) > small && wantVals[small-1].Count == wantVals[small].Count {
			st.ties++
		}
		// A value's count is the total of query AND field:value.
		if len(vals) > 0 {
			v := f.Display(vals[:1])[0].Value
			and, err := hostquery.ParsePlan("(" + text + ") " + f.Name + ":" + quoteIf(fmt.Sprint(v)))
			if err != nil {
				t.Fatalf("facet value %v of %s: %v", v, f.Name, err)
			}
			mm, err := s.MatchHosts(ctx, and)
			if err != nil {
				t.Fatal(err)
			}
			if mm.Count() != vals[0].Count {
				t.Errorf("query %q: facet %s:%v counts %d, the query ANDed with it %d", text, f.Name, v, vals[0].Count, mm.Count())
			}
		}
	}
}
