package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/brand"
	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/cert"
	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/ct"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hostingest"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/monitor"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/zone"
)

// brandConfig is the configuration of brand protection: the typosquatting
// word lists, the CT logs serve follows and the polling intervals.
type brandConfig struct {
	Dictionary string        // dictionary fuzzer word list (dnstwist format)
	TLDs       string        // tld-swap suffix list (dnstwist format)
	CTLogs     string        // comma-separated RFC 6962 log URLs serve follows
	CTPoll     time.Duration // wait between get-sth calls once caught up
	Poll       time.Duration // how often the monitor re-reads organizations' domains
}

// registerBrandFlags adds brand protection's flags, with environment
// fallbacks, to serve's flag set. An environment value that is not a
// positive duration is an error naming the variable.
func registerBrandFlags(fs *flag.FlagSet, getenv config.Getenv) (*brandConfig, error) {
	c := &brandConfig{}
	env := func(name string) string { return getenv(name) }
	var bad error
	dur := func(name string, def time.Duration) time.Duration {
		v := getenv(name)
		if v == "" {
			return def
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			bad = fmt.Errorf("%s must be a positive duration such as 30s (got %q)", name, v)
			return def
		}
		return d
	}
	fs.StringVar(&c.Dictionary, "brand-dictionary", env("PERISCOPE_BRAND_DICTIONARY"), "word list for the dictionary typosquatting fuzzer (env PERISCOPE_BRAND_DICTIONARY)")
	fs.StringVar(&c.TLDs, "brand-tlds", env("PERISCOPE_BRAND_TLDS"), "suffix list for the tld-swap typosquatting fuzzer (env PERISCOPE_BRAND_TLDS)")
	fs.StringVar(&c.CTLogs, "ct-logs", env("PERISCOPE_CT_LOGS"), "comma-separated Certificate Transparency log URLs to follow (env PERISCOPE_CT_LOGS)")
	fs.DurationVar(&c.CTPoll, "ct-poll", dur("PERISCOPE_CT_POLL", time.Minute), "wait between tree-head polls of a caught-up CT log (env PERISCOPE_CT_POLL)")
	fs.DurationVar(&c.Poll, "brand-poll", dur("PERISCOPE_BRAND_POLL", 30*time.Second), "how often the brand monitor re-reads organizations' domains (env PERISCOPE_BRAND_POLL)")
	return c, bad
}

// validate checks the parsed flags.
func (c *brandConfig) validate() error {
	if c.CTPoll <= 0 {
		return fmt.Errorf("--ct-poll must be positive (got %s)", c.CTPoll)
	}
	if c.Poll <= 0 {
		return fmt.Errorf("--brand-poll must be positive (got %s)", c.Poll)
	}
	return nil
}

// brandOptions reads the word lists of c.
func (c *brandConfig) brandOptions() (brand.Options, error) {
	var o brand.Options
	read := readWordList
	var err error
	if o.Typo.Dictionary, err = read(c.Dictionary, "brand-dictionary"); err != nil {
		return o, err
	}
	if o.Typo.TLDs, err = read(c.TLDs, "brand-tlds"); err != nil {
		return o, err
	}
	return o, nil
}

// newMonitor builds the brand monitor of a command.
func newMonitor(c *brandConfig, st *store.Store, log *slog.Logger) (*monitor.Monitor, error) {
	o, err := c.brandOptions()
	if err != nil {
		return nil, err
	}
	return monitor.New(st, hoststore.New(st), brandstore.New(st), monitor.Options{Brand: o, Poll: c.Poll, Log: log}), nil
}

// brandConfigFromEnv is the configuration of `ingest`, which takes the
// word lists from the environment only.
func brandConfigFromEnv(getenv config.Getenv) *brandConfig {
	return &brandConfig{Dictionary: getenv("PERISCOPE_BRAND_DICTIONARY"), TLDs: getenv("PERISCOPE_BRAND_TLDS")}
}

// addBrandIngesters registers the kinds of brand protection (README.md "Command line").
func addBrandIngesters(m map[string]ingester) {
	m["certs"] = brandIngester("certs", ingestCertFiles)
	m["ct"] = brandIngester("ct", ingestCTLog)
	m["certstream"] = brandIngester("certstream", ingestCertstream)
	m["zone"] = brandIngester("zone", ingestZone)
}

