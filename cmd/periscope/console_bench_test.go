package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptrace"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/hostgen"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// BenchmarkConsolePages measures the time to first byte of every console
// page on serve --demo's data, signed in as the demo enterprise account,
// on each engine, and reports its median and 95th percentile (p50-ms,
// p95-ms). The target is a p95 of at most 50 ms. Run:
//
//	go test ./cmd/periscope -run '^$' -bench ConsolePages -benchtime 200x
func BenchmarkConsolePages(b *testing.B) {
	for _, engine := range storetest.Engines() {
		b.Run(engine, func(b *testing.B) {
			base, client, alertID, orgID := benchConsole(b, engine)
			for _, p := range []struct{ name, path string }{
				{"overview", "/"}, {"search", "/search?q=" + url.QueryEscape("domain:megacorp.com port:443")},
				{"host", "/hosts/scanme.nmap.org"}, {"domain", "/domains/megacorp.com"},
				{"organizations", "/organizations"}, {"organization", "/organizations/" + orgID},
				{"alerts", "/alerts"}, {"alert", "/alerts/" + alertID},
				{"vulnerabilities", "/vulnerabilities?q=log4j"}, {"brand", "/brand"}, {"darkweb", "/darkweb"},
				{"scans", "/scans"}, {"settings", "/settings"},
			} {
				b.Run(p.name, func(b *testing.B) { benchPage(b, client, base+p.path) })
			}
		})
	}
}

// benchPage times the first byte of u b.N times and reports the median
// and 95th percentile (p50-ms, p95-ms).
func benchPage(b *testing.B, client *http.Client, u string) {
	var ttfb []time.Duration
	for b.Loop() {
		ttfb = append(ttfb, firstByte(b, client, u))
	}
	slices.Sort(ttfb)
	pct := func(q float64) float64 {
		return float64(ttfb[int(q*float64(len(ttfb)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
}

// firstByte GETs url and returns the time to its first response byte; the
// page must be a 200 that is not a notice of spent credits.
func firstByte(b *testing.B, c *http.Client, u string) time.Duration {
	var start, first time.Time
	trace := &httptrace.ClientTrace{GotFirstResponseByte: func() { first = time.Now() }}
	req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodGet, u, nil)
	start = time.Now()
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.Contains(string(body), "credits for this month are spent") {
		b.Fatalf("%s: %d", u, resp.StatusCode)
	}
	return first.Sub(start)
}

// benchConsole starts serve --demo on a fresh database of the engine
// (without a rate limit, with credits enough for any -benchtime) and
// returns its base URL, a client signed in to the console as the demo
// enterprise account, one of its alerts and its organization.
func benchConsole(b *testing.B, engine string) (base string, c *http.Client, alertID, orgID string) {
	b.Helper()
	dsn := storetest.DSN(b, engine)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var out strings.Builder
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--database", dsn, "--demo", "--rate-limit", "0",
			"--alert-baseline", "1s", "--alert-feed-interval", "1s", "--log-level", "warn"},
			func(string) string { return "" }, pw, io.Discard)
		pw.Close()
	}()
	b.Cleanup(func() { cancel(); <-done })
	listening := regexp.MustCompile(`listening on (http://\S+)`)
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if m := listening.FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
			break
		}
	}
	go io.Copy(io.Discard, pr)
	if base == "" {
		b.Fatalf("serve did not start:\n%s", out.String())
	}
	var key string
	for _, m := range demoKeyLine.FindAllStringSubmatch(out.String(), -1) {
		if m[1] == "enterprise" {
			key = m[2]
		}
	}
	st, err := store.Open(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if _, err := st.DB().ExecContext(ctx, `UPDATE accounts SET credits_per_month = 1000000000`); err != nil {
		b.Fatal(err)
	}
	get := func(path string, v any) {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Header.Set("X-API-KEY", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		json.NewDecoder(resp.Body).Decode(v)
	}
	var orgs []struct{ ID string }
	get("/api/v1/enterprise/organizations", &orgs)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		var alerts []struct{ ID string }
		get("/api/v1/enterprise/alerts", &alerts)
		if len(alerts) > 0 && len(orgs) > 0 {
			alertID, orgID = alerts[0].ID, orgs[0].ID
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("no demo alert after a minute")
		}
	}
	return base, consoleSignIn(b, base, key), alertID, orgID
}

