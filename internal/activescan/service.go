// Package activescan is active monitoring: it proves ownership of
// organizations' domains (a DNS TXT record with the organization's token),
// keeps which assets an operator authorised, queues scans (every
// organization on an interval, and on demand), and runs them: DNS for every
// known name under the verified domains, TCP connects to a port list on the
// public addresses found and on the authorised ranges, one TLS handshake
// per open TLS port and one HTTP GET per web port. What a scan sees goes to
// the host index as ordinary observations with source "monitor".
package activescan

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/periscope-oss/periscope/internal/asset"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/probe"
	"github.com/periscope-oss/periscope/internal/scanstore"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
)

// Source is the source name of the monitor's host observations.
const Source = "monitor"

// NameLister lists the indexed names of a domain and below it (the host
// index's Subdomains).
type NameLister interface {
	Subdomains(ctx context.Context, domain string, resolvableOnly bool, limit, countCap int) ([]string, int, error)
}

// HostSink stores observations through the host index's ingest path
// (hostingest.Ingester.IngestHosts), returning how many were stored.
type HostSink interface {
	IngestHosts(ctx context.Context, source string, hs []host.Host) (int, error)
}

// Options are the monitor's settings (the --monitor-* flags).
type Options struct {
	// Interval between two scheduled scans of an organization (24 h).
	Interval time.Duration
	// GlobalRate and OrgRate bound new connections per second across all
	// scans and per organization.
	GlobalRate float64
	OrgRate    float64
	// Concurrency bounds probes in flight across all scans, and
	// OrgConcurrency those of one organization's scan (a quarter of
	// Concurrency unless set), so other organizations always have slots.
	Concurrency    int
	OrgConcurrency int
	// Timeout bounds each probe.
	Timeout time.Duration
	// Ports are the TCP ports tried on each address.
	Ports []int
	// TLSPorts get a TLS handshake when open; WebPorts get an HTTP GET,
	// over TLS where the value is true. Nil means the probe defaults.
	TLSPorts map[int]bool
	WebPorts map[int]bool
	// Poll is how often the worker looks for due and queued scans.
	Poll time.Duration
	// Lease is how long a scan's organization lock lasts without
	// progress before another runner may take the scan over.
	Lease time.Duration
	// MaxNames caps the indexed names of one domain a scan resolves.
	MaxNames int
	// MaxScans bounds the organizations scanned at once by one instance.
	// Slots are taken in arrival order, and a scan of a large range gives
	// its slot back between slices of 256 addresses.
	MaxScans int
	// DedupWindow is how long an on-demand request reuses its scan (24 h).
	DedupWindow time.Duration
	// AllowPrivate lets scans and on-demand targets use private and
	// loopback addresses (labs and tests only).
	AllowPrivate bool
}

// DefaultOptions are the settings used where a flag is not given.
func DefaultOptions() Options {
	return Options{Interval: 24 * time.Hour, GlobalRate: 50, OrgRate: 10, Concurrency: 32,
		Timeout: probe.DefaultTimeout, Ports: slices.Clone(probe.DefaultPorts), Poll: time.Minute,
		Lease: 10 * time.Minute, MaxNames: 5000, MaxScans: 2, DedupWindow: 24 * time.Hour}
}

// CommonLabels are tried under every verified domain besides the indexed
// names: names most organizations have, found even before any source
// indexed them.
var CommonLabels = []string{"www", "mail", "webmail", "smtp", "mx", "api", "app", "dev", "staging", "test",
	"vpn", "remote", "portal", "admin", "m", "ftp", "ns1", "ns2", "blog", "shop", "cdn", "static", "git", "docs"}

// Deps are the monitor's collaborators.
type Deps struct {
	Store    *scanstore.Store
	Names    NameLister
	Sink     HostSink
	Resolver probe.Resolver
	// Dial opens connections to targets: the SSRF-safe dialer's
	// DialContext in production.
	Dial probe.DialFunc
	// Policy decides which addresses are probed; nil means
	// probe.PublicOnly{AllowPrivate: Options.AllowPrivate}.
	Policy probe.AddressPolicy
	Now    func() time.Time
	Log    *slog.Logger
	// Metrics, when set, registers the monitor's metrics.
	Metrics prometheus.Registerer
}

// Service is active monitoring.
type Service struct {
	opt     Options
	d       Deps
	global  *rate.Limiter
	sem     chan struct{}
	metrics *metrics

	// slots are the MaxScans scans running at once (Run); wake tells Run
	// a scan was queued.
	slots *fairSlots
	wake  chan struct{}

	mu      sync.Mutex
	orgPace map[string]*rate.Limiter
	orgSem  map[string]chan struct{} // each organization's probe slots
	running map[string]bool          // organizations with a scan running here
}

