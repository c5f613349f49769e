package api_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/periscope-oss/periscope/internal/accesslog"
	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
)

// discardWriter is a ResponseWriter that keeps nothing, so the benchmark
// measures the handler chain and not a recorder.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}

// BenchmarkAuthStatusStack measures the CPU and allocations of GET
// /api/v1/auth/status through the whole middleware chain (request id, key
// lookup, limiter, metrics, access log as JSON to io.Discard), in process
// and without the network, beside a bare handler writing the same bytes:
// the per-request cost the stack adds to what bench/auth-wrk.sh measures
// (the same configuration as periscope-bench auth: rate limit 0).
func BenchmarkAuthStatusStack(b *testing.B) {
	acfg := api.DefaultConfig()
	acfg.RateLimit = 0
	e := apitest.New(b, "sqlite", apitest.Options{Config: &acfg, Deps: func(d *api.Deps, _ *store.Store) {
		// As serve wires them: the service log and the access log share one writer.
		w := accesslog.New(io.Discard)
		d.Log, d.AccessLog = slog.New(slog.NewJSONHandler(w, nil)), w
	}})
	_, key := e.Account(periscope.Account{CreditsPerMonth: 1, MaxResultsPerRequest: 100})
	req := httptest.NewRequest("GET", "/api/v1/auth/status", nil)
	req.RemoteAddr = "127.0.0.1:40000"
	req.Header.Set("X-API-KEY", key)
	rec := httptest.NewRecorder()
	e.Server.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("auth/status answered %d: %s", rec.Code, rec.Body)
	}
	body := rec.Body.Bytes()
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
	for _, t := range []struct {
		name string
		h    http.Handler
	}{{"bare", bare}, {"periscope", e.Server}} {
		b.Run(t.name, func(b *testing.B) {
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				t.h.ServeHTTP(w, req)
			}
		})
	}
}
