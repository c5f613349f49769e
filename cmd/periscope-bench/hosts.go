package main

import (
	"bufio"
	"context"
	"fmt"
	"github.com/periscope-oss/periscope/internal/cli"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hostgen"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/scan"
	"github.com/periscope-oss/periscope/internal/wire"
)

// writeGeneratedHosts writes count generated hosts of seed as native NDJSON.
func writeGeneratedHosts(w io.Writer, count int, seed uint64, now int64) error {
	enc := scan.NewEncoder(w)
	if err := hostgen.New(count, seed, now).All(func(h host.Host) error { return enc.Encode(h) }); err != nil {
		return err
	}
	return enc.Flush()
}

// benchGenHosts writes a synthetic internet as native NDJSON, for
// `periscope ingest hosts` and `periscope-bench search`.
func benchGenHosts(ctx context.Context, e env, args []string) error {
	fs := cli.NewFlags(e.stderr, "bench gen-hosts")
	count := fs.Int("count", 100000, "number of hosts")
	seed := fs.Uint64("seed", 1, "random seed (the same count and seed give the same hosts)")
	now := fs.Int64("now", 0, "reference time in epoch seconds (0: now); last_seen falls in the year before it")
	out := fs.String("out", "", "write to this file instead of standard output")
	if pos, err := cli.Parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return fmt.Errorf("bench gen-hosts: unexpected argument %q", pos[0])
	}
	if *count < 1 {
		return fmt.Errorf("bench gen-hosts: --count must be at least 1")
	}
	if *now == 0 {
		*now = time.Now().Unix()
	}
	w := e.stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return fmt.Errorf("bench gen-hosts: %w", err)
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if err := writeGeneratedHosts(bw, *count, *seed, *now); err != nil {
		return fmt.Errorf("bench gen-hosts: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("bench gen-hosts: %w", err)
	}
	if f, ok := w.(*os.File); ok && *out != "" {
		if err := f.Close(); err != nil {
			return fmt.Errorf("bench gen-hosts: %w", err)
		}
	}
	fmt.Fprintf(e.stderr, "generated %d hosts (seed %d)\n", *count, *seed)
	return nil
}

// searchQuery is one request of the search benchmark's mix.
type searchQuery struct {
	kind   string // the category its latency is reported under
	method string
	path   string
	body   string
	paged  bool // sent with the key whose max_results_per_request is 100 (a first page)
}

// searchMix is the fixed query mix over a generated internet: global
// searches with one seed filter and with three, the subdomains of the
// largest generated domain, and host lookups of generated names.
func searchMix(names []string) []searchQuery {
	var qs []searchQuery
	for _, b := range []string{
		`{"country":"DE"}`, `{"product":"nginx"}`, `{"port":22}`, `{"technology":"WordPress"}`,
		`{"organization":"Hetzner Online GmbH"}`, `{"asn":16509}`, `{"cloud_provider":"aws"}`,
		`{"cdn":"cloudflare"}`, `{"tags":"login-page"}`,
	} {
		qs = append(qs, searchQuery{"search, 1 filter", "POST", "/api/v1/global/search", b, false})
	}
	for _, b := range []string{
		`{"country":"US","port":443,"product":"nginx"}`,
		`{"cloud_provider":"aws","technology":"React","port":22}`,
		`{"asn":24940,"product":"OpenSSH","tags":"self-signed"}`,
		`{"country":"DE","technology":"WordPress","port":80}`,
	} {
		qs = append(qs, searchQuery{"search, 3 filters", "POST", "/api/v1/global/search", b, false})
	}
	dom := hostgen.Domains[0].Name
	qs = append(qs, searchQuery{kind: "subdomains " + dom, method: "GET", path: "/api/v1/domain/" + dom + "/subdomains"},
		searchQuery{kind: "subdomains, first 100", method: "GET", path: "/api/v1/domain/" + dom + "/subdomains", paged: true},
		searchQuery{kind: "domain details, page 1000 of 100", method: "GET", path: "/api/v1/domain/" + dom + "/details?page=1000&limit=100"},
		searchQuery{kind: "oem attack-surface /16, first 100", method: "POST", path: "/api/v1/oem/attack-surface/search", body: `{"query":"` + bigRange + `"}`, paged: true})
	for _, n := range names {
		qs = append(qs, searchQuery{"host", "GET", "/api/v1/host/" + n, "", false})
	}
	qs = append(qs, intelMix(names)...)
	return append(qs, hostQueryMix()...)
}

