package main

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/periscope-oss/periscope/internal/darkwebstore"
)

// darkwebCollector exports the dark-web store's status (darkwebstore.Status),
// read at scrape time, so an ingest run by another process shows.
type darkwebCollector struct {
	dw                                    *darkwebstore.Store
	staged, headsBehind, headRecords, bad *prometheus.Desc
}

func newDarkwebCollector(dw *darkwebstore.Store) *darkwebCollector {
	return &darkwebCollector{
		dw:          dw,
		staged:      prometheus.NewDesc("periscope_darkweb_staged_records", "Dark-web records stored but not yet in the blind indexes (an ingest under way or interrupted), counted up to 1,000,000.", nil, nil),
		headsBehind: prometheus.NewDesc("periscope_darkweb_heads_behind_records", "Dark-web record numbers past the answer heads' last complete pass (0: current).", nil, nil),
		headRecords: prometheus.NewDesc("periscope_darkweb_head_answer_records_total", "Dark-web search answer records this process read from answer heads.", nil, nil),
		bad:         prometheus.NewDesc("periscope_darkweb_metrics_error", "1 when the store could not be read for these metrics.", nil, nil),
	}
}

func (c *darkwebCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.staged, c.headsBehind, c.headRecords, c.bad} {
		ch <- d
	}
}

func (c *darkwebCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := c.dw.Status(ctx)
	failed := 0.0
	if err != nil {
		failed = 1
	} else {
		ch <- prometheus.MustNewConstMetric(c.staged, prometheus.GaugeValue, float64(st.Staged))
		ch <- prometheus.MustNewConstMetric(c.headsBehind, prometheus.GaugeValue, float64(st.HeadsBehind))
	}
	ch <- prometheus.MustNewConstMetric(c.headRecords, prometheus.CounterValue, float64(st.HeadRecords))
	ch <- prometheus.MustNewConstMetric(c.bad, prometheus.GaugeValue, failed)
}