// consoleSignIn signs in to the console at base with key and returns a
// client that carries the session.
func consoleSignIn(b *testing.B, base, key string) *http.Client {
	b.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(base + "/login")
	if err != nil {
		b.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	tok := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindSubmatch(page)
	if tok == nil {
		b.Fatal("no sign-in form")
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/login", strings.NewReader(url.Values{"csrf": {string(tok[1])}, "key": {key}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if resp, err = c.Do(req); err != nil || resp.StatusCode != 200 || resp.Request.URL.Path != "/" {
		b.Fatalf("sign-in: %v %v", resp, err)
	}
	resp.Body.Close()
	return c
}

// BenchmarkConsolePagesLarge measures the time to first byte of the search
// and host pages on a database of generated hosts (the target: p95 at most
// 100 ms at 1M hosts). PERISCOPE_BENCH_CONSOLE_DB names the database (a
// SQLite file or postgres:// URL) holding `periscope-bench gen-hosts
// --count N --seed 1` ingested with `periscope ingest hosts`, and
// PERISCOPE_BENCH_CONSOLE_HOSTS that N (default 1000000). Run:
//
//	PERISCOPE_BENCH_CONSOLE_DB=hosts-1m.db go test ./cmd/periscope -run '^$' -bench ConsolePagesLarge -benchtime 200x
func BenchmarkConsolePagesLarge(b *testing.B) {
	dsn := os.Getenv("PERISCOPE_BENCH_CONSOLE_DB")
	if dsn == "" {
		b.Skip("PERISCOPE_BENCH_CONSOLE_DB is not set")
	}
	n := 1000000
	if v := os.Getenv("PERISCOPE_BENCH_CONSOLE_HOSTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatalf("PERISCOPE_BENCH_CONSOLE_HOSTS: %v", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	st, err := store.Open(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	a := periscope.Account{Company: fmt.Sprintf("console-bench-%d", time.Now().UnixNano()), Plan: "enterprise",
		Enterprise: true, CreditsPerMonth: 1 << 30, MaxResultsPerRequest: 100000}
	u := periscope.User{Email: a.Company + "@bench.local"}
	if err := st.CreateAccount(ctx, &a, &u); err != nil {
		b.Fatal(err)
	}
	key, _, err := st.CreateKey(ctx, a.ID, u.ID, "bench")
	st.Close()
	if err != nil {
		b.Fatal(err)
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--database", dsn, "--rate-limit", "0", "--log-level", "warn"},
			func(string) string { return "" }, pw, io.Discard)
		pw.Close()
	}()
	b.Cleanup(func() { cancel(); <-done })
	base := ""
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if m := regexp.MustCompile(`listening on (http://\S+)`).FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
			break
		}
	}
	go io.Copy(io.Discard, pr)
	if base == "" {
		b.Fatal("serve did not start")
	}
	client := consoleSignIn(b, base, key)
	g := hostgen.New(n, 1, 0)
	for _, p := range []struct{ name, path string }{
		{"search-domain", "/search?q=" + url.QueryEscape("domain:"+hostgen.Domains[0].Name+" port:443")},
		{"search-port", "/search?q=" + url.QueryEscape("port:22")},
		{"search-3-terms", "/search?q=" + url.QueryEscape("country:US port:443 product:nginx")},
		{"host", "/hosts/" + g.Host(0).Host},
	} {
		b.Run(p.name, func(b *testing.B) { benchPage(b, client, base+p.path) })
	}
}
