package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"github.com/periscope-oss/periscope/internal/cli"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/brand"
	"github.com/periscope-oss/periscope/internal/brandingest"
	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/brandwatch"
	"github.com/periscope-oss/periscope/internal/ct"
	"github.com/periscope-oss/periscope/internal/ct/cttest"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/schema"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/wire"
)

// benchBrand measures brand protection's two end-to-end figures: the
// enterprise listings' latency over real HTTP with a generated set of
// findings, and CT ingestion from a local RFC 6962 log (cttest) into the
// store through the monitor.
func benchBrand(ctx context.Context, e env, args []string) error {
	fs := cli.NewFlags(e.stderr, "bench brand")
	findings := fs.Int("findings", 100_000, "findings generated for the listing benchmark")
	requests := fs.Int("requests", 300, "requests per listing query")
	entries := fs.Int("ct-entries", 5000, "distinct certificates in the local CT log")
	dsn := fs.String("database", "", "database to fill (default: a new SQLite file in a temporary directory)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	if _, err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *dsn == "" {
		dir, err := os.MkdirTemp("", "periscope-bench-brand")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		*dsn = filepath.Join(dir, "bench.db")
	}
	st, err := store.Open(ctx, *dsn, store.Files(schema.Sets()...))
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.Migrate(ctx, schema.Sets()...); err != nil {
		return err
	}
	stop, err := startCPUProfile(*cpuprofile)
	if err != nil {
		return err
	}
	defer stop()
	key, org, err := benchBrandAccount(ctx, st)
	if err != nil {
		return err
	}
	if err := benchListings(ctx, e.stdout, st, key, org, *findings, *requests); err != nil {
		return err
	}
	return benchCTIngest(ctx, e.stdout, st, org, *entries)
}

func benchBrandAccount(ctx context.Context, st *store.Store) (key string, o periscope.Organization, err error) {
	a := periscope.Account{Company: fmt.Sprintf("bench-brand-%d", time.Now().UnixNano()), Plan: "enterprise",
		Enterprise: true, CreditsPerMonth: 1 << 30, MaxResultsPerRequest: 100_000,
		Quotas: periscope.Quotas{Organizations: 10, Domains: 1 << 20, Ranges: 10}}
	u := periscope.User{Email: a.Company + "@bench.test"}
	if err := st.CreateAccount(ctx, &a, &u); err != nil {
		return "", o, err
	}
	o = periscope.Organization{AccountID: a.ID, Name: "bench"}
	if err := st.CreateOrganization(ctx, &o); err != nil {
		return "", o, err
	}
	key, _, err = st.CreateKey(ctx, a.ID, u.ID, "bench")
	return key, o, err
}

func benchListings(ctx context.Context, w io.Writer, st *store.Store, key string, o periscope.Organization, n, requests int) error {
	start := time.Now()
	now := st.Now().Unix()
	batch := make([]brandstore.Finding, 0, 5000)
	for i := range n {
		kind := brand.TypoSquatting
		if i%2 == 1 {
			kind = brand.PotentialPhishing
		}
		batch = append(batch, brandstore.Finding{
			OrganizationID: o.ID, AccountID: o.AccountID, Kind: kind,
			Domain: fmt.Sprintf("brand%d-%d.example", i%1000, i), BaseDomain: fmt.Sprintf("brand%d.com", i%1000),
			Fuzzer: "replacement", Score: 20 + i%80, Reason: "generated for the benchmark",
			DNS:      host.DNS{A: []string{fmt.Sprintf("198.51.100.%d", i%250)}},
			LastSeen: now - int64(i%365)*86400,
		})
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := brandstore.New(st).UpsertFindings(ctx, batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	fmt.Fprintf(w, "brand listings: %d findings (half typosquatting, half phishing) of one organization stored in %s (%s)\n",
		n, time.Since(start).Round(time.Millisecond), st.Engine())
	// The steady state autovacuum reaches: statistics and a visibility
	// map, so counts can be index-only scans (PostgreSQL; nothing on SQLite).
	if err := st.VacuumAnalyze(ctx, "brand_findings"); err != nil {
		return err
	}

	cfg := api.DefaultConfig()
	cfg.RateLimit = 0
	srv := httptest.NewServer(api.NewServer(cfg, wire.APIDeps(st, hoststore.New(st), nil)))
	defer srv.Close()
	client := &http.Client{}
	for _, path := range []string{
		"/api/v1/enterprise/darkweb/typosquatting",
		"/api/v1/enterprise/darkweb/typosquatting?page=200",
		"/api/v1/enterprise/darkweb/typosquatting?q=brand8-&from=01/01/2026",
		"/api/v1/enterprise/darkweb/potential-phishing?per_page=100",
		"/api/v1/enterprise/darkweb/potential-phishing",
	} {
		lat := make([]time.Duration, 0, requests)
		var size int
		for i := range requests + 10 {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
			req.Header.Set("X-API-KEY", key)
			t0 := time.Now()
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				return err
			}
			if resp.StatusCode != 200 {
				return fmt.Errorf("%s: %d %s", path, resp.StatusCode, b)
			}
			if i >= 10 { // the first ten warm up
				lat = append(lat, time.Since(t0))
			}
			size = len(b)
		}
		slices.Sort(lat)
		q := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))].Round(10 * time.Microsecond) }
		fmt.Fprintf(w, "  GET %s: %d requests, p50 %s, p95 %s, p99 %s, %d-byte responses\n", path, len(lat), q(0.5), q(0.95), q(0.99), size)
	}
	return nil
}

