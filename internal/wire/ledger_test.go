package wire_test

import (
	"context"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/ledger"
	"github.com/periscope-oss/periscope/internal/schema"
	"github.com/periscope-oss/periscope/internal/store/storetest"
	"github.com/periscope-oss/periscope/internal/whoisstore"
	"github.com/periscope-oss/periscope/internal/wire"
)

func ledgerOf(t *testing.T, as *alertstore.Store, name string) []alertstore.Row {
	t.Helper()
	rows, _, _, err := as.SearchLedger(context.Background(), alertstore.LedgerQuery{Host: name, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestTrackedHostWrites drives the host store's ledger hook: a new host is
// one row, a change is its rows, a covered port missed twice is removed
// (and pruned from the stored host), a scan of other ports removes nothing,
// a source covering nothing removes nothing, and commits wake the reader.
func TestTrackedHostWrites(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			db := storetest.Open(t, engine, schema.Sets()...)
			l := wire.NewLedger(db)
			woken := 0
			l.OnCommit(func() { woken++ })
			hs := wire.Hosts(db, l)
			nmap := ledger.Source{Name: "nmap", Ports: []int{22, 443}}
			obs := func(ports ...int) []host.Host {
				h := host.Host{Host: "vpn.example.com", IPAddress: "192.0.2.10"}
				for _, p := range ports {
					h.NetworkServices = append(h.NetworkServices, host.Service{Port: p, Protocol: "tcp"})
				}
				return []host.Host{h}
			}
			upsert := func(src ledger.Source, hs2 []host.Host) {
				t.Helper()
				if _, err := hs.UpsertHostsFrom(ctx, src, hs2); err != nil {
					t.Fatal(err)
				}
			}
			upsert(nmap, obs(22, 443))
			rows := ledgerOf(t, l.Store, "vpn.example.com")
			if len(rows) != 1 || rows[0].Category != ledger.CategoryHost || rows[0].Change.Change != ledger.New || rows[0].Source != "nmap" || woken != 1 {
				t.Fatalf("first sight: %+v (woken %d)", rows, woken)
			}
			upsert(nmap, obs(443, 3389)) // 22 missed once; 3389 new
			upsert(ledger.Source{Name: "masscan", Ports: []int{8080}}, obs(8080))
			if rows = ledgerOf(t, l.Store, "vpn.example.com"); len(rows) != 3 {
				t.Fatalf("after a change and a scan of other ports: %+v", rows)
			}
			upsert(nmap, obs(443, 3389)) // 22 missed twice: removed
			rows = ledgerOf(t, l.Store, "vpn.example.com")
			if len(rows) != 4 || rows[0].Category != ledger.CategoryPort || rows[0].Change.Change != ledger.Removed || rows[0].OldValue != "22/tcp" {
				t.Fatalf("removal: %+v", rows)
			}
			h, err := hs.Host(ctx, "vpn.example.com")
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range h.NetworkPorts {
				if p == 22 {
					t.Fatalf("removed port still stored: %v", h.NetworkPorts)
				}
			}
			// A source that covers nothing adds, but removes nothing.
			upsert(ledger.Source{}, obs(443))
			upsert(ledger.Source{}, obs(443))
			if rows = ledgerOf(t, l.Store, "vpn.example.com"); len(rows) != 4 {
				t.Fatalf("an uncovering source changed the ledger: %+v", rows)
			}
			// The host store without a tracker writes no rows.
			if _, err := hoststore.New(db).UpsertHosts(ctx, []host.Host{{Host: "quiet.example.com"}}); err != nil {
				t.Fatal(err)
			}
			if rows = ledgerOf(t, l.Store, "quiet.example.com"); len(rows) != 0 {
				t.Fatalf("untracked write: %+v", rows)
			}
		})
	}
}

// TestWHOISLedger: a stored registration replaced with another registrar
// writes a whois row; the first lookup writes none.
func TestWHOISLedger(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			db := storetest.Open(t, engine, schema.Sets()...)
			l := wire.NewLedger(db)
			ws := whoisstore.New(db).OnChange(l.WHOIS)
			now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
			rec := whoisstore.Record{Domain: "example.com", TLD: "com", Registrar: "Old Registrar", ExpiresAt: now.AddDate(1, 0, 0),
				NameServers: []string{"a.iana-servers.net"}, QueriedAt: now, CacheExpires: now.Add(time.Hour)}
			if err := ws.Put(ctx, rec); err != nil {
				t.Fatal(err)
			}
			if rows := ledgerOf(t, l.Store, "example.com"); len(rows) != 0 {
				t.Fatalf("first lookup: %+v", rows)
			}
			rec.Registrar, rec.QueriedAt = "New Registrar", now.Add(time.Hour)
			if err := ws.Put(ctx, rec); err != nil {
				t.Fatal(err)
			}
			rows := ledgerOf(t, l.Store, "example.com")
			if len(rows) != 1 || rows[0].Category != ledger.CategoryWHOIS || rows[0].Value != "registrar:New Registrar" || rows[0].OldValue != "registrar:Old Registrar" || rows[0].Time != now.Add(time.Hour).Unix() {
				t.Fatalf("registrar change: %+v", rows)
			}
		})
	}
}
