package whoislookup

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/egress"
	"github.com/periscope-oss/periscope/internal/rdap"
	"github.com/periscope-oss/periscope/internal/store/storetest"
	"github.com/periscope-oss/periscope/internal/whoisstore"
)

// BenchmarkLookupRate sends 1,000 lookups of distinct domains, 50 at a
// time, through a loopback RDAP registry and checks from the registry's side
// that no one-second window saw more than the configured per-host rate
// (3,000/min = 50/s, burst 5: at most 55 in any second). It reports the
// busiest second seen. Each iteration takes about 20 s by design.
func BenchmarkLookupRate(b *testing.B) {
	const perMinute, burst, lookups, workers = 3000, 5, 1000, 50
	var mu sync.Mutex
	var arrivals []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrivals = append(arrivals, time.Now())
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer srv.Close()
	for b.Loop() {
		arrivals = arrivals[:0]
		st := whoisstore.New(storetest.Open(b, "sqlite", whoisstore.Migrations()))
		svc := New(Config{Store: st,
			RDAP:         &rdap.Client{HTTP: egress.New(egress.Options{AllowPrivate: true}).HTTPClient(10 * time.Second)},
			Limiter:      NewLimiter(perMinute, burst, time.Minute, time.Now),
			DNSBootstrap: &rdap.Registry{Services: [][][]string{{{"com"}, {srv.URL + "/"}}}}})
		jobs := make(chan int)
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for i := range jobs {
					if _, err := svc.Lookup(context.Background(), fmt.Sprintf("d%04d.com", i), "com", false); err != nil && !strings.Contains(err.Error(), "throttled") {
						b.Error(err)
					}
				}
			})
		}
		for i := range lookups {
			jobs <- i
		}
		close(jobs)
		wg.Wait()
		slices.SortFunc(arrivals, func(a, c time.Time) int { return a.Compare(c) })
		busiest := 0
		for i, j := 0, 0; i < len(arrivals); i++ {
			for arrivals[i].Sub(arrivals[j]) >= time.Second {
				j++
			}
			busiest = max(busiest, i-j+1)
		}
		limit := perMinute/60 + burst
		b.ReportMetric(float64(len(arrivals)), "upstream-requests")
		b.ReportMetric(float64(busiest), "max-per-second")
		b.ReportMetric(float64(limit), "allowed-per-second")
		if len(arrivals) != lookups {
			b.Fatalf("%d upstream requests for %d lookups", len(arrivals), lookups)
		}
		if busiest > limit {
			b.Fatalf("%d requests in one second, over the %d allowed", busiest, limit)
		}
	}
}
