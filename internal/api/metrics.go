package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the server's Prometheus series, on a registry of its own (no
// globals: two servers in one test process do not collide).
type metrics struct {
	registry    *prometheus.Registry
	requests    *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	credits     *prometheus.CounterVec
	rateLimited *prometheus.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "periscope_http_requests_total", Help: "HTTP requests by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "periscope_http_request_duration_seconds", Help: "HTTP request latency by route pattern.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route"}),
		credits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "periscope_credits_charged_total", Help: "Credits charged, by pool (monthly, oem).",
		}, []string{"pool"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "periscope_rate_limit_rejections_total", Help: "Requests refused with 429, by rate-limit family.",
		}, []string{"family"}),
	}
	m.registry.MustRegister(m.requests, m.latency, m.credits, m.rateLimited,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// observe counts a request. Every label comes from a fixed set: route is a
// registered pattern or "unmatched", method a known method or "other",
// status a code the server wrote; nothing the client typed becomes a label.
func (m *metrics) observe(route, method string, status int, d time.Duration) {
	m.requests.WithLabelValues(route, methodLabel(method), strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(route).Observe(d.Seconds())
}

// Registry lets capabilities register their own series (sync status, ingest
// counters) on the server's registry.
func (s *Server) Registry() *prometheus.Registry { return s.metrics.registry }

func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) error {
	promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	return nil
}

// methodLabel maps a request method to its label.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
}
