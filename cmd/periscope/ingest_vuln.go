package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/vuln"
	"github.com/periscope-oss/periscope/internal/vulningest"
)

// addVulnIngesters registers the vulnerability-intelligence kinds (API.md §5).
func addVulnIngesters(m map[string]ingester) {
	for _, k := range vulningest.Kinds {
		m[k] = ingestVulnAs(k)
	}
}

func ingestVulnAs(kind string) ingester {
	return func(ctx context.Context, e env, st *store.Store, cfg *config.Config, sources []string) error {
		in := &vulningest.Ingester{Store: st}
		p := newVulnProgress(e.stderr)
		var total vulningest.Summary
		var firstErr error
		n := 0
		for _, src := range sources {
			paths := []string{src}
			if kind != vulningest.OSV && !isURL(src) {
				var err error
				if paths, err = expandHostSources([]string{src}); err != nil {
					return err
				}
			}
			for _, path := range paths {
				n++
				base := total
				sum, err := ingestVulnSource(ctx, in, kind, path, func(s vulningest.Summary) {
					b := base
					b.Add(s)
					p.update(b)
				})
				total.Add(sum)
				p.update(total)
				if err != nil {
					// Batches stored before the error stay stored; go on
					// with the other sources and report the error at the end.
					fmt.Fprintf(e.stderr, "\nerror: %v\n", err)
					if firstErr == nil {
						firstErr = err
					}
					if ctx.Err() != nil {
						break
					}
				}
			}
		}
		p.done()
		printVulnSummary(e.stdout, kind, n, total)
		if total.Inserted+total.Updated > 0 {
			if err := st.OptimizeVulns(ctx); err != nil && firstErr == nil {
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

// vulnProgress shows ingest progress on stderr: a line redrawn in place
// on a terminal, a plain line every few seconds otherwise.
type vulnProgress struct {
	w     io.Writer
	tty   bool
	start time.Time
	last  time.Time
	drawn bool
}

func newVulnProgress(w io.Writer) *vulnProgress {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	now := time.Now()
	return &vulnProgress{w: w, tty: tty, start: now, last: now}
}

func (p *vulnProgress) update(s vulningest.Summary) {
	now := time.Now()
	every := 5 * time.Second
	if p.tty {
		every = 200 * time.Millisecond
	}
	if now.Sub(p.last) < every {
		return
	}
	p.last = now
	el := now.Sub(p.start).Seconds()
	rate := float64(s.Read) / max(el, 1e-9)
	if p.tty {
		spin := `|/-\`[int(el*5)%4]
		fmt.Fprintf(p.w, "\r[%c] read %d  inserted %d  updated %d  unchanged %d  rejected %d  %.0f records/s ",
			spin, s.Read, s.Inserted, s.Updated, s.Unchanged, s.Rejected, rate)
		p.drawn = true
		return
	}
	fmt.Fprintf(p.w, "progress: read %d inserted %d updated %d unchanged %d rejected %d (%.0f records/s)\n",
		s.Read, s.Inserted, s.Updated, s.Unchanged, s.Rejected, rate)
}

func (p *vulnProgress) done() {
	if p.drawn {
		fmt.Fprintln(p.w)
	}
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