func benchCTIngest(ctx context.Context, w io.Writer, st *store.Store, o periscope.Organization, n int) error {
	log := cttest.New()
	defer log.Close()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Bench CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &key.PublicKey, key)
	if err != nil {
		return err
	}
	for i := range n {
		tpl := &x509.Certificate{SerialNumber: big.NewInt(int64(i) + 2), Subject: pkix.Name{CommonName: fmt.Sprintf("www.site%d.example", i)},
			NotBefore: ca.NotBefore, NotAfter: ca.NotAfter,
			DNSNames: []string{fmt.Sprintf("www.site%d.example", i), fmt.Sprintf("site%d.example", i), fmt.Sprintf("brand%d-login.example", i%10000)}}
		der, err := x509.CreateCertificate(rand.Reader, tpl, ca, &key.PublicKey, key)
		if err != nil {
			return err
		}
		if err := log.AddCert(der, caDER); err != nil {
			return err
		}
	}
	// The organization monitors 1,000 brands (those of the findings above),
	// so matching against all of them is part of the cost measured; a tenth
	// of the certificates name a phishing look-alike of one.
	for i := range 1000 {
		a := periscope.Asset{OrganizationID: o.ID, AccountID: o.AccountID, Kind: periscope.AssetDomain, Value: fmt.Sprintf("brand%d.com", i)}
		if _, err := st.AddAsset(ctx, a); err != nil {
			return err
		}
	}
	t0 := time.Now()
	mon := brandwatch.New(st, hoststore.New(st), brandstore.New(st), brandwatch.Options{})
	if err := mon.Reconcile(ctx); err != nil {
		return err
	}
	fmt.Fprintf(w, "brand monitor: %d brands reconciled (candidates computed) in %s\n", len(mon.Brands()), time.Since(t0).Round(time.Millisecond))
	c, err := ct.NewClient(log.URL(), ct.Options{})
	if err != nil {
		return err
	}
	b := brandingest.New(mon, st)
	start := time.Now()
	if err := b.Follow(ctx, &ct.Follower{Client: c}); err != nil {
		return err
	}
	d := time.Since(start)
	// The log's names are built to hit the monitored brands: a run that
	// matched nothing measured a broken matcher, not the pipeline.
	if b.Match.Inserted == 0 {
		return fmt.Errorf("ct ingestion: %d entries read but no finding stored", b.Sum.Read)
	}
	fmt.Fprintf(w, "ct ingestion: %d entries (3 SAN names each) from a local RFC 6962 log in %s: %.0f entries/s (%s; %d certificates inserted, %d names into the host index, %d matched, %d findings, %d brands monitored)\n",
		b.Sum.Read, d.Round(time.Millisecond), float64(b.Sum.Read)/d.Seconds(), st.Engine(), b.Sum.Inserted, b.Hosts.Inserted, b.Match.Matched, b.Match.Inserted, len(mon.Brands()))
	return nil
}
