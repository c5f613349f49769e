package main

import (
	"context"
	"fmt"

	"github.com/periscope-oss/periscope/internal/vulningest"
	"github.com/periscope-oss/periscope/internal/vulnstore"
)

// loadVulnDemo loads the bundled real feed samples (vuln.Samples):
// 1,404 KEV entries, 68 NVD CVE records, EPSS scores, exploits and
// 67 OSV advisories from the Go and GitHub databases. Their dates are
// real, so most are older than the feed's 7-day window: look them up
// with keywords=CVE-… or the searches.
func loadVulnDemo(ctx context.Context, svc *services) error {
	in := &vulningest.Ingester{Store: vulnstore.New(svc.store)}
	sums, err := in.IngestSamples(ctx)
	if err != nil {
		return fmt.Errorf("load vulnerability samples: %w", err)
	}
	if err := vulnstore.New(svc.store).OptimizeVulns(ctx); err != nil {
		return err
	}
	for _, k := range vulningest.Kinds {
		s := sums[k]
		svc.log.Info("demo vulnerability data", "kind", k, "read", s.Read, "inserted", s.Inserted, "unchanged", s.Unchanged, "rejected", s.Rejected)
	}
	return nil
}
