// Package hostingest is the ingest path of the host index: it parses scanner
// outputs (internal/scan), enriches each observation with AS, geo, cloud and
// CDN data (internal/enrich) and stores batches (hoststore.UpsertHosts), one
// transaction per batch, calling an optional observer with the names of
// each stored batch.
package hostingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/periscope-oss/periscope/internal/enrich"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/ledger"
	"github.com/periscope-oss/periscope/internal/scan"
)

// DefaultBatch is how many observations are prepared together (encoded on
// every core, see hoststore.PrepareHosts) and handed to the writer at once.
const DefaultBatch = 20000

// DefaultTxHosts is how many hosts one transaction stores, in several
// batches. Large on purpose: a big index takes inserts at random places,
// and the pages a transaction dirties are written (and checkpointed) once
// per transaction, so 100,000 hosts a transaction write a fifth of the
// pages 20,000 do. The store's writers wait for a transaction to end:
// at about 20,000 hosts/s, up to five seconds.
const DefaultTxHosts = 100000

// Ingester loads scanner outputs into the host index.
type Ingester struct {
	Store *hoststore.Store
	// Enricher, when set, adds AS, geo, cloud and CDN data to every
	// observation before it is stored.
	Enricher *enrich.Enricher
	// Observe, when set, is called with the names of the hosts each stored
	// batch inserted or updated (brand protection watches new names). An
	// error stops the ingest; the batch stays stored.
	Observe func(ctx context.Context, names []string) error
	// Batch is the number of observations prepared together (DefaultBatch
	// when 0).
	Batch int
	// TxHosts is the number of hosts after which a transaction commits
	// (DefaultTxHosts when 0); a transaction holds whole batches.
	TxHosts int
	// Sources describes the in-process sources of IngestHosts to the
	// change ledger, by name; a source not listed removes nothing.
	Sources map[string]ledger.Source
	// KeepPrivate keeps records whose host is a lab-private address
	// (RFC 1918, loopback, link-local, CGNAT, IPv6 unique-local): by
	// default they are skipped and counted (SkippedPrivate), so a lab scan
	// does not put 10.0.0.5 in the internet index. A name that resolves to
	// a private address is kept either way (has_private_ip).
	KeepPrivate bool
}

// SkipPrivate is the skip reason of a record whose host is a private
// address.
const SkipPrivate = "private address"

// cgnat is the shared address space of carrier-grade NAT (RFC 6598).
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// privateHost reports whether the host of a record is an address of a lab
// or a private network, not of the internet.
func privateHost(name string) bool {
	a, err := netip.ParseAddr(name)
	if err != nil {
		return false // a name, or not an address
	}
	a = a.Unmap()
	return a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsUnspecified() || cgnat.Contains(a)
}

// LedgerSource describes an ingest of format f to the change ledger. A
// scanner's output covers the categories it reported values in, and only
// the ports it reported (its command line, which says which ports it
// scanned, is not in the file): so a scan of other ports removes nothing.
// Passive DNS is a history, not a current view, and a native file is an
// import of host documents: neither removes anything.
func LedgerSource(f scan.Format) ledger.Source {
	src := ledger.Source{Name: string(f)}
	if f == scan.PDNS || f == scan.Native {
		src.Covers = []ledger.Category{}
	}
	return src
}

// Summary reports one ingest.
type Summary struct {
	Source    string
	Read      int // input records read
	Skipped   int // well-formed records with nothing to index
	Inserted  int
	Updated   int
	Unchanged int
	Rejected  int
	Rejects   []string // "source:line: reason", the first few
	// SkippedBy counts the skipped records by reason; Skips lists the
	// first of them as "source:line N (byte B): reason".
	SkippedBy map[string]int
	Skips     []string
	// SkippedPrivate counts the records skipped because their host is a
	// private address (Ingester.KeepPrivate); they are in Skipped and in
	// SkippedBy under SkipPrivate too.
	SkippedPrivate int
	Duration       time.Duration
	// Staged counts the posting rows a first load staged and entered
	// into the index at its end, in StageTime (hoststore's stage.go).
	Staged    int64
	StageTime time.Duration
}

