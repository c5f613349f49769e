package main

import (
	"context"
	"time"

	"github.com/periscope-oss/periscope/internal/vuln"
	"github.com/periscope-oss/periscope/internal/vulnstore"
	"github.com/periscope-oss/periscope/internal/vulnsync"
)

// setupVulnSync adds the scheduled vulnerability sync to serve's workers
// when --sync-interval is set. Its status is stored and shown in /metrics
// (periscope_vuln_sync_*); /readyz is not gated on upstream feeds, since
// stale data is still served correctly.
func setupVulnSync(ctx context.Context, svc *services) error {
	cfg := svc.cfg
	if cfg.SyncInterval <= 0 {
		return nil
	}
	v := cfg.VulnSync
	sy := &vulnsync.Syncer{
		Store:    vulnstore.New(svc.store),
		Interval: cfg.SyncInterval,
		Log:      svc.log,
		Fetcher: &vuln.Fetcher{Client: feedClient(cfg.Outbound.AllowPrivateTargets, 30*time.Minute), UserAgent: "periscope/" + version,
			MaxRetries: 5, BaseDelay: 5 * time.Second, MaxDelay: 10 * time.Minute},
		Config: vulnsync.Config{KEVURL: v.KEVURL, EPSSURL: v.EPSSURL, ExploitDBURL: v.ExploitDBURL,
			OSVURL: v.OSVURL, OSVEcosystems: v.Ecosystems(), NVDURL: v.NVDURL, NVDAPIKey: cfg.NVDAPIKey},
	}
	if cfg.NVDAPIKey == "" {
		sy.NVDPageDelay = 6 * time.Second // NVD's advice for clients without a key
	}
	svc.workers = append(svc.workers, worker{name: "vuln-sync", run: sy.Run})
	return nil
}
