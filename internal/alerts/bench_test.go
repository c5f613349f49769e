package alerts_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/alerts"
	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/ledger"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// BenchmarkChangeToWebhook measures, on loopback, the time from a ledger
// row committed (as the host merge commits it) to its alert's signed POST
// arriving at the receiver, with the rules worker and the dispatcher
// running as serve runs them (woken by the write, polling each second).
func BenchmarkChangeToWebhook(b *testing.B) {
	for _, engine := range storetest.Engines() {
		b.Run(engine, func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			db := storetest.Open(b, engine, alertstore.Migrations())
			st := unlocked(b, db)
			acct := periscope.Account{Company: "acme"}
			db.CreateAccount(ctx, &acct, &periscope.User{Email: "a@example.com"})
			org := periscope.Organization{AccountID: acct.ID, Name: "acme"}
			db.CreateOrganization(ctx, &org)
			if _, err := db.AddAsset(ctx, periscope.Asset{OrganizationID: org.ID, AccountID: acct.ID, Kind: periscope.AssetDomain, Value: "example.com"}); err != nil {
				b.Fatal(err)
			}
			got := make(chan string, 16)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got <- r.Header.Get("webhook-id")
				w.WriteHeader(http.StatusNoContent)
			}))
			defer srv.Close()
			ep := alertstore.Endpoint{AccountID: acct.ID, OrganizationID: org.ID, URL: srv.URL, Format: "json", Secret: alerts.NewSecret(), MinSeverity: "info"}
			if err := st.CreateEndpoint(ctx, &ep); err != nil {
				b.Fatal(err)
			}
			disp := &alerts.Dispatcher{Alerts: st, Client: srv.Client()}
			worker := &alerts.Worker{DB: db, Alerts: st, Baseline: time.Nanosecond, Delivered: disp.Wake}
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); worker.Run(ctx) }()
			go func() { defer wg.Done(); disp.Run(ctx) }()
			defer wg.Wait()
			defer cancel()

			var lat []time.Duration
			for i := 0; b.Loop(); i++ {
				c := ledger.Change{Host: "vpn.example.com", Domain: "example.com", HostType: "subdomain", Category: ledger.CategoryPort,
					Change: ledger.New, Value: fmt.Sprintf("%d/tcp", 10000+i), Source: "bench", Time: time.Now().Unix()}
				start := time.Now()
				if err := db.Tx(ctx, func(tx *store.Tx) error { return st.RecordChanges(ctx, tx, []ledger.Change{c}) }); err != nil {
					b.Fatal(err)
				}
				worker.Wake()
				select {
				case <-got:
				case <-time.After(30 * time.Second):
					b.Fatal("no delivery within 30 s")
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)*50/100].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
		})
	}
}
