// Package vulningest loads vulnerability-intelligence feeds into the
// store: it runs the parsers of package vuln over files, directories,
// archives or readers and stores their records in batches, one
// transaction per batch, so a truncated or corrupt input keeps every
// batch stored before the damage and never half-writes one. It is shared
// by `periscope ingest`, the scheduled sync and the demo loader.
package vulningest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/periscope-oss/periscope/internal/vuln"
	"github.com/periscope-oss/periscope/internal/vulnstore"
)

// The kinds of input (docs/ingest.md).
const (
	OSV       = "osv"
	NVD       = "nvd"
	KEV       = "kev"
	EPSS      = "epss"
	ExploitDB = "exploitdb"
)

// Kinds lists the kinds, in the order a full load should run (enrichment
// sources may come before or after NVD; advisories last so their links
// show at once).
var Kinds = []string{NVD, KEV, EPSS, ExploitDB, OSV}

// maxRejects bounds the reasons a Summary keeps.
const maxRejects = 100

// Summary reports one ingestion.
type Summary struct {
	Source    string
	Read      int // records read, rejected ones included
	Inserted  int
	Updated   int
	Unchanged int
	Rejected  int
	// Rejects holds "source: position: id reason" of the first rejections.
	Rejects  []string
	Duration time.Duration
}

// Add adds o to s (Rejects appended up to the bound).
func (s *Summary) Add(o Summary) {
	s.Read += o.Read
	s.Inserted += o.Inserted
	s.Updated += o.Updated
	s.Unchanged += o.Unchanged
	s.Rejected += o.Rejected
	for _, r := range o.Rejects {
		if len(s.Rejects) < maxRejects {
			s.Rejects = append(s.Rejects, r)
		}
	}
	s.Duration += o.Duration
}

func (s *Summary) addStats(st vulnstore.VulnStats) {
	s.Inserted += st.Inserted
	s.Updated += st.Updated
	s.Unchanged += st.Unchanged
}

func (s *Summary) addResult(r vuln.Result) {
	s.Read += r.Records + r.Skipped
	s.Rejected += r.Skipped
	for _, sk := range r.Skips {
		if len(s.Rejects) < maxRejects {
			s.Rejects = append(s.Rejects, sk.String())
		}
	}
}

// Ingester stores feeds.
type Ingester struct {
	Store *vulnstore.Store
	// BatchSize is how many records one transaction stores (default 5000).
	BatchSize int
}

// batcher collects records and stores them a batch at a time. Storing
// runs in its own goroutine, one batch behind the parser, so parsing the
// next batch overlaps with writing the last (in input order: one writer).
type batcher[T any] struct {
	ctx      context.Context
	size     int
	buf      []T
	store    func(context.Context, []T) (vulnstore.VulnStats, error)
	sum      *Summary
	progress func(Summary)
	work     chan []T
	done     chan struct{}
	mu       sync.Mutex
	err      error
}

func newBatcher[T any](ctx context.Context, in *Ingester, sum *Summary, progress func(Summary), fn func(context.Context, []T) (vulnstore.VulnStats, error)) *batcher[T] {
	size := in.BatchSize
	if size <= 0 {
		size = 5000
	}
	b := &batcher[T]{ctx: ctx, size: size, store: fn, sum: sum, progress: progress, work: make(chan []T, 1), done: make(chan struct{})}
	go b.loop()
	return b
}

func (b *batcher[T]) loop() {
	defer close(b.done)
	for batch := range b.work {
		if b.failed() != nil {
			continue // drain: after an error nothing more is stored
		}
		st, err := b.store(b.ctx, batch)
		b.mu.Lock()
		if err != nil {
			b.err = err
		} else {
			b.sum.addStats(st)
		}
		p := *b.sum
		b.mu.Unlock()
		if err == nil && b.progress != nil {
			// The parser's counts come at the end; until then, read is
			// what has been stored.
			p.Read = p.Inserted + p.Updated + p.Unchanged
			b.progress(p)
		}
	}
}

func (b *batcher[T]) failed() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// add queues x; it returns the error of an earlier batch, which stops the
// parser.
func (b *batcher[T]) add(x T) error {
	if err := b.failed(); err != nil {
		return err
	}
	b.buf = append(b.buf, x)
	if len(b.buf) >= b.size {
		b.work <- b.buf
		b.buf = make([]T, 0, b.size)
	}
	return nil
}

// flush stores what is left and waits for the writer; call it once.
func (b *batcher[T]) flush() error {
	if len(b.buf) > 0 {
		b.work <- b.buf
		b.buf = nil
	}
	close(b.work)
	<-b.done
	return b.failed()
}