// Add adds o's counts to s.
func (s *Summary) Add(o Summary) {
	s.Read += o.Read
	s.Skipped += o.Skipped
	s.SkippedPrivate += o.SkippedPrivate
	s.Inserted += o.Inserted
	s.Updated += o.Updated
	s.Unchanged += o.Unchanged
	s.Rejected += o.Rejected
	s.Rejects = append(s.Rejects, o.Rejects...)
	s.Staged += o.Staged
	s.StageTime += o.StageTime
	for r, n := range o.SkippedBy {
		if s.SkippedBy == nil {
			s.SkippedBy = map[string]int{}
		}
		s.SkippedBy[r] += n
	}
	for _, sk := range o.Skips {
		if len(s.Skips) < scan.MaxSkips {
			s.Skips = append(s.Skips, sk)
		}
	}
	s.Duration += o.Duration
}

// maxRejectLines bounds the reject reasons a Summary keeps.
const maxRejectLines = 100

// Ingest reads r in format f and stores what it holds. progress, when set,
// is called after each committed transaction with the counts so far.
// Transactions committed before an error stay stored; the error names the
// source and position.
//
// Parsing and storing overlap: a writer goroutine stores one batch while
// the parser fills the next (SQLite has one writer; this keeps the other
// cores parsing, enriching and encoding meanwhile).
func (in *Ingester) Ingest(ctx context.Context, f scan.Format, source string, r io.Reader, progress func(Summary)) (Summary, error) {
	start := time.Now()
	p := in.newPipeline(f, source, progress)
	go p.prepare()
	go p.write(ctx)
	stats, err := p.parse(ctx, r)
	err = p.wait(ctx, err)
	sum := p.summary(stats, time.Since(start))
	if err != nil {
		return sum, fmt.Errorf("ingest %s %s: %w", f, source, err)
	}
	return sum, nil
}

// pipeline is one Ingest's three stages: the parser (the caller's
// goroutine) fills batches of enriched observations; the preparer encodes
// each batch (hoststore.PrepareHosts: on every core) while the writer
// stores the one before, in transactions of txHosts hosts.
type pipeline struct {
	in            *Ingester
	f             scan.Format
	source        string
	size, txHosts int
	progress      func(Summary)

	sum     Summary      // the writer's counts; Read and the rejects at the end
	emitted atomic.Int64 // observations parsed so far
	private int          // records skipped for a private host (the parser's)
	batch   []host.Host  // the batch the parser fills

	batches  chan []host.Host
	prepared chan preparedBatch
	// free takes prepared batches' slices back to the parser: a batch of
	// hosts is large, and a new one each time is fresh memory to fault in.
	free     chan []host.Host
	failed   chan struct{} // closed when the writer stops on an error
	done     chan struct{} // closed when the writer returns
	writeErr error
}

// preparedBatch is a batch the preparer encoded, or its error.
type preparedBatch struct {
	b   *hoststore.HostBatch
	err error
}

func (in *Ingester) newPipeline(f scan.Format, source string, progress func(Summary)) *pipeline {
	size := in.Batch
	if size <= 0 {
		size = DefaultBatch
	}
	txHosts := in.TxHosts
	if txHosts <= 0 {
		txHosts = DefaultTxHosts
	}
	return &pipeline{in: in, f: f, source: source, size: size, txHosts: txHosts, progress: progress,
		sum: Summary{Source: source}, batch: make([]host.Host, 0, size),
		batches: make(chan []host.Host, 1), prepared: make(chan preparedBatch, 1), free: make(chan []host.Host, 2),
		failed: make(chan struct{}), done: make(chan struct{})}
}

