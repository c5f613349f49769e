package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/periscope-oss/periscope/internal/cli"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/vulngen"
	"github.com/periscope-oss/periscope/internal/vulningest"
	"github.com/periscope-oss/periscope/internal/vulnstore"
	"github.com/periscope-oss/periscope/internal/wire"
)

// benchVuln generates feeds scaled from the real samples (vulngen),
// ingests them through the same path as `periscope ingest` (parse and
// store, one transaction per batch) and then measures feed and search
// latency through HTTP against the full API stack.
func benchVuln(ctx context.Context, e env, args []string) error {
	var cfg config.Config
	fs := cli.NewFlags(e.stderr, "bench vuln")
	cfg.Register(fs, e.getenv)
	nVulns := fs.Int("vulns", 300000, "CVE records to generate")
	nAdv := fs.Int("advisories", 100000, "OSV advisories to generate")
	nExploits := fs.Int("exploits", 20000, "Exploit-DB records to generate")
	kevStep := fs.Int("kev-every", 100, "flag every n-th CVE as known exploited")
	conns := fs.Int("connections", 4, "concurrent clients")
	dur := fs.Duration("duration", 10*time.Second, "measuring time per query kind")
	skipIngest := fs.Bool("skip-ingest", false, "reuse the data already in --database")
	seed := fs.Uint64("seed", 1, "generator seed")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the ingest (of the queries with --skip-ingest) to this file")
	batch := fs.Int("batch", 0, "records per ingest transaction (0: the ingest default)")
	only := fs.String("only", "", "run only the query kinds whose name contains this")
	if _, err := cli.Parse(fs, args); err != nil {
		return err
	}
	st, cleanup, err := openBenchStore(ctx, e, fs, &cfg)
	if err != nil {
		return err
	}
	defer cleanup()
	now := time.Now().UTC()
	g, err := vulngen.New(*nVulns, now, *seed)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "bench vuln: database %s (%s), GOMAXPROCS %d, %d CPUs\n", cli.RedactDSN(cfg.Database), st.Engine(), runtime.GOMAXPROCS(0), runtime.NumCPU())
	if !*skipIngest {
		stop, err := startCPUProfile(*cpuprofile)
		if err != nil {
			return err
		}
		err = benchVulnIngest(ctx, e, st, g, *nAdv, *nExploits, *kevStep, *batch)
		stop()
		if err != nil {
			return err
		}
	}
	c, err := vulnstore.New(st).CountVulns(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "dataset: %d vulnerabilities, %d advisories, %d exploits, %d KEV entries, %d EPSS scores\n",
		c.Vulnerabilities, c.Advisories, c.Exploits, c.KEV, c.EPSS)
	if *skipIngest {
		stop, err := startCPUProfile(*cpuprofile)
		if err != nil {
			return err
		}
		defer stop()
	}
	return benchVulnQueries(ctx, e, st, g, *conns, *dur, *only)
}

func benchVulnIngest(ctx context.Context, e env, st *store.Store, g *vulngen.Generator, nAdv, nExploits, kevStep, batch int) error {
	in := &vulningest.Ingester{Store: vulnstore.New(st), BatchSize: batch}
	// The OSV archive is written first (zip needs a file), outside the timing.
	tmp, err := os.CreateTemp("", "periscope-bench-osv-*.zip")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := g.WriteOSVZip(tmp, nAdv); err != nil {
		return err
	}
	tmp.Close()
	fmt.Fprintf(e.stdout, "%-10s %10s %10s %10s %12s\n", "kind", "records", "rejected", "seconds", "records/s")
	var total vulningest.Summary
	for _, k := range []struct {
		kind  string
		write func(io.Writer) error
	}{
		{vulningest.NVD, g.WriteNVD},
		{vulningest.KEV, func(w io.Writer) error { return g.WriteKEV(w, kevStep) }},
		{vulningest.EPSS, g.WriteEPSS},
		{vulningest.ExploitDB, func(w io.Writer) error { return g.WriteExploitDB(w, nExploits) }},
		{vulningest.OSV, nil},
	} {
		var sum vulningest.Summary
		var err error
		if k.write == nil {
			sum, err = in.IngestPath(ctx, k.kind, tmp.Name(), nil)
		} else {
			// The generator streams into the parser through a pipe: no file,
			// and the records are in the upstream wire format.
			pr, pw := io.Pipe()
			go func() { pw.CloseWithError(k.write(pw)) }()
			sum, err = in.IngestReader(ctx, k.kind, "generated "+k.kind, pr, nil)
			pr.Close()
		}
		if err != nil {
			return err
		}
		total.Add(sum)
		fmt.Fprintf(e.stdout, "%-10s %10d %10d %10.1f %12.0f\n", k.kind, sum.Read, sum.Rejected, sum.Duration.Seconds(), float64(sum.Read)/sum.Duration.Seconds())
	}
	fmt.Fprintf(e.stdout, "%-10s %10d %10d %10.1f %12.0f\n", "total", total.Read, total.Rejected, total.Duration.Seconds(), float64(total.Read)/total.Duration.Seconds())
	t0 := time.Now()
	if err := vulnstore.New(st).OptimizeVulns(ctx); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "optimize (as periscope ingest does after a load): %.1f s\n", time.Since(t0).Seconds())
	return nil
}