// IngestPath loads a local file, directory (OSV) or archive (OSV .zip).
func (in *Ingester) IngestPath(ctx context.Context, kind, path string, progress func(Summary)) (Summary, error) {
	if kind == OSV {
		return in.ingestOSVPath(ctx, path, progress)
	}
	f, err := os.Open(path)
	if err != nil {
		return Summary{Source: path}, fmt.Errorf("ingest %s: %w", kind, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return Summary{Source: path}, fmt.Errorf("ingest %s: %s is a directory; give its files", kind, path)
	}
	return in.IngestReader(ctx, kind, path, f, progress)
}

func (in *Ingester) ingestOSVPath(ctx context.Context, path string, progress func(Summary)) (Summary, error) {
	start := time.Now()
	sum := Summary{Source: path}
	b := newBatcher(ctx, in, &sum, progress, in.Store.UpsertAdvisories)
	res, err := vuln.ReadOSV(path, func(a vuln.Advisory) error { return b.add(a) })
	return in.finish(ctx, &sum, res, err, b.flush, start)
}

// finish flushes the last batch, even after a read error (the records
// read before it are valid), and fills in the parser's counts.
func (in *Ingester) finish(ctx context.Context, sum *Summary, res vuln.Result, readErr error, flush func() error, start time.Time) (Summary, error) {
	if ferr := flush(); ferr != nil && readErr == nil {
		readErr = ferr
	}
	sum.addResult(res)
	sum.Duration = time.Since(start)
	if readErr != nil {
		return *sum, fmt.Errorf("ingest %s: %w", sum.Source, readErr)
	}
	return *sum, ctx.Err()
}

// IngestReader loads one document of the kind from r; name labels
// rejections and errors. OSV input must be one JSON record or a zip
// archive, recognised by its magic bytes (it is spooled to a temporary
// file).
func (in *Ingester) IngestReader(ctx context.Context, kind, name string, r io.Reader, progress func(Summary)) (Summary, error) {
	start := time.Now()
	sum := Summary{Source: name}
	switch kind {
	case NVD:
		b := newBatcher(ctx, in, &sum, progress, in.Store.UpsertVulns)
		_, res, err := vuln.ReadNVD(r, name, func(v vuln.Vulnerability) error { return b.add(v) })
		return in.finish(ctx, &sum, res, err, b.flush, start)
	case KEV:
		b := newBatcher(ctx, in, &sum, progress, in.Store.UpsertKEV)
		_, res, err := vuln.ReadKEV(r, name, func(e vuln.KEVEntry) error { return b.add(e) })
		return in.finish(ctx, &sum, res, err, b.flush, start)
	case EPSS:
		b := newBatcher(ctx, in, &sum, progress, in.Store.UpsertEPSS)
		res, err := vuln.ReadEPSS(r, name, func(e vuln.EPSSScore) error { return b.add(e) })
		return in.finish(ctx, &sum, res, err, b.flush, start)
	case ExploitDB:
		b := newBatcher(ctx, in, &sum, progress, in.Store.UpsertExploits)
		res, err := vuln.ReadExploitDB(r, name, func(x vuln.Exploit) error { return b.add(x) })
		return in.finish(ctx, &sum, res, err, b.flush, start)
	case OSV:
		br := bufio.NewReader(r)
		if magic, _ := br.Peek(4); string(magic) == "PK\x03\x04" {
			return in.ingestOSVZip(ctx, name, br, progress)
		}
		r = br
		b := newBatcher(ctx, in, &sum, progress, in.Store.UpsertAdvisories)
		var res vuln.Result
		a, err := vuln.ParseOSV(r)
		if err != nil {
			res = vuln.Result{Skipped: 1, Skips: []vuln.Skip{{Source: name, Pos: "file", ID: a.ID, Reason: err.Error()}}}
		} else {
			res.Records = 1
			err = b.add(a)
		}
		return in.finish(ctx, &sum, res, err, b.flush, start)
	}
	return sum, fmt.Errorf("ingest: unknown kind %q (kinds: %s)", kind, strings.Join(Kinds, ", "))
}

// ingestOSVZip spools an archive from r to a temporary file (zip needs
// random access) and loads it.
func (in *Ingester) ingestOSVZip(ctx context.Context, name string, r io.Reader, progress func(Summary)) (Summary, error) {
	start := time.Now()
	sum := Summary{Source: name}
	f, err := os.CreateTemp("", "periscope-osv-*.zip")
	if err != nil {
		return sum, fmt.Errorf("ingest %s: %w", name, err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	n, err := io.Copy(f, r)
	if err != nil {
		return sum, fmt.Errorf("ingest %s: download: %w", name, err)
	}
	b := newBatcher(ctx, in, &sum, progress, in.Store.UpsertAdvisories)
	res, err := vuln.ReadOSVZipReader(f, n, name, func(a vuln.Advisory) error { return b.add(a) })
	return in.finish(ctx, &sum, res, err, b.flush, start)
}

// sampleDirs maps each kind to its directory in vuln.Samples.
var sampleDirs = map[string][]string{
	NVD: {"testdata/nvd"}, KEV: {"testdata/kev"}, EPSS: {"testdata/epss"},
	ExploitDB: {"testdata/exploitdb"}, OSV: {"testdata/osv/go", "testdata/osv/ghsa"},
}

// IngestSamples loads the recorded samples bundled in the binary
// (vuln.Samples), every kind; loading them again changes nothing.
func (in *Ingester) IngestSamples(ctx context.Context) (map[string]Summary, error) {
	out := map[string]Summary{}
	for _, kind := range Kinds {
		var sum Summary
		for _, dir := range sampleDirs[kind] {
			entries, err := fs.ReadDir(vuln.Samples, dir)
			if err != nil {
				return out, fmt.Errorf("read samples: %w", err)
			}
			for _, e := range entries {
				name := path.Join(dir, e.Name())
				f, err := vuln.Samples.Open(name)
				if err != nil {
					return out, fmt.Errorf("read samples: %w", err)
				}
				s, err := in.IngestReader(ctx, kind, name, f, nil)
				f.Close()
				sum.Add(s)
				if err != nil {
					return out, err
				}
			}
		}
		out[kind] = sum
	}
	return out, nil
}

// IngestNVDAPI loads the CVEs the NVD CVE API 2.0 reports modified
// between start and end (paged, in windows of at most 120 days).
func (in *Ingester) IngestNVDAPI(ctx context.Context, c *vuln.NVDClient, start, end time.Time) (Summary, error) {
	t0 := time.Now()
	sum := Summary{Source: c.BaseURL}
	b := newBatcher(ctx, in, &sum, nil, in.Store.UpsertVulns)
	res, err := c.Sync(ctx, start, end, func(v vuln.Vulnerability) error { return b.add(v) })
	return in.finish(ctx, &sum, res, err, b.flush, t0)
}
