package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/cli"
	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/darkwebgen"
	"github.com/periscope-oss/periscope/internal/darkwebstore"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/schema"
	"github.com/periscope-oss/periscope/internal/store"
)

// BenchmarkDarkwebHTTP loads PERISCOPE_DARKWEB_BENCH_RECORDS generated
// records (default 20,000) into SQLite over four domains (one more per
// 100,000 records past 400,000, so that example.com holds about 100,000
// records from 400,000 on), then reports the p95 of POST
// /oem/darkweb/search per type (no_cache, so every request reads the
// database) for an account allowed 1,000 results a request and (suffix
// -100) one allowed 100, and of both enterprise listings for example.com,
// pages 1 to 20 of 1,000 in order, all through real HTTP, beside a
// same-run baseline (baseline-1000-by-seq: 20 reads of 1,000 records by
// primary key, see benchBaseline) and their ratios to it (x-baseline-cpu-,
// x-baseline-p95-). Each group of
// requests also reports the process's CPU time, allocations and bytes
// allocated per request (server and client together);
// PERISCOPE_DARKWEB_BENCH_CPUPROFILE=FILE writes a CPU profile of the
// requests (not of the load), PERISCOPE_DARKWEB_BENCH_MEMPROFILE=FILE
// allocation profiles before (FILE.base) and after them,
// PERISCOPE_DARKWEB_BENCH_TRACE=FILE an execution trace of them;
// PERISCOPE_DARKWEB_BENCH_ONLY=address,name,listings measures only those
// types (and the listings when named). The answer heads are built before
// the requests (BuildHeads, as serve does after an ingest; its time is
// logged).
//
// PERISCOPE_DARKWEB_BENCH_DSN names a database kept between runs (a
// SQLite file or a postgres:// URL): the first run loads it, later runs
// with the same record count find the records stored, generate the
// sampled ones again from the seed and only measure. The database is
// sealed with apitest's fixed dark-web key, and its "Bench" account's
// organization claims example.com. PERISCOPE_DARKWEB_BENCH_MMAP_MIB=N
// opens it with store.MmapMiB(N), PERISCOPE_DARKWEB_BENCH_CACHE_MIB=N with
// store.PageCacheMiB(N) (each connection's cache of each file).
func BenchmarkDarkwebHTTP(b *testing.B) {
	defer cli.TuneGC(os.Getenv, cli.ServeGCPercent)() // as serve runs
	n := 20000
	if v, err := strconv.Atoi(os.Getenv("PERISCOPE_DARKWEB_BENCH_RECORDS")); err == nil && v > 0 {
		n = v
	}
	acfg := api.DefaultConfig()
	acfg.RateLimit = 0 // the benchmark measures latency, not the limiter
	var opts apitest.Options
	opts.Config = &acfg
	dsn := os.Getenv("PERISCOPE_DARKWEB_BENCH_DSN")
	if dsn != "" {
		// A database kept between runs: loaded by the first run only.
		sopts := []store.Option{store.Files(schema.Sets()...)}
		if v, err := strconv.Atoi(os.Getenv("PERISCOPE_DARKWEB_BENCH_MMAP_MIB")); err == nil && v > 0 {
			sopts = append(sopts, store.MmapMiB(v))
		}
		if v, err := strconv.Atoi(os.Getenv("PERISCOPE_DARKWEB_BENCH_CACHE_MIB")); err == nil && v > 0 {
			sopts = append(sopts, store.PageCacheMiB(v))
		}
		s, err := store.Open(context.Background(), dsn, sopts...)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		if _, err := s.Migrate(context.Background(), schema.Sets()...); err != nil {
			b.Fatal(err)
		}
		opts.Store = s
	}
	e := apitest.New(b, "sqlite", opts)
	doms := []string{"example.com", "example.org", "example.net", "example.edu"}
	for i := len(doms); i < n/100000; i++ {
		doms = append(doms, fmt.Sprintf("org%d.example", i))
	}
	g := darkwebgen.New(5, doms...)
	have, err := e.Darkweb.Count(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	var sample []darkweb.Record
	if have >= int64(n) {
		sample = benchSample(b, e.Darkweb.Normalizer(), g, n)
		b.Logf("%d records already stored in %s", have, e.Store.Engine())
	} else {
		start, cpu0 := time.Now(), benchCPU()
		sample = benchLoad(b, e.Darkweb, g, n)
		b.Logf("loaded %d records into %s in %s (%.0f records/s, %.0f records per CPU-second)", n, e.Store.Engine(), time.Since(start),
			float64(n)/time.Since(start).Seconds(), float64(n)/(benchCPU()-cpu0).Seconds())
	}
	// The answer heads, as serve builds them in the background after an
	// ingest (a kept database has them from its first run).
	hs, err := e.Darkweb.BuildHeads(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("answer heads: %d keys, %d built with %d rows; listing heads: %d domains, %d built with %d rows; in %s (skipped: %v)",
		hs.Keys, hs.Built, hs.Rows, hs.Lists, hs.ListsBuilt, hs.ListRows, hs.Took, hs.Skipped)
	key := benchAccount(b, e, periscope.Account{Company: "Bench", Enterprise: true, OEM: true, CreditsPerMonth: 1 << 40, OEMCreditsPerMonth: 1 << 40, MaxResultsPerRequest: 1000}, "example.com")
	key100 := benchAccount(b, e, periscope.Account{Company: "Bench100", OEM: true, OEMCreditsPerMonth: 1 << 40, MaxResultsPerRequest: 100}, "")
	client := &http.Client{}
	do := func(key, method, path string, body any) time.Duration {
		var rd *bytes.Reader
		if body != nil {
			j, _ := json.Marshal(body)
			rd = bytes.NewReader(j)
		} else {
			rd = bytes.NewReader(nil)
		}
		req, _ := http.NewRequest(method, e.HTTP.URL+path, rd)
		req.Header.Set("X-API-KEY", key)
		req.Header.Set("Content-Type", "application/json")
		t0 := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		// The whole body is read, and dropped: a real client is another
		// process, and a growing buffer here (4 MB of allocations for a
		// 1 MB answer) made the server pay for the client's garbage.
		if resp.StatusCode != 200 {
			msg, _ := io.ReadAll(resp.Body)
			b.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, msg)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return time.Since(t0)
	}
	pct := func(ds []time.Duration, p int) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)*p/100].Microseconds()) / 1000
	}
	// run sends the requests one after the other and reports their p95,
	// and the process's CPU time (server and client: user + system), heap
	// allocations and bytes allocated per request; it returns the CPU time
	// per request and the p95.
	run := func(name string, reqs []func() time.Duration) (cpuMs, p95 float64) {
		if len(reqs) == 0 {
			return 0, 0
		}
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		c0 := benchCPU()
		ds := make([]time.Duration, len(reqs))
		for i, req := range reqs {
			ds[i] = req()
		}
		cpu := benchCPU() - c0
		runtime.ReadMemStats(&m1)
		n := float64(len(reqs))
		b.ReportMetric(pct(ds, 95), "ms-p95-"+name)
		b.ReportMetric(pct(ds, 50), "ms-p50-"+name)
		b.ReportMetric(float64(cpu.Microseconds())/1000/n, "cpu-ms/req-"+name)
		b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/n, "allocs/req-"+name)
		b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/1024/n, "KiB/req-"+name)
		return float64(cpu.Microseconds()) / 1000 / n, pct(ds, 95)
	}
	if path := os.Getenv("PERISCOPE_DARKWEB_BENCH_CPUPROFILE"); path != "" {
		// A profile of the requests alone, not of the load before them.
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	if path := os.Getenv("PERISCOPE_DARKWEB_BENCH_MEMPROFILE"); path != "" {
		// Allocations of the requests alone: compare FILE with FILE.base
		// (go tool pprof -diff_base FILE.base … FILE).
		writeAllocs := func(path string) {
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				b.Fatal(err)
			}
		}
		writeAllocs(path + ".base")
		defer writeAllocs(path)
	}
	if path := os.Getenv("PERISCOPE_DARKWEB_BENCH_TRACE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := trace.Start(f); err != nil {
			b.Fatal(err)
		}
		defer trace.Stop()
	}
	only := map[string]bool{}
	for _, t := range strings.Split(os.Getenv("PERISCOPE_DARKWEB_BENCH_ONLY"), ",") {
		if t != "" {
			only[t] = true
		}
	}
	measured := func(name string) bool { return len(only) == 0 || only[name] }
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		for _, typ := range []darkweb.Type{darkweb.Email, darkweb.Username, darkweb.Name, darkweb.Phone, darkweb.IP, darkweb.Password,
			darkweb.HashedPassword, darkweb.Domain, darkweb.BIN, darkweb.VIN, darkweb.Address} {
			if !measured(string(typ)) {
				continue
			}
			var reqs, reqs100 []func() time.Duration
			for _, rec := range sample {
				v := map[darkweb.Type]string{darkweb.Email: rec.Email, darkweb.Username: rec.Username, darkweb.Name: rec.Name, darkweb.Phone: rec.Phone,
					darkweb.IP: rec.IP, darkweb.Password: rec.Password, darkweb.Domain: rec.Email, darkweb.BIN: rec.BIN, darkweb.VIN: rec.VIN,
					darkweb.Address: rec.Address}[typ]
				if typ == darkweb.HashedPassword && len(rec.HashedPassword) > 0 {
					v = rec.HashedPassword[0]
				}
				if typ == darkweb.Domain {
					v = "example.com"
				}
				if v == "" {
					continue
				}
				body := map[string]any{"query": v, "type": string(typ), "no_cache": true}
				reqs = append(reqs, func() time.Duration { return do(key, "POST", "/api/v1/oem/darkweb/search", body) })
				reqs100 = append(reqs100, func() time.Duration { return do(key100, "POST", "/api/v1/oem/darkweb/search", body) })
			}
			run(string(typ), reqs)
			run(string(typ)+"-100", reqs100)
		}
		if !measured("listings") {
			continue
		}
		// The same-run baseline of the listings: 20 reads of 1,000
		// records scattered over the table by primary key, one query each
		// straight through database/sql (no index, no decryption, no
		// HTTP). Each listing's CPU time and p95 are also reported as a
		// ratio to it, a figure that moves less with the machine.
		baseCPU, baseP95 := run("baseline-1000-by-seq", benchBaseline(b, e.Store, max(have, int64(n)), 20))
		for _, path := range []string{"/api/v1/enterprise/darkweb/compromised-credentials", "/api/v1/enterprise/darkweb/discovered-emails"} {
			var reqs []func() time.Duration
			for page := 1; page <= 20; page++ {
				reqs = append(reqs, func() time.Duration { return do(key, "GET", path+"?page="+strconv.Itoa(page), nil) })
			}
			name := path[len("/api/v1/enterprise/darkweb/"):]
			cpu, p95 := run(name, reqs)
			b.ReportMetric(cpu/baseCPU, "x-baseline-cpu-"+name)
			b.ReportMetric(p95/baseP95, "x-baseline-p95-"+name)
		}
	}
}