// prepare is the second stage: it encodes each batch and hands its slice
// back to the parser.
func (p *pipeline) prepare() {
	defer close(p.prepared)
	for batch := range p.batches {
		b, err := p.in.Store.PrepareHosts(batch)
		if b != nil {
			b.Source = LedgerSource(p.f)
		}
		clear(batch) // drop the strings it held
		select {
		case p.free <- batch[:0]:
		default:
		}
		select {
		case p.prepared <- preparedBatch{b, err}:
		case <-p.failed:
			for range p.batches { // let the parser's sends complete
			}
			return
		}
	}
}

// write is the third stage: it keeps a transaction open across batches,
// committing every txHosts hosts and at the end, and reports progress
// after each batch.
func (p *pipeline) write(ctx context.Context) {
	defer close(p.done)
	load := hoststore.NewHostLoad()
	// Into an empty index the posting rows are staged and entered sorted
	// at the end (hoststore's stage.go), also when the load fails or is
	// interrupted: what it stored is then searchable.
	load.StagePostings()
	defer func() {
		if !load.Staged() {
			return
		}
		start := time.Now()
		n, err := p.in.Store.FinishStagedPostings(context.WithoutCancel(ctx))
		if err != nil && p.writeErr == nil {
			p.writeErr = err
		}
		p.sum.Staged, p.sum.StageTime = n, time.Since(start)
	}()
	tx := &txBatches{in: p.in, source: p.source, sum: &p.sum, load: load}
	fail := func(err error) {
		tx.rollback()
		p.writeErr = err
		close(p.failed)
		for range p.prepared { // let the preparer's sends complete
		}
	}
	for batch := range p.prepared {
		err := batch.err
		if err == nil {
			err = tx.add(ctx, batch.b)
		}
		committed := false
		if err == nil && tx.hosts >= p.txHosts {
			err, committed = tx.commit(ctx), true
		}
		if err == nil && p.progress != nil {
			p.report(tx, committed)
		}
		if err != nil {
			fail(err)
			return
		}
	}
	if err := tx.commit(ctx); err != nil {
		fail(err)
	}
}

// report calls progress with the counts so far. Read is final only when
// parsing ends; until then it counts the observations parsed so far.
// Between commits the open transaction's counts are shown with the rest.
func (p *pipeline) report(tx *txBatches, committed bool) {
	p.sum.Read = int(p.emitted.Load())
	s := p.sum
	if !committed {
		s.Inserted += tx.st.Inserted
		s.Updated += tx.st.Updated
		s.Unchanged += tx.st.Unchanged
	}
	p.progress(s)
}

// parse is the first stage: it parses r, enriches each observation and
// sends full batches on. What was read before a parse or read error (a
// file cut off mid-record, a dropped connection) is sent too; not after
// the writer stopped or the ingest was cancelled.
func (p *pipeline) parse(ctx context.Context, r io.Reader) (scan.Stats, error) {
	stats, err := scan.Parse(p.f, r, func(h host.Host) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !p.in.KeepPrivate && privateHost(h.Host) {
			p.private++
			return nil
		}
		p.emitted.Add(1)
		Enrich(p.in.Enricher, &h)
		p.batch = append(p.batch, h)
		if len(p.batch) >= p.size {
			return p.send()
		}
		return nil
	})
	if len(p.batch) > 0 && ctx.Err() == nil && !errors.Is(err, errWriterStopped) {
		if serr := p.send(); err == nil {
			err = serr
		}
	}
	return stats, err
}

// send hands the batch to the preparer and starts the next.
func (p *pipeline) send() error {
	select {
	case p.batches <- p.batch:
	case <-p.failed:
		return errWriterStopped
	}
	select {
	case p.batch = <-p.free:
	default:
		p.batch = make([]host.Host, 0, p.size)
	}
	return nil
}

// wait ends the pipeline and returns its error: the writer's when it
// failed (the parser only stopped), the context's when cancelled (the
// open transaction was rolled back, and whatever the writer or parser
// said after is a consequence), else the parser's.
func (p *pipeline) wait(ctx context.Context, parseErr error) error {
	close(p.batches)
	<-p.done
	err := parseErr
	if p.writeErr != nil {
		err = p.writeErr
	}
	if cerr := ctx.Err(); cerr != nil {
		err = cerr
	}
	return err
}