// bigRange is the /16 of the generated internet with the most hosts
// (DigitalOcean's, about 5% of them).
const bigRange = "159.65.0.0/16"

// hostQueryMix is the query-language part of the mix (docs/search.md):
// free counts with three facets over one-term queries matching about 20%
// of a generated internet and over three-term queries, and pages of 50
// with the same facets. Select it with --only hosts/.
func hostQueryMix() []searchQuery {
	const facets = "&facets=country:10,port:10,product:10"
	var qs []searchQuery
	for _, q := range []string{"port:22", "cloud_provider:aws", "product:openssh"} { // 24%, 21%, 15% of 1M
		qs = append(qs, searchQuery{"hosts/count, 1 term, 3 facets", "GET", "/api/v1/hosts/count?query=" + url.QueryEscape(q) + facets, "", false})
	}
	for _, q := range []string{"country:US port:443 product:nginx", "cloud_provider:aws tech:react port:22", "country:DE tech:wordpress -port:80"} {
		qs = append(qs, searchQuery{"hosts/count, 3 terms, 3 facets", "GET", "/api/v1/hosts/count?query=" + url.QueryEscape(q) + facets, "", false})
	}
	for _, q := range []string{"port:22", "country:US port:443 product:nginx", "tech:wordpress OR tech:drupal"} {
		qs = append(qs, searchQuery{"hosts/search, 50, 3 facets", "GET", "/api/v1/hosts/search?limit=50&query=" + url.QueryEscape(q) + facets, "", false})
	}
	return qs
}

// intelMix is the /intel/* part of the mix: the product term "Redis
// key-value store" matches about 1% of a generated internet (10,000 of 1M
// hosts: port 6379 is drawn with probability 0.01), the case the target
// names; the others are one-term lookups of other route types.
func intelMix(names []string) []searchQuery {
	qs := []searchQuery{
		{"intel product (≈1% of hosts)", "GET", "/api/v1/intel/product?product=Redis%20key-value%20store", "", false},
		{"intel product (≈1% of hosts)", "GET", "/api/v1/intel/product?product=Elasticsearch%20REST%20API", "", false},
		{"intel tag", "GET", "/api/v1/intel/tag?tag=directory-listing", "", false},
		{"intel web-tech", "GET", "/api/v1/intel/web-tech?tech=Jenkins", "", false},
		{"intel asn-to-hosts", "GET", "/api/v1/intel/asn-to-hosts?asn=24940", "", false},
		{"intel asn-to-virtual-hosts", "GET", "/api/v1/intel/asn-to-virtual-hosts?asn=24940", "", false},
		{"intel domain", "GET", "/api/v1/intel/domain?domain=" + hostgen.Domains[0].Name, "", false},
	}
	for _, n := range names[:min(10, len(names))] {
		qs = append(qs, searchQuery{"intel host", "GET", "/api/v1/intel/host?host=" + n, "", false})
	}
	return qs
}