// benchBaseline returns count requests that each read 1,000 records by
// primary key (seq), scattered over the first max seqs (a fixed seed: the
// same reads every run), as one query: what a listing page costs at least
// on this machine, without its index scan, decryption and HTTP.
func benchBaseline(b *testing.B, s *store.Store, max int64, count int) []func() time.Duration {
	rng := rand.New(rand.NewPCG(7, 7))
	q := s.Rebind(`SELECT seq, blob, breach, breach_date, source, date_added FROM darkweb_records WHERE seq IN (` + strings.TrimSuffix(strings.Repeat("?,", 1000), ",") + `)`)
	var reqs []func() time.Duration
	for range count {
		args := make([]any, 1000)
		for i := range args {
			args[i] = 1 + rng.Int64N(max)
		}
		reqs = append(reqs, func() time.Duration {
			t0 := time.Now()
			rows, err := s.DB().Query(q, args...)
			if err != nil {
				b.Fatal(err)
			}
			var seq, at int64
			var blob []byte
			var breach, date, source string
			for rows.Next() {
				if err := rows.Scan(&seq, &blob, &breach, &date, &source, &at); err != nil {
					b.Fatal(err)
				}
			}
			if err := errors.Join(rows.Err(), rows.Close()); err != nil {
				b.Fatal(err)
			}
			return time.Since(t0)
		})
	}
	return reqs
}