// New returns the monitor. Zero options take their defaults.
func New(opt Options, d Deps) *Service {
	def := DefaultOptions()
	if opt.Interval <= 0 {
		opt.Interval = def.Interval
	}
	if opt.GlobalRate <= 0 {
		opt.GlobalRate = def.GlobalRate
	}
	if opt.OrgRate <= 0 {
		opt.OrgRate = def.OrgRate
	}
	if opt.Concurrency <= 0 {
		opt.Concurrency = def.Concurrency
	}
	if opt.OrgConcurrency <= 0 {
		opt.OrgConcurrency = max(1, opt.Concurrency/4)
	}
	if opt.Timeout <= 0 {
		opt.Timeout = def.Timeout
	}
	if len(opt.Ports) == 0 {
		opt.Ports = def.Ports
	}
	if opt.TLSPorts == nil {
		opt.TLSPorts = probe.TLSPorts
	}
	if opt.WebPorts == nil {
		opt.WebPorts = probe.WebPorts
	}
	if opt.Poll <= 0 {
		opt.Poll = def.Poll
	}
	if opt.Lease <= 0 {
		opt.Lease = def.Lease
	}
	if opt.MaxNames <= 0 {
		opt.MaxNames = def.MaxNames
	}
	if opt.MaxScans <= 0 {
		opt.MaxScans = def.MaxScans
	}
	if opt.DedupWindow <= 0 {
		opt.DedupWindow = def.DedupWindow
	}
	if d.Policy == nil {
		d.Policy = probe.PublicOnly{AllowPrivate: opt.AllowPrivate}
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	return &Service{opt: opt, d: d, global: rate.NewLimiter(rate.Limit(opt.GlobalRate), 1),
		sem: make(chan struct{}, opt.Concurrency), metrics: newMetrics(d.Metrics),
		orgPace: map[string]*rate.Limiter{}, orgSem: map[string]chan struct{}{}, running: map[string]bool{},
		slots: newFairSlots(opt.MaxScans), wake: make(chan struct{}, 1)}
}

// RegisterMetrics registers the monitor's metrics on reg (for a registry
// that exists only after the service, like the API's).
func (s *Service) RegisterMetrics(reg prometheus.Registerer) error {
	for _, c := range s.metrics.collectors() {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("register monitor metrics: %w", err)
		}
	}
	return nil
}

// Token returns the organization's verification token.
func (s *Service) Token(ctx context.Context, orgID string) (string, error) {
	return s.d.Store.Token(ctx, orgID)
}

// Assets lists the organization's assets with whether each may be probed.
func (s *Service) Assets(ctx context.Context, orgID string) ([]scanstore.Asset, error) {
	return s.d.Store.Assets(ctx, orgID)
}

// TXTPrefix starts the verification record's value.
const TXTPrefix = "periscope-verification="

// VerifyDomain checks for the TXT record periscope-verification=<token> at
// the organization's domain and records the domain as verified when it is
// there. The organization must belong to the caller (checked by the
// caller); the domain must be one of its assets.
func (s *Service) VerifyDomain(ctx context.Context, orgID, domain string) error {
	d, err := asset.Domain(domain)
	if err != nil {
		return err
	}
	assets, err := s.d.Store.Assets(ctx, orgID)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(assets, func(a scanstore.Asset) bool { return a.Kind == periscope.AssetDomain && a.Value == d }) {
		return periscope.Errorf(periscope.ENotFound, "%s is not a domain of this organization.", d)
	}
	tok, err := s.d.Store.Token(ctx, orgID)
	if err != nil {
		return err
	}
	p := s.prober(nil)
	txts, err := p.TXT(ctx, d)
	if err != nil {
		s.d.Log.Warn("verification lookup failed", "domain", d, "err", err)
		return periscope.Errorf(periscope.EUnavailable, "The TXT records of %s could not be read; retry shortly.", d)
	}
	want := TXTPrefix + tok
	for _, t := range txts {
		if strings.TrimSpace(t) == want {
			return s.d.Store.Authorize(ctx, orgID, periscope.AssetDomain, d, scanstore.MethodDNS)
		}
	}
	return periscope.Errorf(periscope.EInvalid, "No TXT record %q at %s.", want, d)
}

// Authorize records, for an operator, that an asset of the organization may
// be probed: a domain (verified without DNS) or an IP range.
func (s *Service) Authorize(ctx context.Context, orgID, kind, value string) error {
	switch kind {
	case periscope.AssetDomain:
		d, err := asset.Domain(value)
		if err != nil {
			return err
		}
		value = d
	case periscope.AssetIPRange:
		p, err := netip.ParsePrefix(strings.TrimSpace(value))
		if err != nil {
			a, aerr := netip.ParseAddr(strings.TrimSpace(value))
			if aerr != nil {
				return periscope.Errorf(periscope.EInvalid, "%q is not a CIDR.", periscope.Clip(value, 64))
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		value = p.Masked().String()
	default:
		return fmt.Errorf("authorise %q: unknown asset kind %q", value, kind)
	}
	return s.d.Store.Authorize(ctx, orgID, kind, value, scanstore.MethodOperator)
}

// ParseTarget reads an on-demand target (see the function ParseTarget),
// refusing non-public addresses unless the service allows private targets.
func (s *Service) ParseTarget(typ, target string) (Target, error) {
	return ParseTarget(typ, target, s.opt.AllowPrivate)
}

// Scan returns a scan of the account.
func (s *Service) Scan(ctx context.Context, accountID, id string) (scanstore.Scan, error) {
	return s.d.Store.Scan(ctx, accountID, id)
}

// pace returns the pacer of an organization's scans: its own rate and
// the global one.
func (s *Service) pace(orgID string) probe.Pacer {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.orgPace[orgID]
	if l == nil {
		l = rate.NewLimiter(rate.Limit(s.opt.OrgRate), 1)
		s.orgPace[orgID] = l
	}
	return pacers{l, s.global}
}

// pacers waits on each limiter in turn.
type pacers []*rate.Limiter

func (ps pacers) Wait(ctx context.Context) error {
	for _, l := range ps {
		if err := l.Wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) prober(pace probe.Pacer) *probe.Prober {
	return &probe.Prober{Resolver: s.d.Resolver, Dial: s.d.Dial, Policy: s.d.Policy, Pace: pace, Timeout: s.opt.Timeout}
}
