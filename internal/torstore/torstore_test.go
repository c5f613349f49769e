package torstore_test

import (
	"context"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store/storetest"
	"github.com/periscope-oss/periscope/internal/tor"
	"github.com/periscope-oss/periscope/internal/torstore"
)

func TestLoadKeepsFirstAndLastSeen(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			db := storetest.Open(t, engine, torstore.Migrations())
			now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
			db.Now = func() time.Time { return now }
			st := torstore.New(db)
			if at, err := st.Loaded(ctx); err != nil || !at.IsZero() {
				t.Fatalf("fresh: %v %v", at, err)
			}
			f, err := os.Open("../tor/testdata/exit-addresses_2024-03-12.txt")
			if err != nil {
				t.Fatal(err)
			}
			exits, err := tor.Read(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Load(ctx, "exit-addresses", exits); err != nil {
				t.Fatal(err)
			}
			ip := netip.MustParseAddr("185.241.208.232")
			e, err := st.Exit(ctx, ip)
			seen := time.Date(2024, 3, 12, 8, 10, 51, 0, time.UTC).Unix()
			// Two relays exit from this address in the list: first seen
			// through one, last through the other, whose fingerprint stays.
			const relay = "ADC776E831EC4609D6D5AC0D5A757B00FC6BFDEE"
			if err != nil || e.FirstSeen != seen || e.LastSeen != 1710249596 || e.Fingerprint != relay {
				t.Fatalf("exit: %+v %v", e, err)
			}
			// A later bulk list (undated: seen at the load) moves last_seen
			// only, and keeps the fingerprint.
			now = now.Add(time.Hour)
			if err := st.Load(ctx, "bulk", []tor.Exit{{IP: ip}, {IP: netip.MustParseAddr("2001:db8::1")}}); err != nil {
				t.Fatal(err)
			}
			e, _ = st.Exit(ctx, ip)
			if e.FirstSeen != seen || e.LastSeen != now.Unix() || e.Fingerprint == "" {
				t.Errorf("after the bulk list: %+v", e)
			}
			// An older dated list moves first_seen back only.
			old := []tor.Exit{{IP: ip, Fingerprint: "OLD", Seen: time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)}}
			if err := st.Load(ctx, "old", old); err != nil {
				t.Fatal(err)
			}
			e, _ = st.Exit(ctx, ip)
			if e.FirstSeen != old[0].Seen.Unix() || e.LastSeen != now.Unix() || e.Fingerprint != relay {
				t.Errorf("after an older list: %+v", e)
			}
			if _, err := st.Exit(ctx, netip.MustParseAddr("8.8.8.8")); periscope.ErrorCode(err) != periscope.ENotFound {
				t.Errorf("not an exit: %v", err)
			}
			if at, err := st.Loaded(ctx); err != nil || !at.Equal(now) {
				t.Errorf("loaded at %v (%v), want %v", at, err, now)
			}
		})
	}
}