// benchEvery is the stride of the sampled records: about 200 of n.
func benchEvery(n int) int { return n/200 + 1 }

// benchLoad adds n generated, cleaned records in batches of 5,000 (as
// `periscope ingest` does) and returns the sampled ones (search targets).
// The generator runs on one goroutine (its records follow from the seed);
// each batch is cleaned on every core, as `periscope ingest` cleans.
func benchLoad(b *testing.B, d *darkwebstore.Store, g *darkwebgen.Generator, n int) []darkweb.Record {
	norm := d.Normalizer()
	var sample []darkweb.Record
	l, err := d.Loader(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	workers := runtime.GOMAXPROCS(0)
	for start := 0; start < n; start += 5000 {
		batch := make([]darkweb.Record, min(5000, n-start))
		for i := range batch {
			batch[i] = g.Record()
		}
		errs := make([]error, workers)
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < len(batch); i += workers {
					if err := norm.Clean(&batch[i]); err != nil && errs[w] == nil {
						errs[w] = err
					}
				}
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			b.Fatal(err)
		}
		for i := range batch {
			if (start+i)%benchEvery(n) == 0 {
				sample = append(sample, batch[i])
			}
		}
		if _, err := l.Add(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	return sample
}

// benchSample generates the n records of a stored load again (same seed)
// and returns the sampled ones, cleaned as the load cleaned them.
func benchSample(b *testing.B, norm darkweb.Normalizer, g *darkwebgen.Generator, n int) []darkweb.Record {
	var sample []darkweb.Record
	for i := 0; i < n; i++ {
		r := g.Record()
		if i%benchEvery(n) == 0 {
			if err := norm.Clean(&r); err != nil {
				b.Fatal(err)
			}
			sample = append(sample, r)
		}
	}
	return sample
}

// benchAccount returns a new key of the account of a's company, creating
// the account (with an organization claiming domain, when not empty) on
// a fresh database: a kept database has them from its first run, and a
// domain is claimed by one account only.
func benchAccount(b *testing.B, e *apitest.Env, a periscope.Account, domain string) string {
	ctx := context.Background()
	if got, err := e.Store.AccountByCompany(ctx, a.Company); err == nil {
		users, err := e.Store.Users(ctx, got.ID)
		if err != nil || len(users) == 0 {
			b.Fatalf("users of %s: %v", a.Company, err)
		}
		key, _, err := e.Store.CreateKey(ctx, got.ID, users[0].ID, "bench")
		if err != nil {
			b.Fatal(err)
		}
		return key
	}
	_, key := e.Account(a)
	if domain != "" {
		r := e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]string{"name": "bench"})
		org := r.Map(b)["id"].(string)
		if r := e.Do("POST", "/api/v1/enterprise/organizations/"+org+"/domains", key, map[string]string{"domain": domain}); r.Status >= 300 {
			b.Fatalf("claim %s: %d %s", domain, r.Status, r.Body)
		}
	}
	return key
}

// benchCPU is the process's CPU time (user + system): on a shared machine
// wall time measures the scheduler as much as the code.
func benchCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
