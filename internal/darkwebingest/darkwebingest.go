// Package darkwebingest is the ingest path of the dark-web store: it parses
// breach files of every layout (internal/darkweb), cleans the records on
// every core and stores them in batches (darkwebstore), counting what was
// read, added, already stored and rejected. It is shared by
// `periscope ingest <dark-web kind>` and the demo; progress is handed in.
package darkwebingest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"

	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/darkwebstore"
)

// Kinds are the ingest kinds of the dark web (docs/ingest.md).
var Kinds = []string{"combolist", "breach-csv", "dehashed", "stealer", "breaches"}

// IsKind reports whether kind is a dark-web ingest kind.
func IsKind(kind string) bool { return slices.Contains(Kinds, kind) }

// Batch is how many records one transaction stores.
const Batch = 5000

// maxRejects bounds the reject reasons a Summary keeps.
const maxRejects = 20

// Summary counts a dark-web ingest.
type Summary struct {
	Read, Added, Duplicates, Rejected, Breaches int
	// Incomplete counts sources cut short (their complete records stored).
	Incomplete int
	Rejects    []string // the first few reasons
}

func (s *Summary) reject(r string) {
	s.Rejected++
	if len(s.Rejects) < maxRejects {
		s.Rejects = append(s.Rejects, r)
	}
}

// Run feeds parsed records to the store in batches. A Run is used by one
// goroutine.
type Run struct {
	dw   *darkwebstore.Store
	load *darkwebstore.Loader // when set, batches go through it (one held connection)
	norm darkweb.Normalizer
	sum  Summary
	// progress, when set, is called after each stored batch.
	progress func(Summary)
	// parsed holds what the parser gave since the last batch, in order:
	// records (cleaned together on every core when the batch is full) and
	// the parser's rejects between them.
	parsed []parsedRecord
	batch  []darkweb.Record
}

// parsedRecord is a parsed record and its number in the run, or a
// parser's reject (reject set).
type parsedRecord struct {
	rec    darkweb.Record
	n      int
	err    error
	reject string
}

// New returns a run storing into dw, each batch in a transaction of its
// own (the demo's small loads).
func New(dw *darkwebstore.Store) *Run {
	return &Run{dw: dw, norm: dw.Normalizer()}
}

// NewLoading returns a run storing through load (one held connection, the
// index built in bulk by Build). progress, when set, is called with the
// counts so far after each stored batch.
func NewLoading(dw *darkwebstore.Store, load *darkwebstore.Loader, progress func(Summary)) *Run {
	return &Run{dw: dw, load: load, norm: dw.Normalizer(), progress: progress}
}

// Summary returns the counts so far.
func (r *Run) Summary() Summary { return r.sum }

// Source parses one file or folder of the kind and stores its records. A
// source cut short returns an error wrapping darkweb.ErrIncomplete, its
// complete records stored; any other error stores nothing of the source's
// last batch.
func (r *Run) Source(ctx context.Context, kind, src string, o darkweb.Options) error {
	o.File = src
	if kind == "stealer" {
		fi, err := os.Stat(src)
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s: a stealer log is a folder", src)
		}
		return r.finish(ctx, darkweb.ParseStealer(src, o, r.sink(ctx)))
	}
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	switch kind {
	case "combolist":
		err = darkweb.ParseCombolist(f, o, r.sink(ctx))
	case "breach-csv":
		err = darkweb.ParseCSV(f, o, r.sink(ctx))
	case "dehashed":
		err = darkweb.ParseDeHashed(f, o, r.sink(ctx))
	case "breaches":
		return darkweb.ParseBreaches(f, o, func(b darkweb.BreachInfo) error {
			r.sum.Read++
			r.sum.Breaches++
			return r.dw.PutBreach(ctx, b)
		}, func(rj darkweb.Reject) { r.sum.Read++; r.sum.reject(rj.String()) })
	default:
		return fmt.Errorf("unknown dark-web kind %q", kind)
	}
	return r.finish(ctx, err)
}

// Build ends a loading run: the loader indexes the stored records in bulk
// and finds those already stored, which move from added to duplicates
// (docs/ingest.md "Dark-web breach data").
func (r *Run) Build(ctx context.Context) error {
	if r.load == nil {
		return nil
	}
	dups, err := r.load.Flush(ctx)
	r.sum.Added -= dups
	r.sum.Duplicates += dups
	return err
}

func (r *Run) sink(ctx context.Context) darkweb.Sink {
	return darkweb.Sink{
		Record: func(rec darkweb.Record) error {
			r.sum.Read++
			r.parsed = append(r.parsed, parsedRecord{rec: rec, n: r.sum.Read})
			if len(r.parsed) >= Batch {
				return r.flush(ctx)
			}
			return nil
		},
		Reject: func(rj darkweb.Reject) {
			r.sum.Read++
			r.parsed = append(r.parsed, parsedRecord{n: r.sum.Read, reject: rj.String()})
		},
	}
}

// clean normalises the parsed records on every core (libphonenumber and
// the other normalisers were a fifth of a single-threaded ingest's CPU)
// and moves them to the batch, counting rejects in the parser's order.
func (r *Run) clean() {
	workers := min(runtime.GOMAXPROCS(0), max(1, len(r.parsed)/256))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(r.parsed); i += workers {
				if p := &r.parsed[i]; p.reject == "" {
					p.err = r.norm.Clean(&p.rec)
				}
			}
		}()
	}
	wg.Wait()
	for i := range r.parsed {
		p := &r.parsed[i]
		switch {
		case p.reject != "":
			r.sum.reject(p.reject)
		case p.err != nil:
			r.sum.reject(fmt.Sprintf("record %d: %v", p.n, p.err))
		default:
			r.batch = append(r.batch, p.rec)
		}
	}
	clear(r.parsed)
	r.parsed = r.parsed[:0]
}

// flush cleans what was parsed and stores the batch.
func (r *Run) flush(ctx context.Context) error {
	r.clean()
	if len(r.batch) == 0 {
		return nil
	}
	var res darkwebstore.AddResult
	var err error
	if r.load != nil {
		res, err = r.load.Add(ctx, r.batch)
	} else {
		res, err = r.dw.Add(ctx, r.batch)
	}
	clear(r.batch)
	r.batch = r.batch[:0]
	if err != nil {
		return err
	}
	r.sum.Added += res.Added
	r.sum.Duplicates += res.Duplicates
	if r.progress != nil {
		r.progress(r.sum)
	}
	return nil
}

// finish ends a source with the parser's error: the batch is stored when
// the parse ended cleanly or in a cut-short file (the complete records
// before the cut), and dropped on any other error (refusals come before
// the first record, and a failed store must not be half-retried).
func (r *Run) finish(ctx context.Context, err error) error {
	if err != nil && !errors.Is(err, darkweb.ErrIncomplete) {
		r.clean() // the rejects are counted; the records are dropped
		r.batch = r.batch[:0]
		return err
	}
	if ferr := r.flush(ctx); ferr != nil {
		return ferr
	}
	if err != nil {
		r.sum.Incomplete++
	}
	return err
}
