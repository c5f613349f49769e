package scanstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/scanstore"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// fixture is an account with one organization holding example.com and
// 192.0.2.0/24.
type fixture struct {
	core *store.Store
	st   *scanstore.Store
	acct string
	org  string
	now  time.Time
}

func newFixture(t *testing.T, engine string) *fixture {
	t.Helper()
	ctx := context.Background()
	core := storetest.Open(t, engine, scanstore.Migrations())
	f := &fixture{core: core, st: scanstore.New(core), now: time.Unix(1_800_000_000, 0)}
	core.Now = func() time.Time { return f.now }
	a := periscope.Account{Company: "Example", Enterprise: true}
	if err := core.CreateAccount(ctx, &a, &periscope.User{Email: "a@example.com"}); err != nil {
		t.Fatal(err)
	}
	o := periscope.Organization{AccountID: a.ID, Name: "Example"}
	if err := core.CreateOrganization(ctx, &o); err != nil {
		t.Fatal(err)
	}
	f.acct, f.org = a.ID, o.ID
	for _, as := range []periscope.Asset{
		{OrganizationID: o.ID, AccountID: a.ID, Kind: periscope.AssetDomain, Value: "example.com"},
		{OrganizationID: o.ID, AccountID: a.ID, Kind: periscope.AssetIPRange, Value: "192.0.2.0/24"},
	} {
		if _, err := core.AddAsset(ctx, as); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func TestTokenIsStable(t *testing.T) {
	for _, e := range storetest.Engines() {
		t.Run(e, func(t *testing.T) {
			f := newFixture(t, e)
			ctx := context.Background()
			var wg sync.WaitGroup
			toks := make([]string, 8)
			errs := make([]error, 8)
			for i := range toks {
				wg.Add(1)
				go func() { defer wg.Done(); toks[i], errs[i] = f.st.Token(ctx, f.org) }()
			}
			wg.Wait()
			for i := range toks {
				if errs[i] != nil {
					t.Fatal(errs[i])
				}
				if toks[i] != toks[0] || len(toks[0]) != 32 {
					t.Fatalf("tokens %q, want one 32-hex token", toks)
				}
			}
		})
	}
}

func TestAuthorizationFollowsTheAsset(t *testing.T) {
	for _, e := range storetest.Engines() {
		t.Run(e, func(t *testing.T) {
			f := newFixture(t, e)
			ctx := context.Background()
			authorized := func() map[string]bool {
				as, err := f.st.Assets(ctx, f.org)
				if err != nil {
					t.Fatal(err)
				}
				m := map[string]bool{}
				for _, a := range as {
					m[a.Value] = a.Authorized
				}
				return m
			}
			if got := authorized(); got["example.com"] || got["192.0.2.0/24"] || len(got) != 2 {
				t.Fatalf("fresh assets %v, want two unauthorised", got)
			}
			if err := f.st.Authorize(ctx, f.org, periscope.AssetDomain, "other.com", scanstore.MethodOperator); periscope.ErrorCode(err) != periscope.ENotFound {
				t.Fatalf("authorising a foreign domain: %v, want not found", err)
			}
			if err := f.st.Authorize(ctx, f.org, periscope.AssetDomain, "example.com", scanstore.MethodDNS); err != nil {
				t.Fatal(err)
			}
			if got := authorized(); !got["example.com"] || got["192.0.2.0/24"] {
				t.Fatalf("after verifying example.com: %v", got)
			}
			orgs, err := f.st.AuthorizedOrgs(ctx)
			if err != nil || len(orgs) != 1 || orgs[0].ID != f.org || orgs[0].AccountID != f.acct {
				t.Fatalf("AuthorizedOrgs = %v, %v", orgs, err)
			}
			// Removed and added again later: verified no more.
			a := periscope.Asset{OrganizationID: f.org, AccountID: f.acct, Kind: periscope.AssetDomain, Value: "example.com"}
			if err := f.core.RemoveAsset(ctx, a); err != nil {
				t.Fatal(err)
			}
			f.now = f.now.Add(time.Hour)
			if _, err := f.core.AddAsset(ctx, a); err != nil {
				t.Fatal(err)
			}
			if got := authorized(); got["example.com"] {
				t.Fatalf("re-added domain still verified: %v", got)
			}
			if orgs, _ := f.st.AuthorizedOrgs(ctx); len(orgs) != 0 {
				t.Fatalf("AuthorizedOrgs = %v after re-adding, want none", orgs)
			}
		})
	}
}

func TestEnqueueDeduplicatesInsideTheWindow(t *testing.T) {
	for _, e := range storetest.Engines() {
		t.Run(e, func(t *testing.T) {
			f := newFixture(t, e)
			ctx := context.Background()
			r := scanstore.Request{AccountID: f.acct, OrganizationID: f.org, Origin: scanstore.OriginOnDemand,
				TargetType: scanstore.TargetDomain, Target: "example.com"}
			var wg sync.WaitGroup
			scans := make([]scanstore.Scan, 8)
			dedup := make([]bool, 8)
			for i := range scans {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var err error
					if scans[i], dedup[i], err = f.st.Enqueue(ctx, r, 24*time.Hour); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			fresh := 0
			for i := range scans {
				if scans[i].ID != scans[0].ID {
					t.Fatalf("concurrent requests got scans %s and %s", scans[0].ID, scans[i].ID)
				}
				if !dedup[i] {
					fresh++
				}
			}
			if fresh != 1 || scans[0].Status != scanstore.StatusQueued {
				t.Fatalf("%d fresh scans, status %q; want 1, queued", fresh, scans[0].Status)
			}
			f.now = f.now.Add(24*time.Hour + time.Second)
			next, d, err := f.st.Enqueue(ctx, r, 24*time.Hour)
			if err != nil || d || next.ID == scans[0].ID {
				t.Fatalf("after the window: %v dedup=%v err=%v, want a new scan", next.ID, d, err)
			}
			// Another account cannot see it.
			if _, err := f.st.Scan(ctx, "00000000-0000-0000-0000-000000000000", next.ID); periscope.ErrorCode(err) != periscope.ENotFound {
				t.Fatalf("foreign scan lookup: %v", err)
			}
		})
	}
}

func TestOneScanPerOrganizationAtATime(t *testing.T) {
	for _, e := range storetest.Engines() {
		t.Run(e, func(t *testing.T) {
			f := newFixture(t, e)
			ctx := context.Background()
			mk := func(target string) scanstore.Scan {
				sc, _, err := f.st.Enqueue(ctx, scanstore.Request{AccountID: f.acct, OrganizationID: f.org,
					Origin: scanstore.OriginOnDemand, TargetType: scanstore.TargetDomain, Target: target}, time.Hour)
				if err != nil {
					t.Fatal(err)
				}
				return sc
			}
			a, b := mk("example.com"), mk("www.example.com")
			ok, err := f.st.Start(ctx, a, time.Hour)
			if err != nil || !ok {
				t.Fatalf("start a: %v %v", ok, err)
			}
			if ok, err := f.st.Start(ctx, b, time.Hour); err != nil || ok {
				t.Fatalf("start b while a runs: %v %v, want false", ok, err)
			}
			run, err := f.st.Runnable(ctx, f.now.Add(-time.Hour).Unix(), 10)
			if err != nil || len(run) != 1 || run[0].ID != b.ID {
				t.Fatalf("runnable = %v, %v; want b only", run, err)
			}
			if err := f.st.Finish(ctx, a, scanstore.Counts{Names: 3}, ""); err != nil {
				t.Fatal(err)
			}
			if ok, err := f.st.Start(ctx, b, time.Hour); err != nil || !ok {
				t.Fatalf("start b after a: %v %v", ok, err)
			}
			got, err := f.st.Scan(ctx, f.acct, a.ID)
			if err != nil || got.Status != scanstore.StatusCompleted || got.CompletedAt != f.now.Unix() || got.Counts.Names != 3 {
				t.Fatalf("a = %+v, %v", got, err)
			}
			// A runner that died: its lock expires and the scan runs again.
			f.now = f.now.Add(2 * time.Hour)
			run, _ = f.st.Runnable(ctx, f.now.Add(-time.Hour).Unix(), 10)
			if len(run) != 1 || run[0].ID != b.ID {
				t.Fatalf("stale scans = %v, want b", run)
			}
			if ok, err := f.st.Start(ctx, run[0], time.Hour); err != nil || !ok {
				t.Fatalf("take over b: %v %v", ok, err)
			}
		})
	}
}
