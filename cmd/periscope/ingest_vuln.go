package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/vuln"
	"github.com/periscope-oss/periscope/internal/vulningest"
	"github.com/periscope-oss/periscope/internal/vulnstore"
)

// addVulnIngesters registers the vulnerability-intelligence kinds (docs/ingest.md).
func addVulnIngesters(m map[string]ingester) {
	for _, k := range vulningest.Kinds {
		m[k] = ingestVulnAs(k)
	}
}

func ingestVulnAs(kind string) ingester {
	return func(ctx context.Context, e env, st *store.Store, cfg *config.Config, sources []string) error {
		in := &vulningest.Ingester{Store: vulnstore.New(st)}
		var files []string
		for _, src := range sources {
			if kind == vulningest.OSV || isURL(src) {
				files = append(files, src) // OSV directories are read whole
				continue
			}
			paths, err := expandSources([]string{src})
			if err != nil {
				return err
			}
			files = append(files, paths...)
		}
		n := len(files)
		total, firstErr := ingestEach(ctx, e, files, vulnCounts, func(src string, progress func(vulningest.Summary)) (vulningest.Summary, error) {
			return ingestVulnSource(ctx, in, kind, src, progress)
		})
		printVulnSummary(e.stdout, kind, n, total)
		if total.Inserted+total.Updated > 0 {
			if err := vulnstore.New(st).OptimizeVulns(ctx); err != nil && firstErr == nil {
				firstErr = err
			}
		}
		return firstErr
	}
}

func isURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

func ingestVulnSource(ctx context.Context, in *vulningest.Ingester, kind, src string, progress func(vulningest.Summary)) (vulningest.Summary, error) {
	if !isURL(src) {
		return in.IngestPath(ctx, kind, src, progress)
	}
	f := &vuln.Fetcher{Client: &http.Client{Timeout: 30 * time.Minute}, UserAgent: "periscope/" + version, MaxRetries: 4}
	resp, err := f.Get(ctx, src, vuln.Validators{}, nil)
	if err != nil {
		return vulningest.Summary{Source: src}, err
	}
	defer resp.Body.Close()
	return in.IngestReader(ctx, kind, src, resp.Body, progress)
}

func printVulnSummary(w io.Writer, kind string, sources int, s vulningest.Summary) {
	secs := s.Duration.Seconds()
	fmt.Fprintf(w, "%s: %d source(s): read %d, inserted %d, updated %d, unchanged %d, rejected %d in %s (%.0f records/s)\n",
		kind, sources, s.Read, s.Inserted, s.Updated, s.Unchanged, s.Rejected,
		s.Duration.Round(time.Millisecond), float64(s.Read)/max(secs, 1e-9))
	for _, r := range s.Rejects {
		fmt.Fprintf(w, "  rejected %s\n", r)
	}
	if s.Rejected > len(s.Rejects) {
		fmt.Fprintf(w, "  ... and %d more rejected\n", s.Rejected-len(s.Rejects))
	}
}
