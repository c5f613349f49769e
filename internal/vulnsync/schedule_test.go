package vulnsync_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
	"github.com/periscope-oss/periscope/internal/vuln"
	"github.com/periscope-oss/periscope/internal/vulnstore"
	"github.com/periscope-oss/periscope/internal/vulnsync"
)

// TestRunKeepsTheStoredSchedule: a Syncer started after another synced
// (a restart, or another instance taking the lease over) waits until the
// sources are due instead of syncing again at once.
func TestRunKeepsTheStoredSchedule(t *testing.T) {
	storetest.EachOf(t, []store.MigrationSet{vulnstore.Migrations()}, vulnstore.New, func(t *testing.T, s *vulnstore.Store) {
		var requests atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			requests.Add(1)
			http.NotFound(w, r) // a failed attempt is still an attempt
		}))
		defer srv.Close()
		now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
		syncer := func(at time.Time) *vulnsync.Syncer {
			return &vulnsync.Syncer{Store: s, Interval: time.Hour, Now: func() time.Time { return at },
				Fetcher: &vuln.Fetcher{Client: srv.Client()}, Config: vulnsync.Config{KEVURL: srv.URL + "/kev.json", EPSSURL: srv.URL + "/epss.csv"}}
		}
		syncer(now).RunOnce(context.Background())
		first := requests.Load()
		if first == 0 {
			t.Fatal("the first sync asked nothing")
		}
		run := func(sy *vulnsync.Syncer, wait time.Duration) {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- sy.Run(ctx) }()
			time.Sleep(wait)
			cancel()
			if err := <-done; err != context.Canceled {
				t.Fatalf("Run: %v", err)
			}
		}
		run(syncer(now.Add(10*time.Minute)), 300*time.Millisecond)
		if got := requests.Load(); got != first {
			t.Fatalf("synced again 10 minutes after a sync with a 1h interval: %d requests, want %d", got, first)
		}
		sy := syncer(now.Add(2 * time.Hour))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- sy.Run(ctx) }()
		deadline := time.Now().Add(10 * time.Second)
		for requests.Load() == first && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		<-done
		if requests.Load() == first {
			t.Fatal("a due sync did not run at once")
		}
	})
}
