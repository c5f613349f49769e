package activescan_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/activescan"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/scanstore"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// slowRefuse is a dialer that answers every connection "refused" after a
// delay: a range scan takes time without touching any network.
func slowRefuse(d time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return nil, errors.New("connection refused")
	}
}

// TestHostScanDoesNotWaitForAnotherOrganizationsRange is issue 29's
// fairness measurement: with one scan slot, organization A's /16 is being
// port-scanned when organization B asks for a host scan. B's scan must end
// while A's is still running (A gives its slot back between slices of 256
// addresses), instead of after it. The queue wait is logged, not asserted.
func TestHostScanDoesNotWaitForAnotherOrganizationsRange(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			f := newFixture(t, engine, "8.8.0.0/16")
			orgB := periscope.Organization{AccountID: f.acct, Name: "B"}
			if err := f.core.CreateOrganization(ctx, &orgB); err != nil {
				t.Fatal(err)
			}
			if _, err := f.core.AddAsset(ctx, periscope.Asset{OrganizationID: orgB.ID, AccountID: f.acct, Kind: periscope.AssetIPRange, Value: "9.9.9.9/32"}); err != nil {
				t.Fatal(err)
			}
			for org, r := range map[string]string{f.org: "8.8.0.0/16", orgB.ID: "9.9.9.9/32"} {
				if err := f.st.Authorize(ctx, org, periscope.AssetIPRange, r, scanstore.MethodOperator); err != nil {
					t.Fatal(err)
				}
			}
			svc := activescan.New(activescan.Options{Ports: []int{1}, MaxScans: 1, Concurrency: 32, GlobalRate: 1e6, OrgRate: 1e6,
				Poll: time.Hour, Timeout: time.Second, Interval: 1000 * time.Hour}, activescan.Deps{Store: f.st, Dial: slowRefuse(2 * time.Millisecond)})
			var wg sync.WaitGroup
			wg.Go(func() { svc.Run(ctx) })
			defer wg.Wait()
			defer cancel()

			status := func(id string) scanstore.Scan {
				t.Helper()
				sc, err := f.st.Scan(ctx, f.acct, id)
				if err != nil {
					t.Fatal(err)
				}
				return sc
			}
			waitFor := func(what string, ok func() bool) {
				t.Helper()
				deadline := time.Now().Add(2 * time.Minute)
				for !ok() {
					if time.Now().After(deadline) {
						t.Fatalf("timed out waiting for %s", what)
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
			a, _, err := svc.RequestScan(ctx, f.acct, scanstore.OriginOnDemand, mustTarget(t, scanstore.TargetIPRange, "8.8.0.0/16"), periscope.PoolNone)
			if err != nil {
				t.Fatal(err)
			}
			waitFor("the /16 to reach its port scan", func() bool { return status(a.ID).Status == scanstore.StatusPortsStarted })

			asked := time.Now()
			b, _, err := svc.RequestScan(ctx, f.acct, scanstore.OriginOnDemand, mustTarget(t, scanstore.TargetHost, "9.9.9.9"), periscope.PoolNone)
			if err != nil {
				t.Fatal(err)
			}
			var bDone bool
			last := ""
			waitFor("the host scan or the /16 to end", func() bool {
				st := status(b.ID).Status
				if st != last {
					t.Logf("%s: B %s", time.Since(asked).Round(time.Millisecond), st)
					last = st
				}
				bDone = st == scanstore.StatusCompleted
				return bDone || status(a.ID).Status == scanstore.StatusCompleted
			})
			wait := time.Since(asked)
			aStatus := status(a.ID).Status
			t.Logf("host scan of organization B ended %s after it was asked, while organization A's /16 was at %q", wait.Round(time.Millisecond), aStatus)
			if !bDone || aStatus == scanstore.StatusCompleted {
				t.Fatalf("the host scan ended after the /16 (host scan done %v, /16 %q)", bDone, aStatus)
			}
		})
	}
}