// benchSearch runs the query mix through HTTP, against a running server
// (--url and --key) or against the API served in this process over the
// database given, and prints p50/p95/p99 per category.
func benchSearch(ctx context.Context, e env, args []string) error {
	var cfg config.Config
	fs := cli.NewFlags(e.stderr, "bench search")
	cfg.Register(fs, e.getenv)
	url := fs.String("url", "", "base URL of a running server (e.g. http://127.0.0.1:8080); default: serve the database in this process")
	key := fs.String("key", "", "API key for --url (an OEM account with credits for every request and max results ≥ 100,000 to list all subdomains)")
	pageKey := fs.String("page-key", "", "API key for --url whose max_results_per_request is 100, for the first-page queries (default --key)")
	count := fs.Int("count", 1000000, "--count given to gen-hosts (to know the generated names)")
	seed := fs.Uint64("seed", 1, "--seed given to gen-hosts")
	rounds := fs.Int("rounds", 20, "times each query of the mix is sent")
	conc := fs.Int("concurrency", 1, "concurrent clients")
	only := fs.String("only", "", "run only the queries whose category starts with this (e.g. intel)")
	if pos, err := cli.Parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return fmt.Errorf("bench search: unexpected argument %q", pos[0])
	}
	if *rounds < 1 || *conc < 1 {
		return fmt.Errorf("bench search: --rounds and --concurrency must be at least 1")
	}
	// Host lookups use names of the generated set (the first 50 of the
	// same count and seed).
	g := hostgen.New(*count, *seed, 0)
	var names []string
	for i := 0; i < min(50, *count); i++ {
		names = append(names, g.Host(i).Host)
	}
	base := strings.TrimRight(*url, "/")
	if base == "" {
		st, err := cli.OpenStore(ctx, cfg.Database)
		if err != nil {
			return err
		}
		defer st.Close()
		k, err := benchKey(ctx, st, periscope.Account{CreditsPerMonth: 1 << 30, OEM: true, OEMCreditsPerMonth: 1 << 30, MaxResultsPerRequest: 100000})
		if err != nil {
			return err
		}
		pk, err := benchKey(ctx, st, periscope.Account{CreditsPerMonth: 1 << 30, OEM: true, OEMCreditsPerMonth: 1 << 30, MaxResultsPerRequest: 100})
		if err != nil {
			return err
		}
		*key, *pageKey = k, pk
		acfg := api.DefaultConfig()
		acfg.RateLimit = 0
		srv := &http.Server{Handler: api.NewServer(acfg, wire.APIDeps(st, hoststore.New(st), slog.New(slog.DiscardHandler)))}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		go srv.Serve(ln)
		defer srv.Close()
		base = "http://" + ln.Addr().String()
		fmt.Fprintf(e.stdout, "database %s (%s), API served in this process\n", cli.RedactDSN(cfg.Database), st.Engine())
	} else if *key == "" {
		return fmt.Errorf("bench search: --url needs --key")
	}
	if *pageKey == "" {
		*pageKey = *key
	}
	mix := slices.DeleteFunc(searchMix(names), func(q searchQuery) bool { return !strings.HasPrefix(q.kind, *only) })
	if len(mix) == 0 {
		return fmt.Errorf("bench search: no query category starts with %q", *only)
	}
	type sample struct {
		kind string
		d    time.Duration
	}
	jobs := make(chan searchQuery)
	results := make(chan sample, 64)
	errc := make(chan error, *conc)
	var wg sync.WaitGroup
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *conc}}
	for i := 0; i < *conc; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			failed := false
			for q := range jobs { // drained to the end, so the sender never blocks
				if failed {
					continue
				}
				k := *key
				if q.paged {
					k = *pageKey
				}
				d, err := timeRequest(ctx, client, base, k, q)
				if err != nil {
					errc <- err
					failed = true
					continue
				}
				results <- sample{q.kind, d}
			}
		}()
	}
	go func() {
		defer close(jobs)
		for r := 0; r < *rounds; r++ {
			for _, q := range mix {
				select {
				case jobs <- q:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()
	lat := map[string][]time.Duration{}
	var order []string
	for s := range results {
		if _, ok := lat[s.kind]; !ok {
			order = append(order, s.kind)
		}
		lat[s.kind] = append(lat[s.kind], s.d)
	}
	select {
	case err := <-errc:
		return fmt.Errorf("bench search: %w", err)
	default:
	}
	fmt.Fprintf(e.stdout, "%-36s %8s %10s %10s %10s\n", "query", "requests", "p50", "p95", "p99")
	sort.Strings(order)
	for _, k := range order {
		l := lat[k]
		sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
		pct := func(p float64) time.Duration { return l[int(float64(len(l)-1)*p)].Round(10 * time.Microsecond) }
		fmt.Fprintf(e.stdout, "%-36s %8d %10s %10s %10s\n", k, len(l), pct(.50), pct(.95), pct(.99))
	}
	return nil
}

// timeRequest sends q and returns how long the whole answer took; any
// status but 200 is an error.
func timeRequest(ctx context.Context, c *http.Client, base, key string, q searchQuery) (time.Duration, error) {
	var body io.Reader
	if q.body != "" {
		body = strings.NewReader(q.body)
	}
	req, err := http.NewRequestWithContext(ctx, q.method, base+q.path, body)
	if err != nil {
		return 0, err
	}
	req.Header.Set("X-API-KEY", key)
	t0 := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	d := time.Since(t0)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s %s %s: status %d", q.method, q.path, q.body, resp.StatusCode)
	}
	return d, nil
}
