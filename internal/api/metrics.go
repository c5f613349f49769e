package api

import (
	"net/http"
	"strconv"
	"sync"
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
	// series keeps each (route, method, status)'s counter and histogram, so
	// a request does not hash its labels again (the sets are fixed and
	// small: routes × methods × the statuses the server writes).
	series sync.Map // seriesKey -> *routeSeries
}

type seriesKey struct {
	route, method string
	status        int
}

type routeSeries struct {
	requests prometheus.Counter
	latency  prometheus.Observer
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
			Name: "periscope_rate_limit_rejections_total", Help: "Requests refused with 429, by route family (general, oem, mcp), auth or asset-changes.",
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
	method = methodLabel(method)
	k := seriesKey{route, method, status}
	v, ok := m.series.Load(k)
	if !ok {
		v, _ = m.series.LoadOrStore(k, &routeSeries{
			requests: m.requests.WithLabelValues(route, method, strconv.Itoa(status)),
			latency:  m.latency.WithLabelValues(route),
		})
	}
	rs := v.(*routeSeries)
	rs.requests.Inc()
	rs.latency.Observe(d.Seconds())
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
