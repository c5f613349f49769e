package store_test

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

func newAccount(t *testing.T, s *store.Store, company string, credits int64) (periscope.Account, periscope.User) {
	t.Helper()
	a := periscope.Account{Company: company, Plan: "test", CreditsPerMonth: credits, OEMCreditsPerMonth: credits, MaxResultsPerRequest: 100}
	u := periscope.User{Email: company + "@example.com", FirstName: "F", LastName: "L"}
	if err := s.CreateAccount(context.Background(), &a, &u); err != nil {
		t.Fatalf("create account: %v", err)
	}
	return a, u
}

func TestMigrateIsIdempotent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		applied, err := s.Migrate(context.Background())
		if err != nil || len(applied) != 0 {
			t.Fatalf("second Migrate applied %v, %v", applied, err)
		}
	})
}

func TestKeys(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a, u := newAccount(t, s, "acme", 10)
		key, k, err := s.CreateKey(ctx, a.ID, u.ID, "ci")
		if err != nil {
			t.Fatal(err)
		}
		if len(key) != 64 || k.Prefix != key[:8] {
			t.Fatalf("key %q prefix %q", key, k.Prefix)
		}
		p, err := s.Authenticate(ctx, key)
		if err != nil || p.Account.ID != a.ID || p.User.Email != u.Email || p.Key.ID != k.ID {
			t.Fatalf("Authenticate = %+v, %v", p, err)
		}
		for _, bad := range []string{"", "nope", key + "x", key[:63]} {
			if _, err := s.Authenticate(ctx, bad); periscope.ErrorCode(err) != periscope.EUnauthorized {
				t.Errorf("Authenticate(%q) = %v, want unauthorized", bad, err)
			}
		}
		if _, err := s.RevokeKey(ctx, k.Prefix); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Authenticate(ctx, key); periscope.ErrorCode(err) != periscope.EUnauthorized {
			t.Errorf("revoked key: %v", err)
		}
		if _, err := s.RevokeKey(ctx, "ffffffff"); !periscope.IsNotFound(err) {
			t.Errorf("revoke unknown: %v", err)
		}
	})
}

func TestCreditsExactUnderConcurrency(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		const credits, callers = 25, 200
		a, _ := newAccount(t, s, "race", credits)
		var ok, exhausted atomic.Int64
		var wg sync.WaitGroup
		for i := 0; i < callers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.Reserve(ctx, a.ID, periscope.PoolMonthly, 1)
				switch periscope.ErrorCode(err) {
				case "":
					ok.Add(1)
				case periscope.ECreditsExhausted:
					exhausted.Add(1)
				default:
					t.Errorf("Reserve: %v", err)
				}
			}()
		}
		wg.Wait()
		if ok.Load() != credits || exhausted.Load() != callers-credits {
			t.Fatalf("ok=%d exhausted=%d, want %d and %d", ok.Load(), exhausted.Load(), credits, callers-credits)
		}
		got, _ := s.Account(ctx, a.ID)
		if got.CreditsUsed != credits || got.OEMCreditsUsed != 0 {
			t.Fatalf("used %d / oem %d", got.CreditsUsed, got.OEMCreditsUsed)
		}
	})
}

func TestCreditsRenewAndRefund(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		now := time.Date(2026, 1, 31, 23, 59, 0, 0, time.UTC)
		s.Now = func() time.Time { return now }
		a, _ := newAccount(t, s, "renew", 2)
		p1, err := s.Reserve(ctx, a.ID, periscope.PoolOEM, 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Reserve(ctx, a.ID, periscope.PoolOEM, 2); periscope.ErrorCode(err) != periscope.EOEMCreditsExhausted {
			t.Fatalf("over-reserve: %v", err)
		}
		now = time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
		// A refund of January's reservation must not credit February.
		if err := s.Refund(ctx, a.ID, periscope.PoolOEM, 1, p1); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			if _, err := s.Reserve(ctx, a.ID, periscope.PoolOEM, 1); err != nil {
				t.Fatalf("February reserve %d: %v", i, err)
			}
		}
		if _, err := s.Reserve(ctx, a.ID, periscope.PoolOEM, 1); !errors.Is(err, err) || periscope.ErrorCode(err) != periscope.EOEMCreditsExhausted {
			t.Fatalf("third February reserve: %v", err)
		}
		got, _ := s.Account(ctx, a.ID)
		if got.CreditsPeriod != "2026-02" || got.OEMCreditsUsed != 2 || got.CreditsUsed != 0 {
			t.Fatalf("after renewal: %+v", got)
		}
	})
}

