package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/ingestreport"
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
	return func(ctx context.Context, e env, st *store.Store, cfg *config.Config, o ingestOpts, sources []string) error {
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
		total, firstErr := ingestEach(ctx, e, files, vulnCounts, func(src string, wrap func(io.Reader) io.Reader, progress func(vulningest.Summary)) (vulningest.Summary, error) {
			return ingestVulnSource(ctx, o.feeds, in, kind, src, wrap, progress)
		})
		o.report(e, vulnReport(kind, n, total), nil)
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

func ingestVulnSource(ctx context.Context, client *http.Client, in *vulningest.Ingester, kind, src string, wrap func(io.Reader) io.Reader, progress func(vulningest.Summary)) (vulningest.Summary, error) {
	if !isURL(src) {
		fi, err := os.Stat(src)
		if kind == vulningest.OSV || err != nil || fi.IsDir() {
			return in.IngestPath(ctx, kind, src, progress)
		}
		// A file is read here, through wrap, so the progress line
		// knows how much of it is read.
		f, err := os.Open(src)
		if err != nil {
			return vulningest.Summary{Source: src}, fmt.Errorf("ingest %s: %w", kind, err)
		}
		defer f.Close()
		return in.IngestReader(ctx, kind, src, wrap(f), progress)
	}
	f := &vuln.Fetcher{Client: client, UserAgent: "periscope/" + version, MaxRetries: 4}
	resp, err := f.Get(ctx, src, vuln.Validators{}, nil)
	if err != nil {
		return vulningest.Summary{Source: src}, err
	}
	defer resp.Body.Close()
	return in.IngestReader(ctx, kind, src, resp.Body, progress)
}

// vulnReport is the shared summary of a vulnerability-feed ingest.
func vulnReport(kind string, sources int, s vulningest.Summary) ingestreport.Summary {
	r := ingestreport.Summary{Kind: kind, Sources: sources, Read: s.Read, Inserted: s.Inserted, Updated: s.Updated,
		Unchanged: s.Unchanged, Duration: s.Duration}
	r.AddRejects(s.Rejected, s.Rejects)
	return r
}

// vulnCounts is what a progress line shows of a vulnerability ingest.
func vulnCounts(s vulningest.Summary) ingestreport.Summary { return vulnReport("", 0, s) }
