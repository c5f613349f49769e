package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// A bulk load skips the name lookups only while it has stored every stored
// host: a name it stored in an earlier transaction, one stored before it
// began, one another writer stored between its transactions, and one of a
// rolled-back transaction all end up as exactly one host.
func TestHostLoadNeverDuplicatesANameOnEitherEngine(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		obs := func(names ...string) []host.Host {
			var hs []host.Host
			for _, n := range names {
				hs = append(hs, host.Host{Host: n, NetworkPorts: []int{443}, FirstSeen: 1, LastSeen: 2})
			}
			return hs
		}
		tx := func(load *store.HostLoad, commit bool, names ...string) store.HostStats {
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
		check := func(st store.HostStats, inserted, updated int) {
			t.Helper()
			if st.Inserted != inserted || st.Updated+st.Unchanged != updated {
				t.Errorf("inserted %d, updated %d, unchanged %d; want %d new and %d stored", st.Inserted, st.Updated, st.Unchanged, inserted, updated)
			}
		}

		// A load into an empty table.
		load := store.NewHostLoad()
		check(tx(load, true, "a.example.com", "b.example.com"), 2, 0)
		check(tx(load, true, "b.example.com", "c.example.com"), 1, 1) // its own name, from the transaction before
		// Another writer between the load's transactions.
		if _, err := s.UpsertHosts(ctx, obs("d.example.com")); err != nil {
			t.Fatal(err)
		}
		check(tx(load, true, "d.example.com", "e.example.com", "a.example.com"), 1, 2)
		// A new load on a table that holds hosts.
		load = store.NewHostLoad()
		check(tx(load, true, "e.example.com", "f.example.com"), 1, 1)
		// A rolled-back transaction, then the same names again.
		load = store.NewHostLoad()
		tx(load, false, "g.example.com")
		check(tx(load, true, "g.example.com", "f.example.com"), 1, 1)

		for i, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
			var count int
			name := fmt.Sprintf("%s.example.com", n)
			if err := s.DB().QueryRowContext(ctx, s.Rebind(`SELECT COUNT(*) FROM hosts WHERE name = ?`), name).Scan(&count); err != nil || count != 1 {
				t.Errorf("host %d %s: %d rows, %v", i, name, count, err)
			}
		}
	})
}