func TestAssetsAndTenancy(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a, _ := newAccount(t, s, "a", 1)
		b, _ := newAccount(t, s, "b", 1)
		oa := periscope.Organization{AccountID: a.ID, Name: "A"}
		ob := periscope.Organization{AccountID: b.ID, Name: "B"}
		oa2 := periscope.Organization{AccountID: a.ID, Name: "A2"}
		for _, o := range []*periscope.Organization{&oa, &ob, &oa2} {
			if err := s.CreateOrganization(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		if !oa.IsDefault || !ob.IsDefault || oa2.IsDefault {
			t.Fatalf("defaults: %v %v %v", oa.IsDefault, ob.IsDefault, oa2.IsDefault)
		}
		dom := periscope.Asset{OrganizationID: oa.ID, AccountID: a.ID, Kind: periscope.AssetDomain, Value: "example.com"}
		if created, err := s.AddAsset(ctx, dom); err != nil || !created {
			t.Fatalf("add: %v %v", created, err)
		}
		if created, err := s.AddAsset(ctx, dom); err != nil || created {
			t.Fatalf("re-add: %v %v", created, err)
		}
		// Same account, other org: allowed.
		if _, err := s.AddAsset(ctx, periscope.Asset{OrganizationID: oa2.ID, AccountID: a.ID, Kind: periscope.AssetDomain, Value: "example.com"}); err != nil {
			t.Fatalf("same account other org: %v", err)
		}
		// Other account: conflict.
		if _, err := s.AddAsset(ctx, periscope.Asset{OrganizationID: ob.ID, AccountID: b.ID, Kind: periscope.AssetDomain, Value: "example.com"}); periscope.ErrorCode(err) != periscope.EConflict {
			t.Fatalf("other account: %v", err)
		}
		// Other account's org: not found.
		if _, err := s.AddAsset(ctx, periscope.Asset{OrganizationID: ob.ID, AccountID: a.ID, Kind: periscope.AssetDomain, Value: "x.com"}); !periscope.IsNotFound(err) {
			t.Fatalf("foreign org: %v", err)
		}
		r := periscope.Asset{OrganizationID: oa.ID, AccountID: a.ID, Kind: periscope.AssetIPRange, Value: "8.8.8.0/24"}
		if _, err := s.AddAsset(ctx, r); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddAsset(ctx, periscope.Asset{OrganizationID: ob.ID, AccountID: b.ID, Kind: periscope.AssetIPRange, Value: "8.8.8.128/25"}); periscope.ErrorCode(err) != periscope.EConflict {
			t.Fatalf("overlapping range: %v", err)
		}
		if err := s.DeleteOrganization(ctx, a.ID, oa.ID); periscope.ErrorCode(err) != periscope.EDefaultOrganization {
			t.Fatalf("delete default: %v", err)
		}
		if err := s.DeleteOrganization(ctx, b.ID, oa2.ID); !periscope.IsNotFound(err) {
			t.Fatalf("delete foreign: %v", err)
		}
		if err := s.RemoveAsset(ctx, dom); err != nil {
			t.Fatal(err)
		}
		// Still held by oa2, so b still conflicts; after deleting oa2 it is free.
		if _, err := s.AddAsset(ctx, periscope.Asset{OrganizationID: ob.ID, AccountID: b.ID, Kind: periscope.AssetDomain, Value: "example.com"}); periscope.ErrorCode(err) != periscope.EConflict {
			t.Fatalf("still claimed: %v", err)
		}
		if err := s.DeleteOrganization(ctx, a.ID, oa2.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddAsset(ctx, periscope.Asset{OrganizationID: ob.ID, AccountID: b.ID, Kind: periscope.AssetDomain, Value: "example.com"}); err != nil {
			t.Fatalf("after release: %v", err)
		}
	})
}

func TestAuthCacheSeesWritesAtOnceAndOtherProcessesWithinTTL(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			dsn := storetest.DSN(t, engine)
			now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
			open := func() *store.Store {
				s, err := store.Open(ctx, dsn)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				if _, err := s.Migrate(ctx); err != nil {
					t.Fatal(err)
				}
				s.Now = func() time.Time { return now }
				return s
			}
			a, b := open(), open() // two processes on one database
			acct, u := newAccount(t, a, "cache", 5)
			key1, k1, _ := a.CreateKey(ctx, acct.ID, u.ID, "one")
			key2, k2, _ := a.CreateKey(ctx, acct.ID, u.ID, "two")
			for _, k := range []string{key1, key2} {
				if _, err := a.Authenticate(ctx, k); err != nil {
					t.Fatal(err)
				}
			}
			// Same store: a revocation and a reservation are seen at once.
			if _, err := a.RevokeKey(ctx, k1.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := a.Authenticate(ctx, key1); periscope.ErrorCode(err) != periscope.EUnauthorized {
				t.Fatalf("revoked key still authenticates: %v", err)
			}
			if _, err := a.Reserve(ctx, acct.ID, periscope.PoolMonthly, 1); err != nil {
				t.Fatal(err)
			}
			if p, _ := a.Authenticate(ctx, key2); p.Account.CreditsUsed != 1 {
				t.Fatalf("usage after reserve: %d", p.Account.CreditsUsed)
			}
			// Another process: seen once the cache entry expires.
			if _, err := b.RevokeKey(ctx, k2.ID); err != nil {
				t.Fatal(err)
			}
			now = now.Add(3 * time.Second)
			if _, err := a.Authenticate(ctx, key2); periscope.ErrorCode(err) != periscope.EUnauthorized {
				t.Fatalf("revocation by another process not seen after the TTL: %v", err)
			}
		})
	}
}

