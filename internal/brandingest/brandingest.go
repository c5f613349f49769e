// Package brandingest is the ingest path of brand protection: it reads
// certificates (PEM or DER files, certstream messages, RFC 6962 logs) and
// zone files, stores the certificates (whose names enter the host index and
// link to the organizations they cover) and matches every name against the
// monitored brands through the brand watcher. It is shared by `periscope ingest`
// and the CT log workers of `periscope serve`; the command line keeps only
// flags and printing.
package brandingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/brandwatch"
	"github.com/periscope-oss/periscope/internal/cert"
	"github.com/periscope-oss/periscope/internal/ct"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hostingest"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/zone"
)

// The input kinds of brand protection (docs/ingest.md), as `periscope ingest`
// names them.
const (
	Certs      = "certs"
	CT         = "ct"
	Certstream = "certstream"
	Zone       = "zone"
)

// Run is one brand ingest: the sink that stores and matches, with its
// running totals. One Run reads any number of sources, one at a time.
type Run struct {
	// Sum counts certificates (names for zone files and domains-only
	// certstream messages).
	Sum hostingest.Summary
	// Hosts counts the names the certificates put into the host index.
	Hosts hoststore.HostStats
	// Links counts new certificate links to organizations.
	Links int
	// Match counts the names matched against the monitored brands.
	Match brandwatch.Result
	// Skips lists text skipped between certificates, with where and why
	// (the first 20).
	Skips []string

	// OnReject, when set, is told every rejected input (serve logs them).
	OnReject func(reason string)
	// Progress, when set, is called with the totals after each stored batch.
	Progress func(hostingest.Summary)
	// HTTPClient reads CT logs; in Periscope it dials through the
	// SSRF-safe dialer (nil: the ct package's default client).
	HTTPClient *http.Client

	mon     *brandwatch.Watcher
	st      *store.Store
	start   time.Time
	certs   []brandstore.SeenCert
	names   []brandwatch.Observation
	hostObs []host.Host // names of domains-only certstream messages
}

// batch is how many certificates are stored together; names, being
// cheaper, go four times as many at once.
const batch = 500

// New returns a run storing into st and matching through mon, whose
// monitored domains the caller has loaded (mon.Reconcile).
func New(mon *brandwatch.Watcher, st *store.Store) *Run {
	return &Run{mon: mon, st: st, start: time.Now()}
}

// Source returns the reader of a kind (Certs, CT, Certstream, Zone), or
// false for an unknown kind.
func (b *Run) Source(kind string) (func(ctx context.Context, src string) error, bool) {
	switch kind {
	case Certs:
		return b.CertFiles, true
	case CT:
		return b.CTLog, true
	case Certstream:
		return b.Certstream, true
	case Zone:
		return b.Zone, true
	}
	return nil, false
}

// Finish records the run's duration in Sum.
func (b *Run) Finish() { b.Sum.Duration = time.Since(b.start) }

func (b *Run) reject(reason string) {
	if b.OnReject != nil {
		b.OnReject(reason)
	}
	b.Sum.Read++
	b.Sum.Rejected++
	if len(b.Sum.Rejects) < 20 {
		b.Sum.Rejects = append(b.Sum.Rejects, reason)
	}
}

func (b *Run) addCert(ctx context.Context, c brandstore.SeenCert) error {
	b.Sum.Read++
	b.certs = append(b.certs, c)
	if len(b.certs) >= batch {
		return b.Flush(ctx)
	}
	return nil
}

func (b *Run) addName(ctx context.Context, o brandwatch.Observation) error {
	b.names = append(b.names, o)
	if len(b.names) >= batch*4 {
		return b.Flush(ctx)
	}
	return nil
}

// Flush stores and matches what is buffered. The readers flush as their
// batches fill; call it after the last source.
func (b *Run) Flush(ctx context.Context) error {
	if len(b.certs) > 0 {
		res, err := b.mon.IngestCerts(ctx, b.certs)
		if err != nil {
			return err
		}
		b.certs = b.certs[:0]
		b.Sum.Inserted += res.Certs.Inserted
		b.Sum.Updated += res.Certs.Updated
		b.Sum.Unchanged += res.Certs.Unchanged
		res.Hosts.Names, res.Hosts.Rejects = nil, nil
		b.Hosts.Add(res.Hosts)
		b.Links += res.Links
		b.Match.Add(res.Match)
	}
	if len(b.hostObs) > 0 {
		st, err := b.mon.Hosts().UpsertHostsFrom(ctx, brandwatch.CertSource, b.hostObs)
		if err != nil {
			return err
		}
		b.hostObs = b.hostObs[:0]
		names := st.Names
		st.Names, st.Rejects = nil, nil
		b.Hosts.Add(st)
		res, err := b.mon.ObserveNames(ctx, names)
		if err != nil {
			return err
		}
		b.Match.Add(res)
	}
	if len(b.names) > 0 {
		res, err := b.mon.Observe(ctx, b.names)
		if err != nil {
			return err
		}
		b.names = b.names[:0]
		b.Match.Add(res)
	}
	b.Finish()
	if b.Progress != nil {
		b.Progress(b.Sum)
	}
	return nil
}