// benchQuery builds one request of a kind.
type benchQuery struct {
	name string
	req  func(r *rand.Rand, base string) (*http.Request, error)
}

func benchVulnQueries(ctx context.Context, e env, st *store.Store, g *vulngen.Generator, conns int, dur time.Duration, only string) error {
	key, err := benchKey(ctx, st, periscope.Account{OEM: true,
		CreditsPerMonth: 1 << 40, OEMCreditsPerMonth: 1 << 40, MaxResultsPerRequest: 100})
	if err != nil {
		return err
	}
	acfg := api.DefaultConfig()
	acfg.RateLimit = 0
	srv := api.NewServer(acfg, wire.APIDeps(st, hoststore.New(st), slog.New(slog.NewJSONHandler(io.Discard, nil))))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv}
	go hs.Serve(ln)
	defer hs.Close()
	base := "http://" + ln.Addr().String() + "/api/v1/"

	// Text queries use the generator's vocabulary (words of the real
	// descriptions) without its 100 most frequent words, which are
	// stop-word-like ("vulnerability", "allows").
	words := benchQueryWords(g)
	cpes := g.SampleCPEs()
	ecos := g.Ecosystems()
	get := func(path string) (*http.Request, error) { return http.NewRequest("GET", base+path, nil) }
	post := func(path string, body any) (*http.Request, error) {
		b, _ := json.Marshal(body)
		r, err := http.NewRequest("POST", base+path, bytes.NewReader(b))
		if err == nil {
			r.Header.Set("Content-Type", "application/json")
		}
		return r, err
	}
	cve := func(r *rand.Rand) string { id, _ := g.CVE(r.IntN(g.Vulns)); return id }
	text := func(r *rand.Rand) string {
		if r.IntN(2) == 0 {
			return words[r.IntN(len(words))]
		}
		return words[r.IntN(len(words))] + " " + words[r.IntN(len(words))]
	}
	queries := []benchQuery{
		{"feed: window, all types", func(r *rand.Rand, _ string) (*http.Request, error) {
			return get(fmt.Sprintf("vulnerability-intelligence/feed?days=%d&page=%d&per_page=20", 1+r.IntN(7), 1+r.IntN(3)))
		}},
		{"feed: 3 CVE ids", func(r *rand.Rand, _ string) (*http.Request, error) {
			return get("vulnerability-intelligence/feed?keywords=" + url.QueryEscape(cve(r)+","+cve(r)+","+cve(r)))
		}},
		{"oem feed: severity+kev", func(r *rand.Rand, _ string) (*http.Request, error) {
			return post("oem/vulnerability-intelligence/feed", map[string]any{"days": 7, "severity": []string{"critical", "high", "medium"}[r.IntN(3)], "kev": r.IntN(2) == 0, "per_page": 50})
		}},
		{"feed: keyword in window", func(r *rand.Rand, _ string) (*http.Request, error) {
			return get(fmt.Sprintf("vulnerability-intelligence/feed?days=7&keywords=%s", url.QueryEscape(words[r.IntN(len(words))])))
		}},
		{"search: vulnerabilities text", func(r *rand.Rand, _ string) (*http.Request, error) {
			return post("oem/vulnerability-intelligence/vulnerability-search", map[string]any{"query": text(r)})
		}},
		{"search: vulnerabilities CPE", func(r *rand.Rand, _ string) (*http.Request, error) {
			return post("oem/vulnerability-intelligence/vulnerability-search", map[string]any{"query": cpes[r.IntN(len(cpes))]})
		}},
		{"search: advisories text+eco", func(r *rand.Rand, _ string) (*http.Request, error) {
			return post("oem/vulnerability-intelligence/advisories-search", map[string]any{"query": text(r), "ecosystem": ecos[r.IntN(len(ecos))]})
		}},
		{"search: advisories text", func(r *rand.Rand, _ string) (*http.Request, error) {
			return get("vulnerability-intelligence/advisories-search?query=" + url.QueryEscape(text(r)))
		}},
		{"search: exploits text", func(r *rand.Rand, _ string) (*http.Request, error) {
			return get("vulnerability-intelligence/exploits-search?query=" + url.QueryEscape(text(r)))
		}},
	}
	fmt.Fprintf(e.stdout, "HTTP, %d clients, %s per kind (after 1s warm-up), rate limit off\n", conns, dur)
	fmt.Fprintf(e.stdout, "%-30s %9s %9s %9s %9s %9s %7s\n", "query", "requests", "req/s", "p50", "p95", "p99", "errors")
	for _, q := range queries {
		if !strings.Contains(q.name, only) {
			continue
		}
		lat, errs, err := benchLoad(ctx, key, base, conns, time.Second, dur, q.req)
		if err != nil {
			return err
		}
		pct := func(p float64) time.Duration {
			if len(lat) == 0 {
				return 0
			}
			return lat[int(float64(len(lat)-1)*p)].Round(10 * time.Microsecond)
		}
		fmt.Fprintf(e.stdout, "%-30s %9d %9.0f %9s %9s %9s %7d\n", q.name, len(lat), float64(len(lat))/dur.Seconds(), pct(.5), pct(.95), pct(.99), errs)
	}
	return nil
}