// summary completes the writer's counts with the parser's.
func (p *pipeline) summary(stats scan.Stats, d time.Duration) Summary {
	sum := p.sum
	sum.Read, sum.Skipped, sum.SkippedBy = stats.Records, stats.Skipped, stats.SkippedBy
	for _, sk := range stats.Skips {
		sum.Skips = append(sum.Skips, p.source+": "+sk.String())
	}
	if p.private > 0 {
		sum.Skipped += p.private
		sum.SkippedPrivate = p.private
		if sum.SkippedBy == nil {
			sum.SkippedBy = map[string]int{}
		}
		sum.SkippedBy[SkipPrivate] += p.private
	}
	sum.Rejected += stats.Rejected
	for _, rj := range stats.Rejects {
		if len(sum.Rejects) < maxRejectLines {
			sum.Rejects = append(sum.Rejects, fmt.Sprintf("%s:%d: %s", p.source, rj.Line, rj.Reason))
		}
	}
	sum.Duration = d
	return sum
}

var errWriterStopped = errors.New("storing stopped")

// txBatches is the writer's open transaction and what its batches did.
type txBatches struct {
	in     *Ingester
	source string
	sum    *Summary
	load   *hoststore.HostLoad // what the ingest's transactions know of each other
	w      *hoststore.HostWriter
	hosts  int
	st     hoststore.HostStats
}

// add stores a batch in the open transaction, beginning one if none is.
func (t *txBatches) add(ctx context.Context, b *hoststore.HostBatch) error {
	if t.w == nil {
		w, err := t.in.Store.BeginHosts(ctx, t.load)
		if err != nil {
			return err
		}
		t.w = w
	}
	st, err := t.w.Upsert(ctx, b)
	if err != nil {
		return err
	}
	t.st.Add(st)
	t.hosts += b.Len()
	return nil
}

// commit commits the open transaction (if any), adds its counts to the
// summary and tells the observer the names it stored.
func (t *txBatches) commit(ctx context.Context) error {
	if t.w == nil {
		return nil
	}
	err := t.w.Commit()
	t.w = nil
	st := t.st
	t.st, t.hosts = hoststore.HostStats{}, 0
	if err != nil {
		return err
	}
	t.sum.Inserted += st.Inserted
	t.sum.Updated += st.Updated
	t.sum.Unchanged += st.Unchanged
	t.sum.Rejected += st.Rejected
	for _, r := range st.Rejects {
		if len(t.sum.Rejects) < maxRejectLines {
			t.sum.Rejects = append(t.sum.Rejects, t.source+": "+r)
		}
	}
	if t.in.Observe != nil && len(st.Names) > 0 {
		if err := t.in.Observe(ctx, st.Names); err != nil {
			return fmt.Errorf("observe stored hosts: %w", err)
		}
	}
	return nil
}

// rollback drops the open transaction, if any.
func (t *txBatches) rollback() {
	if t.w != nil {
		t.w.Rollback()
		t.w = nil
	}
}

