package hoststore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
)

// A bulk load skips the name lookups only while it has stored every stored
// host: a name it stored in an earlier transaction, one stored before it
// began, one another writer stored between its transactions, and one of a
// rolled-back transaction all end up as exactly one host.
func TestHostLoadNeverDuplicatesANameOnEitherEngine(t *testing.T) {
	each(t, func(t *testing.T, s *hoststore.Store) {
		ctx := context.Background()
		obs := func(names ...string) []host.Host {
			var hs []host.Host
			for _, n := range names {
				hs = append(hs, host.Host{Host: n, NetworkPorts: []int{443}, FirstSeen: 1, LastSeen: 2})
			}
			return hs
		}
		tx := func(load *hoststore.HostLoad, commit bool, names ...string) hoststore.HostStats {
			t.Helper()
			b, err := s.PrepareHosts(obs(names...))
			if err != nil {
				t.Fatal(err)
			}
			w, err := s.BeginHosts(ctx, load)
			if err != nil {
				t.Fatal(err)
			}
			st, err := w.Upsert(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			if !commit {
				w.Rollback()
				return st
			}
			if err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			return st
		}
		check := func(st hoststore.HostStats, inserted, updated int) {
			t.Helper()
			if st.Inserted != inserted || st.Updated+st.Unchanged != updated {
				t.Errorf("inserted %d, updated %d, unchanged %d; want %d new and %d stored", st.Inserted, st.Updated, st.Unchanged, inserted, updated)
			}
		}

		// A load into an empty table.
		load := hoststore.NewHostLoad()
		check(tx(load, true, "a.example.com", "b.example.com"), 2, 0)
		check(tx(load, true, "b.example.com", "c.example.com"), 1, 1) // its own name, from the transaction before
		// Another writer between the load's transactions.
		if _, err := s.UpsertHosts(ctx, obs("d.example.com")); err != nil {
			t.Fatal(err)
		}
		check(tx(load, true, "d.example.com", "e.example.com", "a.example.com"), 1, 2)
		// A new load on a table that holds hosts.
		load = hoststore.NewHostLoad()
		check(tx(load, true, "e.example.com", "f.example.com"), 1, 1)
		// A rolled-back transaction, then the same names again.
		load = hoststore.NewHostLoad()
		tx(load, false, "g.example.com")
		check(tx(load, true, "g.example.com", "f.example.com"), 1, 1)

		for i, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
			var count int
			name := fmt.Sprintf("%s.example.com", n)
			if err := s.Core().DB().QueryRowContext(ctx, s.Core().Rebind(`SELECT COUNT(*) FROM hosts WHERE name = ?`), name).Scan(&count); err != nil || count != 1 {
				t.Errorf("host %d %s: %d rows, %v", i, name, count, err)
			}
		}
	})
}

// The term changes of a transaction's batches are applied once, at its
// commit, and a change a later batch undoes cancels out: a host that moves
// from US to DE and back within one transaction is found under US only,
// and one that moves for good under its new country only.
func TestHostTermMovesAcrossBatchesOfATransaction(t *testing.T) {
	each(t, func(t *testing.T, s *hoststore.Store) {
		ctx := context.Background()
		at := func(name, cc string, seen int64) host.Host {
			return host.Host{Host: name, IPMetadata: host.IPMetadata{CountryCode: cc}, FirstSeen: 1, LastSeen: seen}
		}
		if _, err := s.UpsertHosts(ctx, []host.Host{at("x.example.com", "US", 10), at("y.example.com", "US", 10)}); err != nil {
			t.Fatal(err)
		}
		w, err := s.BeginHosts(ctx, hoststore.NewHostLoad())
		if err != nil {
			t.Fatal(err)
		}
		for _, batch := range [][]host.Host{
			{at("x.example.com", "DE", 20), at("y.example.com", "DE", 20)},
			{at("x.example.com", "US", 30), at("y.example.com", "FR", 30)},
		} {
			b, err := s.PrepareHosts(batch)
			if err != nil {
				t.Fatal(err)
			}
			if st, err := w.Upsert(ctx, b); err != nil || st.Updated != 2 {
				t.Fatalf("upsert: %+v, %v", st, err)
			}
		}
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		for cc, want := range map[string][]string{"us": {"x.example.com"}, "de": nil, "fr": {"y.example.com"}} {
			page, err := s.SearchHosts(ctx, hoststore.HostQuery{Terms: []string{"cc:" + cc}, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range page.Hosts {
				got = append(got, h.Host)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) || page.Total != len(want) {
				t.Errorf("cc:%s: %v (total %d), want %v", cc, got, page.Total, want)
			}
		}
	})
}