// certReject records input the certificate decoder skipped: text between
// PEM blocks (openssl -text output, garbage) is skipped, not a rejected
// certificate; anything else is.
func (b *Run) certReject(r cert.Reject) {
	if strings.HasPrefix(r.Reason, "skipped ") {
		b.Sum.Skipped++
		if len(b.Skips) < 20 {
			b.Skips = append(b.Skips, r.String())
		}
		return
	}
	b.reject(r.String())
}

// CertFiles reads PEM or DER certificates from a file or a directory.
func (b *Run) CertFiles(ctx context.Context, src string) error {
	emit := func(c cert.Certificate) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return b.addCert(ctx, brandstore.SeenCert{Cert: c, Source: src})
	}
	fi, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	if fi.IsDir() {
		return cert.ReadDir(src, emit, b.certReject)
	}
	return cert.ReadFile(src, emit, b.certReject)
}

// Certstream reads newline-delimited certstream JSON messages from a file
// ("-" for standard input).
func (b *Run) Certstream(ctx context.Context, src string) error {
	var r io.Reader = os.Stdin
	if src != "-" {
		f, err := os.Open(src)
		if err != nil {
			return fmt.Errorf("certstream: %w", err)
		}
		defer f.Close()
		r = f
	}
	return ct.ReadCertstream(r, src, func(u ct.CertstreamUpdate) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		seen := u.Seen.Unix()
		if u.Seen.IsZero() {
			seen = 0
		}
		if u.Cert != nil {
			return b.addCert(ctx, brandstore.SeenCert{Cert: *u.Cert, Seen: seen, Source: u.SourceName})
		}
		// A domains-only message: no certificate to store, but its names
		// enter the host index and are matched.
		b.Sum.Read++
		b.Sum.Skipped++
		for _, d := range u.Domains {
			d, _ := cert.WildcardBase(d)
			b.hostObs = append(b.hostObs, host.Host{Host: d, FirstSeen: seen, LastSeen: seen})
		}
		if len(b.hostObs) >= batch*4 {
			return b.Flush(ctx)
		}
		return nil
	}, b.certReject)
}

// Zone reads the delegations of a zone file (plain or gzip) and matches
// each registered domain against the monitored brands, its name servers
// kept as the finding's DNS answers. The domains are not stored (a TLD zone
// holds millions): only the findings they produce are.
func (b *Run) Zone(ctx context.Context, src string) error {
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("zone: %w", err)
	}
	defer f.Close()
	return zone.Delegations(f, zone.Options{Name: src}, func(d string, ns []string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		b.Sum.Read++
		return b.addName(ctx, brandwatch.Observation{Name: d, DNS: host.DNS{NS: ns}})
	}, func(pe *zone.ParseError) { b.reject(pe.Error()) })
}

// CTLog reads a Certificate Transparency log from its checkpoint up to its
// current tree head, storing the checkpoint with each batch.
func (b *Run) CTLog(ctx context.Context, src string) error {
	c, err := ct.NewClient(src, ct.Options{HTTPClient: b.HTTPClient})
	if err != nil {
		return fmt.Errorf("ct: %w", err)
	}
	return b.Follow(ctx, &ct.Follower{Client: c})
}

// Follow runs a follower whose checkpoint flushes the buffered certificates
// before it is saved, so a restart never skips an entry that was not stored.
func (b *Run) Follow(ctx context.Context, f *ct.Follower) error {
	cp := checkpointFuncs{
		load: func(log string) (int64, error) { return brandstore.New(b.st).CTCheckpoint(ctx, log) },
		save: func(log string, next int64) error {
			if err := b.Flush(ctx); err != nil {
				return err
			}
			return brandstore.New(b.st).SaveCTCheckpoint(ctx, log, next)
		},
	}
	err := f.Run(ctx, cp, func(e ct.Entry) error {
		if e.Err != nil {
			b.reject(fmt.Sprintf("%s: entry %d: %v", f.Client.URL(), e.Index, e.Err))
			return nil
		}
		return b.addCert(ctx, brandstore.SeenCert{Cert: e.Cert, Seen: e.Timestamp.Unix(), Source: f.Client.URL()})
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("ct %s: %w", f.Client.URL(), err)
	}
	return err
}

// checkpointFuncs adapts the store's CT checkpoints to ct.Checkpoint.
type checkpointFuncs struct {
	load func(log string) (int64, error)
	save func(log string, next int64) error
}

func (c checkpointFuncs) Load(log string) (int64, error)    { return c.load(log) }
func (c checkpointFuncs) Save(log string, next int64) error { return c.save(log, next) }
