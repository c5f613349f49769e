package main

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/store"
)

// replicaCollector reports each read replica by its position in
// --database-replica (never its URL, which may hold a password).
type replicaCollector struct {
	st                                      *store.Store
	healthy, lag, lagBytes, reads, failures *prometheus.Desc
	primaryReads                            *prometheus.Desc
}

func newReplicaCollector(st *store.Store) *replicaCollector {
	l := []string{"replica"}
	return &replicaCollector{st: st,
		healthy:      prometheus.NewDesc("periscope_db_replica_up", "1 when the read replica answers and is within --replica-max-lag.", l, nil),
		lag:          prometheus.NewDesc("periscope_db_replica_lag_seconds", "How far the read replica's replay is behind the primary, in time.", l, nil),
		lagBytes:     prometheus.NewDesc("periscope_db_replica_lag_bytes", "How far the read replica's replay is behind the primary, in WAL bytes.", l, nil),
		reads:        prometheus.NewDesc("periscope_db_replica_requests_total", "Read-only requests whose reads the replica served.", l, nil),
		failures:     prometheus.NewDesc("periscope_db_replica_failures_total", "Failed health checks and reads of the replica.", l, nil),
		primaryReads: prometheus.NewDesc("periscope_db_replica_fallback_requests_total", "Read-only requests that read from the primary (no replica usable or caught up).", nil, nil),
	}
}

func (c *replicaCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.healthy, c.lag, c.lagBytes, c.reads, c.failures, c.primaryReads} {
		ch <- d
	}
}

func (c *replicaCollector) Collect(ch chan<- prometheus.Metric) {
	stats, primary := c.st.ReplicaStats()
	for _, s := range stats {
		i := strconv.Itoa(s.Index)
		up := 0.0
		if s.Healthy {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(c.healthy, prometheus.GaugeValue, up, i)
		ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, s.Lag.Seconds(), i)
		ch <- prometheus.MustNewConstMetric(c.lagBytes, prometheus.GaugeValue, float64(s.LagBytes), i)
		ch <- prometheus.MustNewConstMetric(c.reads, prometheus.CounterValue, float64(s.Reads), i)
		ch <- prometheus.MustNewConstMetric(c.failures, prometheus.CounterValue, float64(s.Failures), i)
	}
	ch <- prometheus.MustNewConstMetric(c.primaryReads, prometheus.CounterValue, float64(primary))
}

// setupReplicas registers the read replicas' metrics once the server
// exists (the store opened them).
func setupReplicas(svc *services) {
	if len(svc.cfg.Instances.Replicas) == 0 {
		return
	}
	svc.log.Info("read replicas serve read-only requests", "replicas", len(svc.cfg.Instances.Replicas), "max_lag", svc.cfg.Instances.ReplicaMaxLag.String())
	svc.onServer = append(svc.onServer, func(srv *api.Server) error {
		return srv.Registry().Register(newReplicaCollector(svc.store))
	})
}