// Enrich adds what e knows about h's address to h: AS, organisation and
// location (kept where the observation already has them), cloud provider
// and region, CDN (also from CNAME names when no address is known) and the
// derived tags. A nil e only recognises CDNs by CNAME.
func Enrich(e *enrich.Enricher, h *host.Host) {
	addr, ok := primaryAddr(h)
	if e == nil || !ok {
		if h.CDN == "" {
			for _, c := range h.DNS.CNAME {
				if cdn := enrich.CDNForCNAME(c); cdn != "" {
					h.CDN, h.IsCDN = cdn, true
					h.Tags = append(h.Tags, "cdn", cdn)
					break
				}
			}
		}
		return
	}
	res := e.Enrich(addr, h.DNS.CNAME)
	g, m := res.Geo, &h.IPMetadata
	fill(&m.Organization, g.Organization)
	fill(&m.ISP, g.ISP)
	fill(&m.CountryCode, g.CountryCode)
	fill(&m.CountryName, g.CountryName)
	fill(&m.CityName, g.City)
	fill(&m.Region, g.Region)
	fill(&m.PostalCode, g.PostalCode)
	if m.ASN == 0 {
		m.ASN = g.ASN
	}
	if m.LocationLatitude == 0 && m.LocationLongitude == 0 {
		m.LocationLatitude, m.LocationLongitude = g.Latitude, g.Longitude
	}
	if res.IsCloud {
		fill(&h.Cloud.Provider, res.Provider)
		fill(&h.Cloud.Region, res.Region)
		h.IsCloud = true
	}
	fill(&h.CDN, res.CDN)
	h.IsCDN = h.IsCDN || res.IsCDN
	h.IsCloudflare = h.IsCloudflare || res.IsCloudflare
	h.Tags = append(h.Tags, res.Tags...)
}

func fill(dst *string, v string) {
	if *dst == "" {
		*dst = v
	}
}

// primaryAddr is the address enrichment describes: the host's IP, else its
// first A, else its first AAAA record.
func primaryAddr(h *host.Host) (netip.Addr, bool) {
	for _, s := range append([]string{h.IPAddress}, append(slices.Clone(h.DNS.A), h.DNS.AAAA...)...) {
		if a, err := netip.ParseAddr(s); err == nil {
			return a.Unmap(), true
		}
	}
	return netip.Addr{}, false
}

// Config is the enrichment configuration of the command line.
type Config struct {
	GeoIPCity   string // MMDB with city/country data
	GeoIPASN    string // MMDB with ASN data
	CloudRanges string // directory of provider range files
}

// NewEnricher builds the enricher: the MMDB files (each must exist; a
// missing path is an error naming the flag) and the provider ranges built
// in, replaced by the files of cfg.CloudRanges named as the built-in ones.
func NewEnricher(cfg Config) (*enrich.Enricher, error) {
	for _, p := range []struct{ flag, path string }{{"--geoip-city", cfg.GeoIPCity}, {"--geoip-asn", cfg.GeoIPASN}} {
		if p.path == "" {
			continue
		}
		if _, err := os.Stat(p.path); err != nil {
			return nil, fmt.Errorf("%s %s: %w", p.flag, p.path, errors.Unwrap(err))
		}
	}
	ecfg := enrich.Config{Geo: enrich.GeoPaths{CityDB: cfg.GeoIPCity, ASNDB: cfg.GeoIPASN}}
	if cfg.CloudRanges != "" {
		srcs, err := rangeDir(cfg.CloudRanges)
		if err != nil {
			return nil, err
		}
		ecfg.Ranges = srcs
	}
	e, err := enrich.New(ecfg)
	if err != nil {
		return nil, fmt.Errorf("enrichment: %w", err)
	}
	return e, nil
}

// rangeDir lists the range files of dir, recognised by the names of the
// built-in files (with or without .gz).
func rangeDir(dir string) ([]enrich.RangeSource, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("--cloud-ranges: %w", err)
	}
	known := map[string]enrich.RangeSource{}
	var names []string
	for _, src := range enrich.DefaultRanges() {
		base := strings.TrimSuffix(filepath.Base(src.Path), ".gz")
		known[base] = src
		names = append(names, base)
	}
	var out []enrich.RangeSource
	for _, en := range entries {
		if en.IsDir() || strings.HasPrefix(en.Name(), ".") {
			continue
		}
		src, ok := known[strings.TrimSuffix(en.Name(), ".gz")]
		if !ok {
			return nil, fmt.Errorf("--cloud-ranges: %s is not a known range file (known: %s)",
				filepath.Join(dir, en.Name()), strings.Join(names, ", "))
		}
		src.Path = filepath.Join(dir, en.Name())
		out = append(out, src)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--cloud-ranges: %s holds no range file (known: %s)", dir, strings.Join(names, ", "))
	}
	return out, nil
}
