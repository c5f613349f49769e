package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/breach"
	"github.com/periscope-oss/periscope/internal/breachgen"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// BenchmarkDarkwebHTTP loads PERISCOPE_DARKWEB_BENCH_RECORDS generated
// records (default 20,000) into SQLite over four domains (one more per
// 100,000 records past 400,000, so that example.com holds about 100,000
// records from 400,000 on), then reports the p95 of POST
// /oem/darkweb/search per type (no_cache, so every request reads the
// database) for an account allowed 1,000 results a request and (suffix
// -100) one allowed 100, and of both enterprise listings for example.com,
// pages 1 to 20 of 1,000 in order, all through real HTTP.
func BenchmarkDarkwebHTTP(b *testing.B) {
	n := 20000
	if v, err := strconv.Atoi(os.Getenv("PERISCOPE_DARKWEB_BENCH_RECORDS")); err == nil && v > 0 {
		n = v
	}
	acfg := api.DefaultConfig()
	acfg.RateLimit = 0 // the benchmark measures latency, not the limiter
	e := apitest.New(b, "sqlite", apitest.Options{Config: &acfg})
	doms := []string{"example.com", "example.org", "example.net", "example.edu"}
	for i := len(doms); i < n/100000; i++ {
		doms = append(doms, fmt.Sprintf("org%d.example", i))
	}
	g := breachgen.New(5, doms...)
	norm := e.Darkweb.Normalizer()
	var sample []breach.Record
	batch := make([]breach.Record, 0, 5000)
	l, err := e.Darkweb.Loader(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		r := g.Record()
		if err := norm.Clean(&r); err != nil {
			b.Fatal(err)
		}
		if i%(n/200+1) == 0 {
			sample = append(sample, r)
		}
		batch = append(batch, r)
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := l.Add(context.Background(), batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	acct, key := e.Account(periscope.Account{Company: "Bench", Enterprise: true, OEM: true, CreditsPerMonth: 1 << 40, OEMCreditsPerMonth: 1 << 40, MaxResultsPerRequest: 1000})
	_ = acct
	_, key100 := e.Account(periscope.Account{Company: "Bench100", OEM: true, OEMCreditsPerMonth: 1 << 40, MaxResultsPerRequest: 100})
	r := e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]string{"name": "bench"})
	org := r.Map(b)["id"].(string)
	e.Do("POST", "/api/v1/enterprise/organizations/"+org+"/domains", key, map[string]string{"domain": "example.com"})
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
		var sink bytes.Buffer
		sink.ReadFrom(resp.Body)
		resp.Body.Close()
		d := time.Since(t0)
		if resp.StatusCode != 200 {
			b.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, sink.Bytes())
		}
		return d
	}
	p95 := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)*95/100].Microseconds()) / 1000
	}
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		for _, typ := range []breach.Type{breach.Email, breach.Username, breach.Name, breach.Phone, breach.IP, breach.Password,
			breach.HashedPassword, breach.Domain, breach.BIN, breach.VIN, breach.Address} {
			var ds, ds100 []time.Duration
			for _, rec := range sample {
				v := map[breach.Type]string{breach.Email: rec.Email, breach.Username: rec.Username, breach.Name: rec.Name, breach.Phone: rec.Phone,
					breach.IP: rec.IP, breach.Password: rec.Password, breach.Domain: rec.Email, breach.BIN: rec.BIN, breach.VIN: rec.VIN,
					breach.Address: rec.Address}[typ]
				if typ == breach.HashedPassword && len(rec.HashedPassword) > 0 {
					v = rec.HashedPassword[0]
				}
				if typ == breach.Domain {
					v = "example.com"
				}
				if v == "" {
					continue
				}
				ds = append(ds, do(key, "POST", "/api/v1/oem/darkweb/search", map[string]any{"query": v, "type": string(typ), "no_cache": true}))
				ds100 = append(ds100, do(key100, "POST", "/api/v1/oem/darkweb/search", map[string]any{"query": v, "type": string(typ), "no_cache": true}))
			}
			if len(ds) > 0 {
				b.ReportMetric(p95(ds), fmt.Sprintf("ms-p95-%s", typ))
				b.ReportMetric(p95(ds100), fmt.Sprintf("ms-p95-%s-100", typ))
			}
		}
		for _, path := range []string{"/api/v1/enterprise/darkweb/compromised-credentials", "/api/v1/enterprise/darkweb/discovered-emails"} {
			var ds []time.Duration
			for page := 1; page <= 20; page++ {
				ds = append(ds, do(key, "GET", path+"?page="+strconv.Itoa(page), nil))
			}
			b.ReportMetric(p95(ds), "ms-p95-"+path[len("/api/v1/enterprise/darkweb/"):])
		}
	}
}