// brandRun is one brand ingest: the sink that stores and matches, with its
// running totals.
type brandRun struct {
	mon     *monitor.Monitor
	st      *store.Store
	prog    *progress
	start   time.Time
	sum     hostingest.Summary // certificates (names for zone and domain-only streams)
	hosts   hoststore.HostStats
	links   int
	match   monitor.Result
	certs   []brandstore.SeenCert
	names   []monitor.Observation
	hostObs []host.Host // names of domains-only certstream messages
	skips   []string    // text skipped between certificates, with where and why
	// onReject, when set, is told every rejected input (serve logs them).
	onReject func(reason string)
}

const brandBatch = 500

func newBrandRun(mon *monitor.Monitor, st *store.Store, progress io.Writer) *brandRun {
	return &brandRun{mon: mon, st: st, prog: newProgress(progress), start: time.Now()}
}

func brandIngester(kind string, source func(ctx context.Context, b *brandRun, src string) error) ingester {
	return func(ctx context.Context, e env, st *store.Store, cfg *config.Config, sources []string) error {
		mon, err := newMonitor(brandConfigFromEnv(e.getenv), st, nil)
		if err != nil {
			return fmt.Errorf("ingest %s: %w", kind, err)
		}
		if err := mon.Reconcile(ctx); err != nil {
			return fmt.Errorf("ingest %s: load monitored domains: %w", kind, err)
		}
		b := newBrandRun(mon, st, e.stderr)
		firstErr := eachSource(ctx, e.stderr, sources, func(src string) error {
			err := source(ctx, b, src)
			if err == nil {
				err = b.flush(ctx)
			}
			return err
		})
		b.prog.done()
		b.sum.Duration = time.Since(b.start)
		printBrandSummary(e.stdout, kind, len(sources), b)
		fmt.Fprintf(e.stdout, "  host index: %d names inserted, %d updated, %d unchanged, %d rejected; %d new certificate links to organizations\n",
			b.hosts.Inserted, b.hosts.Updated, b.hosts.Unchanged, b.hosts.Rejected, b.links)
		fmt.Fprintf(e.stdout, "  brand monitor (%d monitored domains): %d names matched, %d new findings, %d updated\n",
			len(mon.Brands()), b.match.Matched, b.match.Inserted, b.match.Updated)
		return firstErr
	}
}

func (b *brandRun) reject(reason string) {
	if b.onReject != nil {
		b.onReject(reason)
	}
	b.sum.Read++
	b.sum.Rejected++
	if len(b.sum.Rejects) < 20 {
		b.sum.Rejects = append(b.sum.Rejects, reason)
	}
}

func (b *brandRun) addCert(ctx context.Context, c brandstore.SeenCert) error {
	b.sum.Read++
	b.certs = append(b.certs, c)
	if len(b.certs) >= brandBatch {
		return b.flush(ctx)
	}
	return nil
}

func (b *brandRun) addName(ctx context.Context, o monitor.Observation) error {
	b.names = append(b.names, o)
	if len(b.names) >= brandBatch*4 {
		return b.flush(ctx)
	}
	return nil
}

// flush stores and matches what is buffered.
func (b *brandRun) flush(ctx context.Context) error {
	if len(b.certs) > 0 {
		res, err := b.mon.IngestCerts(ctx, b.certs)
		if err != nil {
			return err
		}
		b.certs = b.certs[:0]
		b.sum.Inserted += res.Certs.Inserted
		b.sum.Updated += res.Certs.Updated
		b.sum.Unchanged += res.Certs.Unchanged
		res.Hosts.Names, res.Hosts.Rejects = nil, nil
		b.hosts.Add(res.Hosts)
		b.links += res.Links
		b.match.Add(res.Match)
	}
	if len(b.hostObs) > 0 {
		st, err := hoststore.New(b.st).UpsertHosts(ctx, b.hostObs)
		if err != nil {
			return err
		}
		b.hostObs = b.hostObs[:0]
		names := st.Names
		st.Names, st.Rejects = nil, nil
		b.hosts.Add(st)
		res, err := b.mon.ObserveNames(ctx, names)
		if err != nil {
			return err
		}
		b.match.Add(res)
	}
	if len(b.names) > 0 {
		res, err := b.mon.Observe(ctx, b.names)
		if err != nil {
			return err
		}
		b.names = b.names[:0]
		b.match.Add(res)
	}
	b.sum.Duration = time.Since(b.start)
	b.prog.update(hostCounts(b.sum))
	return nil
}

