package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/periscope-oss/periscope/internal/accesslog"
	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/cli"
	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/wire"
)

// benchAuth measures GET /api/v1/auth/status through the full stack (key
// lookup, rate limiter, access log to io.Discard, metrics) beside a bare
// net/http handler writing the same bytes, with the same load generator, in
// one run: throughput and latency percentiles at N connections on loopback.
func benchAuth(ctx context.Context, e env, args []string) error {
	var cfg config.Config
	fs := cli.NewFlags(e.stderr, "bench auth")
	cfg.Register(fs, e.getenv)
	conns := fs.Int("connections", 64, "concurrent keep-alive connections")
	dur := fs.Duration("duration", 10*time.Second, "measuring time per target")
	warm := fs.Duration("warmup", 2*time.Second, "warm-up time per target")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the periscope run (with --listen: of the serving process until interrupted) to this file")
	listen := fs.Bool("listen", false, "serve both targets on loopback for an external load tool (wrk) until interrupted, instead of driving load")
	if _, err := cli.Parse(fs, args); err != nil {
		return err
	}
	st, cleanup, err := openBenchStore(ctx, e, fs, &cfg)
	if err != nil {
		return err
	}
	defer cleanup()
	key, err := benchKey(ctx, st, periscope.Account{CreditsPerMonth: 1, MaxResultsPerRequest: 100})
	if err != nil {
		return err
	}
	acfg := api.DefaultConfig()
	acfg.RateLimit = 0 // measure the stack, not the limiter's refusals
	// Logging as serve wires it: one writer for the service and access logs.
	logw := accesslog.New(io.Discard)
	deps := wire.APIDeps(st, hoststore.New(st), slog.New(slog.NewJSONHandler(logw, nil)))
	deps.AccessLog = logw
	srv := api.NewServer(acfg, deps)

	// The bare handler answers with exactly the bytes the API answers.
	body, err := fetchOnce(srv, key)
	if err != nil {
		return err
	}
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
	if *listen {
		// The whole serving process, both targets: drive only one of them
		// while profiling.
		stop, err := startCPUProfile(*cpuprofile)
		if err != nil {
			return err
		}
		defer stop()
		return listenBoth(ctx, e, srv, bare, key)
	}
	fmt.Fprintf(e.stdout, "GET /api/v1/auth/status, %d connections, %s per target after %s warm-up, database %s (%s), GOMAXPROCS %d\n",
		*conns, *dur, *warm, cli.RedactDSN(cfg.Database), st.Engine(), runtime.GOMAXPROCS(0))
	fmt.Fprintf(e.stdout, "%-22s %12s %10s %10s %10s %10s\n", "target", "requests/s", "p50", "p90", "p99", "errors")
	var results []loadResult
	for _, t := range []struct {
		name string
		h    http.Handler
	}{{"bare net/http", bare}, {"periscope", srv}} {
		profile := ""
		if t.name == "periscope" {
			profile = *cpuprofile
		}
		stop, err := startCPUProfile(profile)
		if err != nil {
			return err
		}
		res, err := loadTest(ctx, t.h, key, *conns, *warm, *dur)
		stop()
		if err != nil {
			return err
		}
		results = append(results, res)
		fmt.Fprintf(e.stdout, "%-22s %12.0f %10s %10s %10s %10d\n", t.name, res.rps, res.p50, res.p90, res.p99, res.errors)
	}
	fmt.Fprintf(e.stdout, "periscope / bare throughput: %.2f\n", results[1].rps/results[0].rps)
	return nil
}

func fetchOnce(h http.Handler, key string) ([]byte, error) {
	srv := &http.Server{Handler: h}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go srv.Serve(ln)
	defer srv.Close()
	req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/api/v1/auth/status", nil)
	req.Header.Set("X-API-KEY", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("auth/status answered %d", resp.StatusCode)
	}
	return io.ReadAll(resp.Body)
}

type loadResult struct {
	rps           float64
	p50, p90, p99 time.Duration
	errors        int
}

// loadTest serves h on loopback and drives it from conns goroutines, each
// with its own keep-alive connection, for warm+dur; only requests completed
// in the measuring window count.
func loadTest(ctx context.Context, h http.Handler, key string, conns int, warm, dur time.Duration) (loadResult, error) {
	srv := &http.Server{Handler: h}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return loadResult{}, err
	}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String() + "/api/v1/auth/status"
	start := time.Now()
	measureFrom, stopAt := start.Add(warm), start.Add(warm+dur)
	var mu sync.Mutex
	var all []time.Duration
	errs := 0
	var wg sync.WaitGroup
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1, DisableCompression: true}}
			req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
			req.Header.Set("X-API-KEY", key)
			lat := make([]time.Duration, 0, 1<<14)
			myErrs := 0
			for {
				t0 := time.Now()
				if !t0.Before(stopAt) || ctx.Err() != nil {
					break
				}
				resp, err := client.Do(req)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				t1 := time.Now()
				if t0.Before(measureFrom) || t1.After(stopAt) {
					continue
				}
				if err != nil {
					myErrs++
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
		return loadResult{}, fmt.Errorf("no request completed")
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	pct := func(p float64) time.Duration { return all[int(float64(len(all)-1)*p)].Round(10 * time.Microsecond) }
	return loadResult{rps: float64(len(all)) / dur.Seconds(), p50: pct(.50), p90: pct(.90), p99: pct(.99), errors: errs}, nil
}

// listenBoth serves the API and the bare handler on loopback ports until ctx
// ends, printing what an external load tool needs.
func listenBoth(ctx context.Context, e env, srv, bare http.Handler, key string) error {
	var servers []*http.Server
	for _, h := range []http.Handler{bare, srv} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		hs := &http.Server{Handler: h}
		servers = append(servers, hs)
		go hs.Serve(ln)
		fmt.Fprintf(e.stdout, "http://%s/api/v1/auth/status\n", ln.Addr())
	}
	fmt.Fprintf(e.stdout, "key %s\n", key)
	<-ctx.Done()
	for _, hs := range servers {
		hs.Close()
	}
	return nil
}

// benchKey creates a benchmark account shaped like a (with a unique
// company) and returns a key of it.
func benchKey(ctx context.Context, st *store.Store, a periscope.Account) (string, error) {
	a.Company, a.Plan = fmt.Sprintf("bench-%d", time.Now().UnixNano()), "bench"
	u := periscope.User{Email: a.Company + "@bench.local"}
	if err := st.CreateAccount(ctx, &a, &u); err != nil {
		return "", fmt.Errorf("create the benchmark account: %w", err)
	}
	key, _, err := st.CreateKey(ctx, a.ID, u.ID, "bench")
	if err != nil {
		return "", fmt.Errorf("create the benchmark key: %w", err)
	}
	return key, nil
}
