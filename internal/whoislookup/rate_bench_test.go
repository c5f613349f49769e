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
// time, through a loopback RDAP registry and checks that no one-second
// window saw more requests sent than the configured per-host rate allows
// (3,000/min = 50/s, burst 5: at most 55 in any second). "Sent" is when the
// request is handed to the HTTP transport, the last moment the client
// controls; the busiest second as the registry saw it is reported too (on a
// loaded machine, scheduling can delay one request onto the next). Each
// iteration takes about 20 s by design.
func BenchmarkLookupRate(b *testing.B) {
	const perMinute, burst, lookups, workers = 3000, 5, 1000, 50
	var mu sync.Mutex
	var arrivals, sent []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrivals = append(arrivals, time.Now())
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer srv.Close()
	for b.Loop() {
		arrivals, sent = arrivals[:0], sent[:0]
		st := whoisstore.New(storetest.Open(b, "sqlite", whoisstore.Migrations()))
		svc := New(Config{Store: st,
			RDAP:         &rdap.Client{HTTP: egress.New(egress.Options{AllowPrivate: true}).HTTPClient(10 * time.Second)},
			Limiter:      NewLimiter(perMinute, burst, time.Minute, time.Now),
			DNSBootstrap: &rdap.Registry{Services: [][][]string{{{"com"}, {srv.URL + "/"}}}}})
		tr := svc.RDAP.HTTP.Transport
		svc.RDAP.HTTP.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			sent = append(sent, time.Now())
			mu.Unlock()
			return tr.RoundTrip(r)
		})
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
		busiestSent, busiestArrived := busiest(sent), busiest(arrivals)
		limit := perMinute/60 + burst
		b.ReportMetric(float64(len(arrivals)), "upstream-requests")
		b.ReportMetric(float64(busiestSent), "max-sent-per-second")
		b.ReportMetric(float64(busiestArrived), "max-arrived-per-second")
		b.ReportMetric(float64(limit), "allowed-per-second")
		if busiestSent > limit {
			b.Fatalf("%d requests sent in one second, over the %d allowed", busiestSent, limit)
		}
		if len(arrivals) != lookups {
			b.Fatalf("%d upstream requests for %d lookups", len(arrivals), lookups)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// busiest returns the most instants in any one-second window.
func busiest(ts []time.Time) int {
	ts = slices.Clone(ts)
	slices.SortFunc(ts, func(a, c time.Time) int { return a.Compare(c) })
	n := 0
	for i, j := 0, 0; i < len(ts); i++ {
		for ts[i].Sub(ts[j]) >= time.Second {
			j++
		}
		n = max(n, i-j+1)
	}
	return n
}