// A transaction from Begin copies rows (PostgreSQL) as part of itself: a
// rollback takes them back, a commit keeps them, and the transaction's own
// statements see them. On SQLite CopyFrom reports false and writes nothing.
func TestBeginCopyFromIsPartOfTheTransaction(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		if _, err := s.Exec(ctx, `CREATE TABLE copy_probe (k BIGINT NOT NULL, v TEXT NOT NULL)`); err != nil {
			t.Fatal(err)
		}
		count := func(q interface {
			QueryRow(context.Context, string, ...any) *sql.Row
		}) int {
			var n int
			if err := q.QueryRow(ctx, `SELECT COUNT(*) FROM copy_probe`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		var rows [][]any
		for i := range 40 { // more than the fewest it copies
			rows = append(rows, []any{int64(i), "v"})
		}
		for _, commit := range []bool{false, true} {
			tx, err := s.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			copied, err := tx.CopyFrom(ctx, "copy_probe", []string{"k", "v"}, rows)
			if err != nil {
				t.Fatalf("copy: %v", err)
			}
			if want := s.Dialect().Name() == "postgres"; copied != want {
				t.Fatalf("copied %v on %s", copied, s.Dialect().Name())
			}
			if !copied {
				tx.Rollback()
				if n := count(s); n != 0 {
					t.Fatalf("SQLite's CopyFrom wrote %d rows", n)
				}
				return
			}
			if n := count(tx); n != len(rows) {
				t.Fatalf("the transaction sees %d copied rows, want %d", n, len(rows))
			}
			if commit {
				err = tx.Commit()
			} else {
				err = tx.Rollback()
			}
			if err != nil {
				t.Fatal(err)
			}
			if want, n := map[bool]int{false: 0, true: len(rows)}[commit], count(s); n != want {
				t.Fatalf("commit %v: %d rows stored, want %d", commit, n, want)
			}
		}
	})
}
