package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/periscope-oss/periscope/internal/store"
)

// auditPruneInterval is how often audit records past the retention are
// deleted.
const auditPruneInterval = time.Hour

// auditPruner is the worker deleting audit records older than retention:
// once at start, then every interval, until ctx is done. One pass is
// pruneAuditOnce, so a lease (one instance prunes) can wrap it.
func auditPruner(st *store.Store, retention, interval time.Duration, log *slog.Logger) worker {
	return worker{name: "audit-retention", run: func(ctx context.Context) error {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			pruneAuditOnce(ctx, st, retention, log)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
			}
		}
	}}
}

// pruneAuditOnce deletes the records older than retention; a failure is
// logged and retried at the next pass.
func pruneAuditOnce(ctx context.Context, st *store.Store, retention time.Duration, log *slog.Logger) {
	n, err := st.PruneAudit(ctx, st.Now().Add(-retention))
	switch {
	case err != nil && ctx.Err() == nil:
		log.Warn("audit retention: prune failed", "err", err)
	case n > 0:
		log.Info("audit retention: pruned", "records", n, "retention", retention.String())
	}
}