func benchQueryWords(g *vulngen.Generator) []string {
	var vocab []string
	for _, w := range g.Vocabulary() {
		if strings.Trim(w, "abcdefghijklmnopqrstuvwxyz0123456789") == "" {
			vocab = append(vocab, w)
		}
	}
	sort.SliceStable(vocab, func(i, j int) bool { return g.Frequency(vocab[i]) > g.Frequency(vocab[j]) })
	if len(vocab) > 200 {
		vocab = vocab[100:]
	}
	return vocab
}

// benchLoad drives conns clients for warm+dur and returns the sorted
// latencies of requests completed in the measuring window.
func benchLoad(ctx context.Context, key, base string, conns int, warm, dur time.Duration, mk func(*rand.Rand, string) (*http.Request, error)) ([]time.Duration, int, error) {
	start := time.Now()
	measureFrom, stopAt := start.Add(warm), start.Add(warm+dur)
	var mu sync.Mutex
	var all []time.Duration
	errs := 0
	var firstErr error
	var wg sync.WaitGroup
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), uint64(start.UnixNano())))
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}}
			var lat []time.Duration
			myErrs := 0
			for {
				t0 := time.Now()
				if !t0.Before(stopAt) || ctx.Err() != nil {
					break
				}
				req, err := mk(r, base)
				if err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
				req.Header.Set("X-API-KEY", key)
				resp, err := client.Do(req.WithContext(ctx))
				if err == nil {
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						err = fmt.Errorf("%s: status %d: %.200s", req.URL.Path, resp.StatusCode, body)
					}
				}
				t1 := time.Now()
				if t0.Before(measureFrom) || t1.After(stopAt) {
					continue
				}
				if err != nil {
					myErrs++
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					continue
				}
				lat = append(lat, t1.Sub(t0))
			}
			mu.Lock()
			all = append(all, lat...)
			errs += myErrs
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(all) == 0 {
		return nil, errs, fmt.Errorf("no request completed: %v", firstErr)
	}
	if firstErr != nil {
		fmt.Fprintf(os.Stderr, "first error: %v\n", firstErr)
	}
	slices.Sort(all)
	return all, errs, nil
}
