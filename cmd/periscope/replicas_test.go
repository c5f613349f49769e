package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/schema"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// tcpProxy forwards connections to a server until closed; closing it cuts
// every connection, which to its clients is the server going down.
type tcpProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { io.Copy(up, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
	t.Cleanup(p.close)
	return p
}

func (p *tcpProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// metricValue reads one series of an instance's /metrics.
func metricValue(t *testing.T, base, series string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindSubmatch(b)
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

func (p *instanceProc) do(t *testing.T, method, path, key, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, p.base+path, strings.NewReader(body))
	req.Header.Set("X-API-KEY", key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestReadReplicas runs two `serve` processes on a PostgreSQL primary and a
// real streaming replica of it (.ci/run makes one with pg_basebackup -R,
// PERISCOPE_TEST_POSTGRES_REPLICA), reached through a proxy the test can
// cut. It shows that read-only requests are served by the replica, that a
// write made through one instance is read back at once through the other,
// that credits stay exact, and that losing the replica changes nothing a
// client sees.
func TestReadReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two server processes")
	}
	replicaBase := os.Getenv("PERISCOPE_TEST_POSTGRES_REPLICA")
	if replicaBase == "" {
		t.Skip("PERISCOPE_TEST_POSTGRES_REPLICA is not set (a streaming replica of PERISCOPE_TEST_POSTGRES; .ci/run makes one)")
	}
	dsn := storetest.DSN(t, "postgres") // a schema of its own on the primary
	ctx := context.Background()
	st, err := store.Open(ctx, dsn, store.Files(schema.Sets()...))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx, schema.Sets()...); err != nil {
		t.Fatal(err)
	}
	var hs []host.Host
	for i := range 20 {
		hs = append(hs, host.Host{Host: fmt.Sprintf("h%02d.replica-test.com", i), IPAddress: fmt.Sprintf("52.9.0.%d", i+1)})
	}
	if _, err := hoststore.New(st).UpsertHosts(ctx, hs); err != nil {
		t.Fatal(err)
	}
	newKey := func(company string, credits int64) string {
		a := periscope.Account{Company: company, Enterprise: true, CreditsPerMonth: credits, MaxResultsPerRequest: 100}
		u := periscope.User{Email: strings.ToLower(strings.ReplaceAll(company, " ", "")) + "@example.com"}
		if err := st.CreateAccount(ctx, &a, &u); err != nil {
			t.Fatal(err)
		}
		key, _, err := st.CreateKey(ctx, a.ID, u.ID, "replica")
		if err != nil {
			t.Fatal(err)
		}
		return key
	}
	key := newKey("Replica Co", 100000)

	// The replica's URL: the primary's, schema included, at the replica's
	// address, through the proxy.
	rb, err := url.Parse(replicaBase)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newTCPProxy(t, rb.Host)
	ru, _ := url.Parse(dsn)
	ru.Host = proxy.ln.Addr().String()
	args := []string{"serve", "--addr", "127.0.0.1:0", "--database", dsn, "--database-replica", ru.String(),
		"--replica-max-lag", "3s", "--rate-limit", "0"}
	one, two := startInstanceProc(t, args...), startInstanceProc(t, args...)

	// Wait until the replica has the test's schema and rows and is up.
	deadline := time.Now().Add(30 * time.Second)
	for metricValue(t, one.base, `periscope_db_replica_up{replica="0"}`) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the replica never came up\n%s", one.stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Reads land on the replica.
	before := metricValue(t, one.base, `periscope_db_replica_requests_total{replica="0"}`)
	beforeFallback := metricValue(t, one.base, `periscope_db_replica_fallback_requests_total`)
	want := ""
	for i := range 20 {
		code, body := one.do(t, "GET", "/api/v1/domain/replica-test.com/subdomains", key, "")
		if code != 200 || !strings.Contains(string(body), "h19.replica-test.com") {
			t.Fatalf("subdomains %d: %d %s", i, code, body)
		}
		want = hostsOf(t, body)
	}
	// Each read-only request reads from the replica once it has replayed
	// what the primary had when the request began, else (after 20 ms)
	// from the primary: under the write load of a parallel test run some
	// fall back, so the count asked is at least one, and every request is
	// accounted for.
	onReplica := metricValue(t, one.base, `periscope_db_replica_requests_total{replica="0"}`) - before
	fallback := metricValue(t, one.base, `periscope_db_replica_fallback_requests_total`) - beforeFallback
	if onReplica < 1 || onReplica+fallback != 20 {
		t.Errorf("20 read-only requests: %v served by the replica, %v by the primary", onReplica, fallback)
	}
	t.Logf("%v of 20 reads on the replica", onReplica)

	// A write through one instance is read back at once through the other
	// (the organization list is a read-only request: a replica's, once it
	// has replayed the write).
	for i := range 10 {
		name := fmt.Sprintf("Replica Org %d", i)
		if code, body := one.do(t, "POST", "/api/v1/enterprise/organizations", key, `{"name":"`+name+`"}`); code != 200 && code != 201 {
			t.Fatalf("create organization: %d %s", code, body)
		}
		code, body := two.do(t, "GET", "/api/v1/enterprise/organizations", key, "")
		if code != 200 || !strings.Contains(string(body), name) {
			t.Fatalf("the organization created through one instance is not read back through the other: %d %.300s", code, body)
		}
	}

	// Credits stay exact with reads on the replica: 40 concurrent charged
	// requests on an account with 25 credits, over both instances.
	spend := newKey("Spend Co", 25)
	var wg sync.WaitGroup
	var mu sync.Mutex
	served := 0
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := one
			if i%2 == 1 {
				p = two
			}
			if code, _ := p.do(t, "GET", "/api/v1/host/h01.replica-test.com", spend, ""); code == 200 {
				mu.Lock()
				served++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	var status struct {
		UserCredits struct {
			CreditsUsage int `json:"credits_usage"`
		} `json:"user_credits"`
	}
	_, body := one.do(t, "GET", "/api/v1/auth/status", spend, "")
	json.Unmarshal(body, &status)
	if served != 25 || status.UserCredits.CreditsUsage != 25 {
		t.Errorf("25 credits, 40 concurrent requests: %d served, %d credits used (want 25 and 25)", served, status.UserCredits.CreditsUsage)
	}

	// The replica goes down: clients see no difference.
	proxy.close()
	for i := range 20 {
		p := one
		if i%2 == 1 {
			p = two
		}
		code, body := p.do(t, "GET", "/api/v1/domain/replica-test.com/subdomains", key, "")
		if code != 200 || hostsOf(t, body) != want {
			t.Fatalf("with the replica down, request %d: %d %.200s", i, code, body)
		}
	}
	deadline = time.Now().Add(10 * time.Second)
	for metricValue(t, one.base, `periscope_db_replica_up{replica="0"}`) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the replica is still reported up after it went away")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// orgID finds the id of the organization named name in a listing.
func orgID(t *testing.T, listing []byte, name string) string {
	t.Helper()
	var orgs []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal(listing, &orgs); err != nil {
		var wrapped struct {
			Organizations []struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"organizations"`
		}
		if err := json.Unmarshal(listing, &wrapped); err != nil {
			t.Fatalf("organization listing: %v: %.200s", err, listing)
		}
		orgs = wrapped.Organizations
	}
	for _, o := range orgs {
		if o.Name == name {
			return o.ID
		}
	}
	t.Fatalf("no organization %q in %.300s", name, listing)
	return ""
}

// hostsOf returns the host names of a subdomains answer.
func hostsOf(t *testing.T, body []byte) string {
	t.Helper()
	var a struct {
		Hosts []string `json:"hosts"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatalf("subdomains answer: %v: %.200s", err, body)
	}
	return strings.Join(a.Hosts, ",")
}