// certReject records input the certificate decoder skipped: text between
// PEM blocks (openssl -text output, garbage) is skipped, not a rejected
// certificate; anything else is.
func (b *brandRun) certReject(r cert.Reject) {
	if strings.HasPrefix(r.Reason, "skipped ") {
		b.sum.Skipped++
		if len(b.skips) < 20 {
			b.skips = append(b.skips, r.String())
		}
		return
	}
	b.reject(r.String())
}

func printBrandSummary(w io.Writer, kind string, sources int, b *brandRun) {
	s := b.sum
	what := "certificates"
	if kind == "zone" {
		what = "domains"
	}
	fmt.Fprintf(w, "%s: %d source(s): read %d %s, inserted %d, updated %d, unchanged %d, rejected %d, skipped %d in %s (%.0f %s/s)\n",
		kind, sources, s.Read, what, s.Inserted, s.Updated, s.Unchanged, s.Rejected, s.Skipped,
		s.Duration.Round(time.Millisecond), float64(s.Read)/max(s.Duration.Seconds(), 1e-9), what)
	for _, r := range s.Rejects {
		fmt.Fprintf(w, "  rejected %s\n", r)
	}
	if s.Rejected > len(s.Rejects) {
		fmt.Fprintf(w, "  ... and %d more rejected\n", s.Rejected-len(s.Rejects))
	}
	for _, r := range b.skips {
		fmt.Fprintf(w, "  skipped %s\n", r)
	}
}

// ingestCertFiles reads PEM or DER certificates from a file or a directory.
func ingestCertFiles(ctx context.Context, b *brandRun, src string) error {
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

// ingestCertstream reads newline-delimited certstream JSON messages from a
// file ("-" for standard input).
func ingestCertstream(ctx context.Context, b *brandRun, src string) error {
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
		b.sum.Read++
		b.sum.Skipped++
		for _, d := range u.Domains {
			d, _ := cert.WildcardBase(d)
			b.hostObs = append(b.hostObs, host.Host{Host: d, FirstSeen: seen, LastSeen: seen})
		}
		if len(b.hostObs) >= brandBatch*4 {
			return b.flush(ctx)
		}
		return nil
	}, b.certReject)
}

// ingestZone reads the delegations of a zone file (plain or gzip) and
// matches each registered domain against the monitored brands, its name
// servers kept as the finding's DNS answers. The domains are not stored (a
// TLD zone holds millions): only the findings they produce are.
func ingestZone(ctx context.Context, b *brandRun, src string) error {
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("zone: %w", err)
	}
	defer f.Close()
	return zone.Delegations(f, zone.Options{Name: src}, func(d string, ns []string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		b.sum.Read++
		return b.addName(ctx, monitor.Observation{Name: d, DNS: host.DNS{NS: ns}})
	}, func(pe *zone.ParseError) { b.reject(pe.Error()) })
}

// ingestCTLog reads a Certificate Transparency log from its checkpoint up to
// its current tree head, storing the checkpoint with each batch.
func ingestCTLog(ctx context.Context, b *brandRun, src string) error {
	c, err := ct.NewClient(src, ct.Options{})
	if err != nil {
		return fmt.Errorf("ct: %w", err)
	}
	f := &ct.Follower{Client: c}
	return followCT(ctx, b, f)
}

// followCT runs a follower whose checkpoint flushes the buffered
// certificates before it is saved, so a restart never skips an entry that
// was not stored.
func followCT(ctx context.Context, b *brandRun, f *ct.Follower) error {
	cp := checkpointFuncs{
		load: func(log string) (int64, error) { return brandstore.New(b.st).CTCheckpoint(ctx, log) },
		save: func(log string, next int64) error {
			if err := b.flush(ctx); err != nil {
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

// ctLogs splits the --ct-logs value.
func ctLogs(s string) []string {
	var out []string
	for _, u := range strings.Split(s, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}
