package api

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/periscope-oss/periscope/internal/vulnstore"
)

// vulnCollector exports the vulnerability-intelligence record counts (at
// most a minute old) and the stored status of the scheduled sync, read
// from the store at scrape time (so a sync run by any process shows).
type vulnCollector struct {
	s                                   *Server
	records, lastSuccess, lastAttempt   *prometheus.Desc
	lastOK, syncRecords, collectorError *prometheus.Desc

	// Counting the tables walks them: the counts are kept for
	// countsTTL so frequent scrapes do not.
	mu       sync.Mutex
	counts   vulnstore.VulnCounts
	countsAt time.Time
}

const countsTTL = time.Minute

// recordCounts returns the stored counts, read again when older than
// countsTTL.
func (c *vulnCollector) recordCounts(ctx context.Context) (vulnstore.VulnCounts, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := c.s.now(); c.countsAt.IsZero() || now.Sub(c.countsAt) >= countsTTL {
		n, err := c.s.vulns.CountVulns(ctx)
		if err != nil {
			return n, err
		}
		c.counts, c.countsAt = n, now
	}
	return c.counts, nil
}

func (s *Server) registerVulnMetrics() {
	if s.vulns == nil {
		return
	}
	s.metrics.registry.MustRegister(&vulnCollector{
		s:              s,
		records:        prometheus.NewDesc("periscope_vuln_records", "Vulnerability-intelligence records stored, by kind.", []string{"kind"}, nil),
		lastSuccess:    prometheus.NewDesc("periscope_vuln_sync_last_success_timestamp_seconds", "When the source last synced successfully (0: never).", []string{"source"}, nil),
		lastAttempt:    prometheus.NewDesc("periscope_vuln_sync_last_attempt_timestamp_seconds", "When the source was last tried.", []string{"source"}, nil),
		lastOK:         prometheus.NewDesc("periscope_vuln_sync_last_run_ok", "1 when the source's last sync succeeded (or was not modified), else 0.", []string{"source"}, nil),
		syncRecords:    prometheus.NewDesc("periscope_vuln_sync_records", "Records read by the source's last successful download.", []string{"source"}, nil),
		collectorError: prometheus.NewDesc("periscope_vuln_metrics_error", "1 when the store could not be read for these metrics.", nil, nil),
	})
}

func (c *vulnCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.records, c.lastSuccess, c.lastAttempt, c.lastOK, c.syncRecords, c.collectorError} {
		ch <- d
	}
}

func (c *vulnCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	failed := 0.0
	if n, err := c.recordCounts(ctx); err == nil {
		for kind, v := range map[string]int{"vulnerabilities": n.Vulnerabilities, "advisories": n.Advisories, "exploits": n.Exploits, "kev": n.KEV, "epss": n.EPSS} {
			ch <- prometheus.MustNewConstMetric(c.records, prometheus.GaugeValue, float64(v), kind)
		}
	} else {
		failed = 1
	}
	if states, err := c.s.vulns.VulnSyncStates(ctx); err == nil {
		for src, st := range states {
			ok := 0.0
			if st.LastError == "" && st.LastSuccess >= st.LastAttempt {
				ok = 1
			}
			ch <- prometheus.MustNewConstMetric(c.lastSuccess, prometheus.GaugeValue, float64(st.LastSuccess), src)
			ch <- prometheus.MustNewConstMetric(c.lastAttempt, prometheus.GaugeValue, float64(st.LastAttempt), src)
			ch <- prometheus.MustNewConstMetric(c.lastOK, prometheus.GaugeValue, ok, src)
			ch <- prometheus.MustNewConstMetric(c.syncRecords, prometheus.GaugeValue, float64(st.Records), src)
		}
	} else {
		failed = 1
	}
	ch <- prometheus.MustNewConstMetric(c.collectorError, prometheus.GaugeValue, failed)
}
