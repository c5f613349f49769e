package main

import (
	"context"
	"fmt"
	"time"

	"github.com/periscope-oss/periscope/internal/brandingest"
	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/brandwatch"
	"github.com/periscope-oss/periscope/internal/ct"
	"github.com/periscope-oss/periscope/internal/wire"
)

// setupBrand adds brand protection to serve: the monitor (behind the OEM
// searches, nudged by the API when organizations' domains change, and run
// as a worker) and one worker per configured CT log.
func setupBrand(svc *services) error {
	if err := svc.brand.validate(); err != nil {
		return err
	}
	opts, err := svc.brand.brandOptions()
	if err != nil {
		return fmt.Errorf("brand protection: %w", err)
	}
	opts.Workers = svc.cfg.Instances.BrandWorkers
	// Every instance keeps its own matcher current (brandwatch); the
	// backfills, shared work, run on one instance (brand-backfill).
	mon := brandwatch.New(svc.store, wire.Hosts(svc.store, svc.ledger), brandstore.New(svc.store), brandwatch.Options{Brand: opts, Poll: svc.brand.Poll, Log: svc.log, DeferBackfills: true})
	svc.brandWatch, svc.deps.Brand = mon, mon
	svc.deps.AssetsChanged = mon.Notify
	if svc.hosts != nil {
		// Hosts stored by serve (the demo) are matched like ingested ones.
		svc.hosts.Observe = func(ctx context.Context, names []string) error {
			_, err := mon.ObserveNames(ctx, names)
			return err
		}
	}
	svc.workers = append(svc.workers, worker{name: "brandwatch", run: mon.Run, everyInstance: true},
		worker{name: "brand-backfill", run: mon.RunBackfills})
	for _, u := range ctLogs(svc.brand.CTLogs) {
		c, err := ct.NewClient(u, ct.Options{HTTPClient: feedClient(svc.cfg.Outbound.AllowPrivateTargets, time.Minute)})
		if err != nil {
			return fmt.Errorf("--ct-logs: %w", err)
		}
		f := &ct.Follower{Client: c, Poll: svc.brand.CTPoll}
		b := brandingest.New(mon, svc.store)
		b.OnReject = func(reason string) { svc.log.Warn("ct entry skipped", "log", c.URL(), "reason", reason) }
		svc.workers = append(svc.workers, worker{name: "ct " + c.URL(), run: func(ctx context.Context) error {
			// The follower retries the log's transient errors itself; when
			// it gives up, wait a poll interval and resume from the
			// checkpoint, until serve stops.
			for {
				err := b.Follow(ctx, f)
				if ctx.Err() != nil {
					return ctx.Err()
				}
				svc.log.Error("ct log follower stopped; resuming from its checkpoint", "log", c.URL(), "err", err)
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(svc.brand.CTPoll):
				}
			}
		}})
	}
	return nil
}
