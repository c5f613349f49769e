package activescan

import "github.com/prometheus/client_golang/prometheus"

// metrics are the monitor's; every label takes values from a fixed set.
type metrics struct {
	scans       *prometheus.CounterVec // origin, result
	duration    *prometheus.HistogramVec
	connections *prometheus.CounterVec // probe (tcp, tls, http), result
	dns         *prometheus.CounterVec // result
	skipped     prometheus.Counter
	running     prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		scans: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "periscope_monitor_scans_total",
			Help: "Active monitoring scans ended, by origin (scheduled, on_demand, oem) and result."}, []string{"origin", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "periscope_monitor_scan_duration_seconds",
			Help:    "Wall time of active monitoring scans.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 9)}, []string{"origin"}),
		connections: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "periscope_monitor_probes_total",
			Help: "Connection probes by kind (tcp, tls, http) and result."}, []string{"probe", "result"}),
		dns: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "periscope_monitor_names_resolved_total",
			Help: "Names resolved by the monitor, by result (ok, failed: some question unanswered)."}, []string{"result"}),
		skipped: prometheus.NewCounter(prometheus.CounterOpts{Name: "periscope_monitor_skipped_private_total",
			Help: "Names and addresses not probed because their addresses are not public."}),
		running: prometheus.NewGauge(prometheus.GaugeOpts{Name: "periscope_monitor_scans_running",
			Help: "Active monitoring scans running in this instance."}),
	}
	if reg != nil {
		reg.MustRegister(m.collectors()...)
	}
	return m
}

func (m *metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.scans, m.duration, m.connections, m.dns, m.skipped, m.running}
}
