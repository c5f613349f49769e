package main

import (
	"context"
	"fmt"

	"github.com/periscope-oss/periscope/internal/cli"
	"github.com/periscope-oss/periscope/internal/lease"
	"github.com/periscope-oss/periscope/internal/ratelimit"
	"github.com/periscope-oss/periscope/internal/store"
)

// Redis key prefixes of the shared rate-limit counts.
const (
	redisLimitsPrefix       = "periscope:limit:"
	redisAuthFailuresPrefix = "periscope:authfail:"
)

// setupInstances prepares serve to run beside other instances on one
// database: rate-limit counts in the configured store (Redis shares them)
// and leases that run each background job on one instance at a time.
func setupInstances(ctx context.Context, svc *services) error {
	svc.leases = lease.New(svc.store, lease.Options{TTL: svc.cfg.Instances.LeaseTTL, Log: svc.log})
	if svc.cfg.Instances.RateLimitStore == "memory" {
		return nil
	}
	// The client's own lines (pool errors during an outage) go to our
	// JSON log, rate-limited, not to stderr as plain text.
	ratelimit.SetClientLogger(svc.log)
	url := svc.cfg.Instances.RateLimitStore
	r, err := ratelimit.NewRedis(ctx, url, redisLimitsPrefix)
	if err != nil {
		// One line naming the URL and the flag: the operator's fix is one
		// of the two.
		return fmt.Errorf("--rate-limit-store %s (env PERISCOPE_RATE_LIMIT_STORE): %w; start Redis there, or give --rate-limit-store memory on a single instance", cli.RedactDSN(url), err)
	}
	r.Log = svc.log
	svc.deps.Limits, svc.deps.AuthFailures = r, r.WithPrefix(redisAuthFailuresPrefix)
	svc.closers = append(svc.closers, r.Close)
	return nil
}

// runWorker runs w until ctx is done: on every instance when the worker
// keeps per-process state, else only while this instance holds the
// worker's lease. Its writes wait their turn behind another process's
// long write instead of failing busy (store.Patient).
func (svc *services) runWorker(ctx context.Context, w worker) error {
	ctx = store.Patient(ctx)
	if w.everyInstance {
		return w.run(ctx)
	}
	return svc.leases.Run(ctx, "worker:"+w.name, w.run)
}
