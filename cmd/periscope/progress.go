package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/periscope-oss/periscope/internal/hostingest"
	"github.com/periscope-oss/periscope/internal/vulningest"
)

// ingestCounts is what a progress line shows.
type ingestCounts struct{ read, inserted, updated, unchanged, rejected int }

func hostCounts(s hostingest.Summary) ingestCounts {
	return ingestCounts{s.Read, s.Inserted, s.Updated, s.Unchanged, s.Rejected}
}

func vulnCounts(s vulningest.Summary) ingestCounts {
	return ingestCounts{s.Read, s.Inserted, s.Updated, s.Unchanged, s.Rejected}
}

// progress shows ingest progress on stderr: a line redrawn in place on a
// terminal, a plain line every few seconds otherwise.
type progress struct {
	w     io.Writer
	tty   bool
	start time.Time
	last  time.Time
	drawn bool
}

func newProgress(w io.Writer) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	now := time.Now()
	return &progress{w: w, tty: tty, start: now, last: now}
}

func (p *progress) update(c ingestCounts) {
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
	rate := float64(c.read) / max(el, 1e-9)
	if p.tty {
		spin := `|/-\`[int(el*5)%4]
		fmt.Fprintf(p.w, "\r[%c] read %d  inserted %d  updated %d  unchanged %d  rejected %d  %.0f records/s ",
			spin, c.read, c.inserted, c.updated, c.unchanged, c.rejected, rate)
		p.drawn = true
		return
	}
	fmt.Fprintf(p.w, "progress: read %d inserted %d updated %d unchanged %d rejected %d (%.0f records/s)\n",
		c.read, c.inserted, c.updated, c.unchanged, c.rejected, rate)
}

func (p *progress) done() {
	if p.drawn {
		fmt.Fprintln(p.w)
	}
}

// addableSummary is an ingest summary that adds up (hostingest.Summary,
// vulningest.Summary).
type addableSummary[S any] interface {
	*S
	Add(S)
}

// ingestEach ingests sources one after the other with one progress line
// for all of them. A source that fails is reported on stderr and the others
// go on (batches stored before an error stay stored); the first error is
// returned with the total.
func ingestEach[S any, P addableSummary[S]](ctx context.Context, e env, sources []string, counts func(S) ingestCounts,
	one func(src string, progress func(S)) (S, error)) (S, error) {
	p := newProgress(e.stderr)
	var total S
	err := eachSource(ctx, e.stderr, sources, func(src string) error {
		base := total
		sum, err := one(src, func(s S) {
			b := base
			P(&b).Add(s)
			p.update(counts(b))
		})
		P(&total).Add(sum)
		p.update(counts(total))
		return err
	})
	p.done()
	return total, err
}

// eachSource runs one for each source in turn. A source that fails is
// reported on w and the others go on, unless ctx is done; the first error
// is returned.
func eachSource(ctx context.Context, w io.Writer, sources []string, one func(src string) error) error {
	var firstErr error
	for _, src := range sources {
		if err := one(src); err != nil {
			fmt.Fprintf(w, "\nerror: %v\n", err)
			if firstErr == nil {
				firstErr = err
			}
			if ctx.Err() != nil {
				break
			}
		}
	}
	return firstErr
}
