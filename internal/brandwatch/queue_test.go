package brandwatch_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/brandwatch"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/schema"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

func TestBoundedTurns(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			st := storetest.Open(t, engine, schema.Sets()...)
			bs := brandstore.New(st)
			f := setup(t, st, bs)
			ctx := context.Background()
			for i := range 7 {
				d := fmt.Sprintf("queuedbrand%c.com", 'a'+i)
				if _, err := st.AddAsset(ctx, periscope.Asset{OrganizationID: f.org.ID, AccountID: f.acct.ID, Kind: periscope.AssetDomain, Value: d}); err != nil {
					t.Fatal(err)
				}
			}
			m := brandwatch.New(st, hoststore.New(st), bs, brandwatch.Options{BrandsPerTurn: 3, DeferBackfills: true, Poll: time.Hour})
			rctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- m.Run(rctx) }()
			deadline := time.Now().Add(30 * time.Second)
			for m.Queued() > 0 || len(m.Brands()) < 7 {
				if time.Now().After(deadline) {
					t.Fatalf("queue never drained: %d queued, %d brands", m.Queued(), len(m.Brands()))
				}
				time.Sleep(20 * time.Millisecond)
			}
			cancel()
			<-done
			pairs, err := bs.MonitoredPairs(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(pairs) != 0 {
				t.Fatalf("deferred backfills ran in Run: %d pairs marked", len(pairs))
			}
			if err := m.Backfill(ctx); err != nil {
				t.Fatal(err)
			}
			if pairs, _ = bs.MonitoredPairs(ctx); len(pairs) < 7 {
				t.Fatalf("after Backfill %d pairs marked, want at least 7", len(pairs))
			}

			// Reconcile (what the CLI's ingest runs) drains the queue
			// before it returns, however small the turns.
			m2 := brandwatch.New(st, hoststore.New(st), bs, brandwatch.Options{BrandsPerTurn: 3, DeferBackfills: true, Poll: time.Hour})
			if err := m2.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			if m2.Queued() != 0 || len(m2.Brands()) < 7 {
				t.Fatalf("Reconcile left %d queued, %d brands", m2.Queued(), len(m2.Brands()))
			}
		})
	}
}
