package api_test

import (
	"context"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/activescan"
	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/egress"
	"github.com/periscope-oss/periscope/internal/hostingest"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/scanstore"
	"github.com/periscope-oss/periscope/internal/store"
)

// loopbackPort listens on 127.0.0.1 and counts the connections accepted.
func loopbackPort(t *testing.T) (int, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, &n
}

// TestPrivateRanges is issue 29's item 10: with --allow-private-targets an
// organization registers an internal range, which is scanned (scheduled,
// through the egress dialer) only once the operator has authorised it;
// without the switch the range stays refused with the public-space error.
func TestPrivateRanges(t *testing.T) {
	port, accepted := loopbackPort(t)
	cfg := api.DefaultConfig()
	cfg.RangeLimits.AllowPrivate = true
	var svc *activescan.Service
	eachWith(t, apitest.Options{Config: &cfg, Deps: func(d *api.Deps, st *store.Store) {
		if _, err := st.Migrate(context.Background(), scanstore.Migrations()); err != nil {
			t.Fatal(err)
		}
		dial := egress.New(egress.Options{AllowPrivate: true, Ports: []int{port}, Timeout: time.Second})
		svc = activescan.New(activescan.Options{Ports: []int{port}, Timeout: time.Second, AllowPrivate: true}, activescan.Deps{
			Store: scanstore.New(st), Names: hoststore.New(st), Sink: &hostingest.Ingester{Store: hoststore.New(st)},
			Dial: dial.DialContext, Now: d.Now,
		})
		d.Scans = svc
	}}, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		accepted.Store(0)
		_, key := e.Account(periscope.Account{Company: "Intranet Co", Enterprise: true, CreditsPerMonth: 10})
		var org struct {
			ID string `json:"id"`
		}
		e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]any{"name": "Intranet"}).JSON(t, &org)
		for _, r := range []string{"127.0.0.1/32", "10.20.0.0/16", "fd00:1::/48"} {
			if res := e.Do("POST", "/api/v1/enterprise/organizations/"+org.ID+"/ip-ranges", key, map[string]any{"ip_range": r}); res.Status != 201 {
				t.Fatalf("add %s: %d %s", r, res.Status, res.Body)
			}
		}
		for _, r := range []string{"10.0.0.0/8", "224.0.0.0/24", "192.0.2.0/24"} {
			if res := e.Do("POST", "/api/v1/enterprise/organizations/"+org.ID+"/ip-ranges", key, map[string]any{"ip_range": r}); res.Status != 400 {
				t.Fatalf("add %s: %d %s, want 400", r, res.Status, res.Body)
			}
		}
		// Registered, not authorised: the scheduler queues nothing.
		if err := svc.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		var scans int
		if err := e.Store.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM scans").Scan(&scans); err != nil || scans != 0 {
			t.Fatalf("%d scans of an unauthorised range (%v)", scans, err)
		}
		if res := e.Do("GET", "/api/v1/enterprise/on-demand-scans?target=127.0.0.1", key, nil); res.Status != 403 {
			t.Fatalf("on-demand scan of an unauthorised range: %d %s", res.Status, res.Body)
		}
		// The operator authorises it (periscope org authorize-range): the
		// next pass probes it like a public range.
		if err := svc.Authorize(ctx, org.ID, periscope.AssetIPRange, "127.0.0.1"); err != nil {
			t.Fatal(err)
		}
		if err := svc.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		// The probe's connection is counted once the listener's goroutine
		// has taken it.
		for deadline := time.Now().Add(5 * time.Second); accepted.Load() == 0 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		if accepted.Load() == 0 {
			t.Fatal("the authorised range was not probed")
		}
		page, err := e.Hosts.SearchHosts(ctx, hoststore.HostQuery{Terms: []string{hoststore.Term(hoststore.TermIP, "127.0.0.1")}, Limit: 1})
		if err != nil || page.Total != 1 || !slices.Contains(page.Hosts[0].NetworkPorts, port) {
			t.Fatalf("scanned host: %+v, %v", page, err)
		}
	})
}

// TestPrivateRangesRefusedByDefault: without --allow-private-targets an
// internal range is the 400 it always was.
func TestPrivateRangesRefusedByDefault(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		_, key := e.Account(periscope.Account{Company: "Public Co", Enterprise: true, CreditsPerMonth: 10})
		var org struct {
			ID string `json:"id"`
		}
		e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]any{"name": "Public"}).JSON(t, &org)
		for _, r := range []string{"127.0.0.1/32", "10.20.0.0/16", "fd00:1::/48"} {
			res := e.Do("POST", "/api/v1/enterprise/organizations/"+org.ID+"/ip-ranges", key, map[string]any{"ip_range": r})
			if res.Status != 400 || res.ErrorCode() != "invalid_parameter" || !strings.Contains(string(res.Body), "is not public unicast space") {
				t.Fatalf("add %s: %d %s", r, res.Status, res.Body)
			}
		}
	})
}
