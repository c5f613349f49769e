package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/term"

	"github.com/periscope-oss/periscope/internal/ingestreport"
)

// progress shows ingest progress on stderr: a line redrawn in place on a
// terminal, a plain line every few seconds otherwise. When the size of the
// input is known (local files) it shows the share read and the time left;
// otherwise (URLs, stdin, CT logs) the throughput alone.
type progress struct {
	w     io.Writer
	tty   bool
	start time.Time
	last  time.Time
	drawn bool
	total int64        // bytes of input, 0 when unknown
	read  atomic.Int64 // bytes read so far
	now   func() time.Time
}

func newProgress(w io.Writer, totalBytes int64) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	now := time.Now()
	return &progress{w: w, tty: tty, start: now, last: now, total: totalBytes, now: time.Now}
}

// inputSize is the total size of the local files among sources, or 0 when
// any source is not a local regular file (a URL, stdin, a directory read
// whole), whose size is unknown.
func inputSize(sources []string) int64 {
	var n int64
	for _, s := range sources {
		fi, err := os.Stat(s)
		if err != nil || !fi.Mode().IsRegular() {
			return 0
		}
		n += fi.Size()
	}
	return n
}

// counting returns r counting the bytes read into p.
func (p *progress) counting(r io.Reader) io.Reader { return &countingReader{r: r, n: &p.read} }

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n.Add(int64(n))
	return n, err
}

func (p *progress) update(s ingestreport.Summary) {
	now := p.now()
	every := 5 * time.Second
	if p.tty {
		every = 200 * time.Millisecond
	}
	if now.Sub(p.last) < every {
		return
	}
	p.last = now
	line := p.line(s, now)
	if p.tty {
		fmt.Fprintf(p.w, "\r%s ", line)
		p.drawn = true
		return
	}
	fmt.Fprintf(p.w, "progress: %s\n", line)
}

// line is the progress text: counts and throughput, with the share read
// and the time left when the input size is known.
func (p *progress) line(s ingestreport.Summary, now time.Time) string {
	el := now.Sub(p.start)
	var b strings.Builder
	if read := p.read.Load(); p.total > 0 && read > 0 {
		frac := min(float64(read)/float64(p.total), 1)
		left := time.Duration(float64(el) * (1 - frac) / frac).Round(time.Second)
		fmt.Fprintf(&b, "%3.0f%% ETA %s  ", frac*100, left)
	}
	fmt.Fprintf(&b, "read %d  stored %d  unchanged %d  skipped %d  rejected %d  %.0f records/s",
		s.Read, s.Stored(), s.Unchanged, s.Skipped, s.Rejected, float64(s.Read)/max(el.Seconds(), 1e-9))
	return b.String()
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
// for all of them. one reads its source through wrap (which counts the
// bytes for the progress line) when it opens it itself. A source that
// fails is reported on stderr and the others go on (batches stored before
// an error stay stored); the first error is returned with the total.
func ingestEach[S any, P addableSummary[S]](ctx context.Context, e env, sources []string, counts func(S) ingestreport.Summary,
	one func(src string, wrap func(io.Reader) io.Reader, progress func(S)) (S, error)) (S, error) {
	p := newProgress(e.stderr, inputSize(sources))
	var total S
	err := eachSource(ctx, e.stderr, sources, func(src string) error {
		base := total
		sum, err := one(src, p.counting, func(s S) {
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
