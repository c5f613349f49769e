package api_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/whoislookup"
	"github.com/periscope-oss/periscope/internal/whoisstore"
)

// BenchmarkWhoisCachedLookup measures POST /oem/whois/lookup answered from
// the cache, through real HTTP on loopback (auth, credit, audit, store read)
// with a plain client, and reports the p95 latency. Dataset: one cached
// record (google.com, the recorded Verisign RDAP answer), SQLite.
func BenchmarkWhoisCachedLookup(b *testing.B) {
	var st *whoisstore.Store
	e := apitest.New(b, "sqlite", apitest.Options{Deps: func(d *api.Deps, s *store.Store) { st = whoisstore.New(s) }})
	raw, err := os.ReadFile("testdata/whois/whoisit_rdap.verisign.com_domain_GOOGLE.COM.json")
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := whoislookup.Ingest(context.Background(), st, raw, "bench", time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), 24*time.Hour); err != nil {
		b.Fatal(err)
	}
	_, key := e.Account(periscope.Account{Company: "Bench", Plan: "enterprise", Enterprise: true, OEM: true, OEMCreditsPerMonth: 1 << 30, RateLimit: 1 << 30})
	client := &http.Client{}
	body := []byte(`{"domain":"google.com"}`)
	var lat []time.Duration
	b.ResetTimer()
	for b.Loop() {
		req, _ := http.NewRequest("POST", e.HTTP.URL+"/api/v1/oem/whois/lookup", bytes.NewReader(body))
		req.Header.Set("X-API-KEY", key)
		req.Header.Set("Content-Type", "application/json")
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		lat = append(lat, time.Since(start))
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
}
