// Package brandwatch is brand protection's continuous matching: it keeps one
// brand.Matcher for every domain of every organization (rebuilt
// incrementally when organizations gain or lose domains), matches each
// incoming name (certificate SAN names, zone-file domains, host observations)
// against all of them at once, and stores typosquatting and
// potential-phishing findings and certificate links per organization.
//
// The watcher reconciles with the org_assets table rather than relying on
// events alone: the API nudges it when a domain is added or removed (so the
// change applies within moments), and it also polls, so changes made by
// another process (the CLI, another replica) are picked up too and a missed
// nudge is never lost. Findings of a deleted organization go with it through
// the schema's ON DELETE CASCADE.
package brandwatch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/publicsuffix"

	"github.com/periscope-oss/periscope/internal/brand"
	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/ledger"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
)

// Options configure a Watcher.
type Options struct {
	// Brand tunes matching (dictionary and suffix list of the typosquatting
	// fuzzers, phishing keywords).
	Brand brand.Options
	// Poll is how often Run reconciles with the organizations' domains when
	// not nudged (default 30s).
	Poll time.Duration
	// Log receives reconcile errors and progress; nil discards.
	Log *slog.Logger
	// DeferBackfills leaves backfills to RunBackfills: Reconcile then only
	// keeps this process's matcher current. Serve sets it so that, with
	// several instances, each keeps its own matcher while one instance (the
	// holder of the backfill lease) matches stored data against new
	// domains.
	DeferBackfills bool
	// BrandsPerTurn bounds how many new brands one reconcile adds to the
	// matcher (their candidates are the costly part); the others stay
	// queued for the turns that follow at once. 0 means 16.
	BrandsPerTurn int
}

// Watcher matches observations against every organization's domains. It is
// safe for concurrent use.
type Watcher struct {
	store *store.Store
	hosts *hoststore.Store
	brand *brandstore.Store
	opts  Options
	log   *slog.Logger
	state atomic.Pointer[state]
	mu    sync.Mutex // serialises Reconcile
	nudge chan struct{}
	// backfillNudge wakes RunBackfills.
	backfillNudge chan struct{}
	// queued is how many new brands the last reconcile left for the next.
	queued atomic.Int64
}

// assetRef is one domain of one organization.
type assetRef struct {
	OrgID, AccountID, Domain string
}

// state is an immutable snapshot: replaced whole by Reconcile.
type state struct {
	matcher *brand.Matcher
	// bases maps a monitored registrable domain to the organizations'
	// domains under it.
	bases map[string][]assetRef
	// domains maps each organization domain to its references, for
	// linking certificates by suffix.
	domains map[string][]assetRef
	// defs holds each brand's definition, to detect changes.
	defs map[string]brand.Brand
	// owned holds each account's domains: a name equal to or below one of
	// them is the account's own, never a finding for it. (Kept out of the
	// brand definitions so adding a domain to an account with many never
	// rebuilds the candidates of the others.)
	owned map[string]map[string]bool
}

// ownedBy reports whether name is one of domains or below one.
func ownedBy(domains map[string]bool, name string) bool {
	for d := name; d != ""; {
		if domains[d] {
			return true
		}
		i := strings.IndexByte(d, '.')
		if i < 0 {
			return false
		}
		d = d[i+1:]
	}
	return false
}

// New returns a Watcher on the store: it reads organizations' assets from
// st, host names from hosts and keeps its findings and certificates in
// brand. Nothing is matched until the first Reconcile (Run and the Observe
// methods do one when needed).
func New(st *store.Store, hosts *hoststore.Store, brand *brandstore.Store, opts Options) *Watcher {
	if opts.Poll <= 0 {
		opts.Poll = 30 * time.Second
	}
	if opts.BrandsPerTurn <= 0 {
		opts.BrandsPerTurn = 16
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Watcher{store: st, hosts: hosts, brand: brand, opts: opts, log: log, nudge: make(chan struct{}, 1), backfillNudge: make(chan struct{}, 1)}
}

// Notify asks Run to reconcile now (the API calls it when an organization's
// domains change). It never blocks.
func (m *Watcher) Notify() {
	for _, c := range []chan struct{}{m.nudge, m.backfillNudge} {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// Queued returns how many new domains' brands wait for the next reconcile
// turn.
func (m *Watcher) Queued() int { return int(m.queued.Load()) }

// Run reconciles at start, when notified and every Poll, until ctx is done.
// Errors are logged and retried at the next turn: the watcher keeps running.
func (m *Watcher) Run(ctx context.Context) error {
	t := time.NewTicker(m.opts.Poll)
	defer t.Stop()
	for {
		if err := m.turn(ctx); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			m.log.Error("brandwatch: reconcile", "err", err)
		}
		if m.queued.Load() > 0 {
			// Brands wait in the queue: next turn at once, after a
			// look at ctx (the work is in bounded turns so that shutdown
			// and lease loss are noticed between them).
			if ctx.Err() != nil {
				return ctx.Err()
			}
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		case <-m.nudge:
		}
	}
}

// RunBackfills matches stored data against organization domains not yet
// matched, at start, when notified and every Poll, until ctx is done (with
// Options.DeferBackfills; serve runs it on one instance at a time).
func (m *Watcher) RunBackfills(ctx context.Context) error {
	t := time.NewTicker(m.opts.Poll)
	defer t.Stop()
	for {
		if err := m.Backfill(ctx); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			m.log.Error("brandwatch: backfill", "err", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		case <-m.backfillNudge:
		}
	}
}

// Backfill reconciles and then backfills the organization domains not yet
// matched (see Reconcile).
func (m *Watcher) Backfill(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var rs reconcileStats
	if _, err := m.reconcileMatcher(ctx, &rs); err != nil {
		return err
	}
	// Domains still queued are backfilled at a later call, once the
	// matcher has them.
	return m.backfill(ctx, m.state.Load(), &rs)
}

// Brands returns the monitored registrable domains, sorted.
func (m *Watcher) Brands() []string {
	st := m.state.Load()
	if st == nil {
		return []string{}
	}
	out := make([]string, 0, len(st.bases))
	for b := range st.bases {
		out = append(out, b)
	}
	slices.Sort(out)
	return out
}

// Monitored reports whether base is a monitored registrable domain.
func (m *Watcher) Monitored(base string) bool {
	st := m.state.Load()
	return st != nil && len(st.bases[base]) > 0
}

// reconcileStats reports what a reconcile changed, for the log.
type reconcileStats struct {
	Added, Removed int // brands
	Backfilled     int // organization domains whose stored data was matched
	Findings       int // findings stored by backfills
	Certificates   int // certificate links made by backfills
}

// Reconcile brings the matcher in line with the organizations' domains:
// brands of removed domains stop matching, brands of new domains get their
// candidates computed (only theirs; the rest of the matcher is shared), and
// each organization domain seen for the first time is backfilled: stored
// certificates covering it are linked and the indexed host names are matched
// against its brand.
func (m *Watcher) Reconcile(ctx context.Context) error {
	_, err := m.reconcile(ctx)
	return err
}

func (m *Watcher) reconcile(ctx context.Context) (reconcileStats, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reconcileLocked(ctx)
}

// reconcileLocked is reconcile with m.mu held.
func (m *Watcher) reconcileLocked(ctx context.Context) (reconcileStats, error) {
	var rs reconcileStats
	for {
		next, err := m.reconcileMatcher(ctx, &rs)
		if err != nil {
			return rs, err
		}
		if m.queued.Load() > 0 {
			if err := ctx.Err(); err != nil {
				return rs, err
			}
			continue
		}
		if m.opts.DeferBackfills {
			return rs, nil
		}
		return rs, m.backfill(ctx, next, &rs)
	}
}

// turn is one bounded step of Run: a reconcile adding at most BrandsPerTurn
// brands, and the backfill once none is queued (unless deferred).
func (m *Watcher) turn(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var rs reconcileStats
	next, err := m.reconcileMatcher(ctx, &rs)
	if err != nil || m.queued.Load() > 0 || m.opts.DeferBackfills {
		return err
	}
	return m.backfill(ctx, next, &rs)
}

// reconcileMatcher brings the matcher in line with the organizations'
// domains, adding at most BrandsPerTurn new brands (the rest are queued:
// left out of this turn's state, as if their domains were not there yet).
// It stores and returns the new state.
func (m *Watcher) reconcileMatcher(ctx context.Context, rs *reconcileStats) (*state, error) {
	assets, err := m.store.AllAssets(ctx, periscope.AssetDomain)
	if err != nil {
		return nil, err
	}
	prev := m.state.Load()
	admitted := map[string]bool{}
	queued := 0
	next := &state{bases: map[string][]assetRef{}, domains: map[string][]assetRef{}, defs: map[string]brand.Brand{},
		owned: map[string]map[string]bool{}}
	for _, a := range assets {
		base, err := publicsuffix.EffectiveTLDPlusOne(a.Value)
		if err != nil {
			m.log.Warn("brandwatch: skipping a domain without a registrable part", "domain", a.Value, "err", err)
			continue
		}
		if _, known := prev.def(base); !known && !admitted[base] {
			if len(admitted) >= m.opts.BrandsPerTurn {
				queued++
				continue
			}
			admitted[base] = true
		}
		ref := assetRef{OrgID: a.OrganizationID, AccountID: a.AccountID, Domain: a.Value}
		next.bases[base] = append(next.bases[base], ref)
		next.domains[a.Value] = append(next.domains[a.Value], ref)
		if next.owned[a.AccountID] == nil {
			next.owned[a.AccountID] = map[string]bool{}
		}
		next.owned[a.AccountID][a.Value] = true
		next.defs[base] = brand.Brand{Domain: base}
	}

	m.queued.Store(int64(queued))
	var add []brand.Brand
	var drop []string
	if prev == nil {
		for _, b := range next.defs {
			add = append(add, b)
		}
	} else {
		for base := range prev.defs {
			if _, ok := next.defs[base]; !ok {
				drop = append(drop, base)
			}
		}
		for base, nw := range next.defs {
			if _, ok := prev.defs[base]; !ok {
				add = append(add, nw)
			}
		}
	}
	slices.SortFunc(add, func(a, b brand.Brand) int { return strings.Compare(a.Domain, b.Domain) })
	switch {
	case prev == nil:
		next.matcher, err = brand.New(add, m.opts.Brand)
	case len(add) == 0 && len(drop) == 0:
		next.matcher = prev.matcher
	default:
		next.matcher, err = prev.matcher.Without(drop...).With(add...)
	}
	if err != nil {
		// One bad brand must not stop the others: build without it.
		next.matcher, err = m.buildSkippingBad(prev, drop, add)
		if err != nil {
			return nil, err
		}
	}
	m.state.Store(next)
	rs.Added, rs.Removed = len(add), len(drop)
	if prev != nil && (len(add) > 0 || len(drop) > 0 || queued > 0) {
		m.log.Info("brandwatch: brands changed", "added", len(add), "removed", len(drop), "monitored", len(next.defs), "queued", queued)
	}
	return next, nil
}

// def returns the definition of a monitored base domain (none for a nil
// state).
func (st *state) def(base string) (brand.Brand, bool) {
	if st == nil {
		return brand.Brand{}, false
	}
	b, ok := st.defs[base]
	return b, ok
}

// buildSkippingBad adds brands one at a time, logging and skipping those
// the matcher refuses.
func (m *Watcher) buildSkippingBad(prev *state, drop []string, add []brand.Brand) (*brand.Matcher, error) {
	var mt *brand.Matcher
	var err error
	if prev == nil {
		mt, err = brand.New(nil, m.opts.Brand)
		if err != nil {
			return nil, err
		}
	} else {
		mt = prev.matcher.Without(drop...)
	}
	for _, b := range add {
		n, err := mt.With(b)
		if err != nil {
			m.log.Warn("brandwatch: cannot watch domain", "domain", b.Domain, "err", err)
			continue
		}
		mt = n
	}
	return mt, nil
}

// backfill matches stored data against organization domains not matched
// before, and forgets removed ones.
func (m *Watcher) backfill(ctx context.Context, st *state, rs *reconcileStats) error {
	todo, err := m.pendingBackfills(ctx, st)
	if err != nil || len(todo) == 0 {
		return err
	}
	sub, err := m.backfillState(st, todo)
	if err != nil {
		return err
	}
	exclude, err := m.linkCertificates(ctx, todo, rs)
	if err != nil {
		return err
	}
	if err := m.matchIndex(ctx, sub, exclude, rs); err != nil {
		return err
	}
	for _, r := range todo {
		if err := m.brand.SetMonitored(ctx, r.OrgID, r.Domain, true); err != nil {
			return err
		}
		rs.Backfilled++
	}
	m.log.Info("brandwatch: backfilled new domains", "domains", len(todo), "findings", rs.Findings, "certificates", rs.Certificates)
	return nil
}

// pendingBackfills returns the organizations' domains not backfilled yet,
// in organization then domain order, and forgets the backfills of domains
// no longer watched.
func (m *Watcher) pendingBackfills(ctx context.Context, st *state) ([]assetRef, error) {
	done, err := m.brand.MonitoredPairs(ctx)
	if err != nil {
		return nil, err
	}
	current := map[string]bool{}
	var todo []assetRef
	for _, refs := range st.domains {
		for _, r := range refs {
			k := r.OrgID + "|" + r.Domain
			current[k] = true
			if !done[k] {
				todo = append(todo, r)
			}
		}
	}
	for k := range done {
		if !current[k] {
			org, domain, _ := strings.Cut(k, "|")
			if err := m.brand.SetMonitored(ctx, org, domain, false); err != nil {
				return nil, err
			}
		}
	}
	slices.SortFunc(todo, func(a, b assetRef) int {
		return cmp.Or(strings.Compare(a.OrgID, b.OrgID), strings.Compare(a.Domain, b.Domain))
	})
	return todo, nil
}

// backfillState is the state a backfill matches with: one matcher holding
// only the new domains' brands, for one walk of the host index for all of
// them.
func (m *Watcher) backfillState(st *state, todo []assetRef) (*state, error) {
	var brands []brand.Brand
	want := map[string][]assetRef{}
	for _, r := range todo {
		base, _ := publicsuffix.EffectiveTLDPlusOne(r.Domain)
		if _, ok := want[base]; !ok {
			if def, ok := st.defs[base]; ok {
				brands = append(brands, def)
			}
		}
		want[base] = append(want[base], r)
	}
	mt, err := brand.New(brands, m.opts.Brand)
	if err != nil {
		if mt, err = m.buildSkippingBad(nil, nil, brands); err != nil {
			return nil, err
		}
	}
	return &state{matcher: mt, bases: want, owned: st.owned}, nil
}

// linkCertificates links the stored certificates under the new domains
// first: the names they share with the organization's domains are the
// organization's, never findings. It returns those names, by name, with
// the organizations they belong to.
func (m *Watcher) linkCertificates(ctx context.Context, todo []assetRef, rs *reconcileStats) (map[string]map[string]bool, error) {
	var orgs []string
	for _, r := range todo {
		// The names under a new claim are its account's own: no other
		// account's finding may show them any longer.
		if _, err := m.brand.DropFindingsUnder(ctx, r.Domain); err != nil {
			return nil, err
		}
		n, err := m.brand.LinkCertificatesUnder(ctx, r.OrgID, r.AccountID, r.Domain)
		if err != nil {
			return nil, err
		}
		rs.Certificates += n
		if len(orgs) == 0 || orgs[len(orgs)-1] != r.OrgID { // todo is in organization order
			orgs = append(orgs, r.OrgID)
		}
	}
	// Each organization's names once, after all its domains are linked.
	exclude := map[string]map[string]bool{}
	for _, org := range orgs {
		names, err := m.brand.OrgCertificateNames(ctx, org)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			if exclude[n] == nil {
				exclude[n] = map[string]bool{}
			}
			exclude[n][org] = true
		}
	}
	return exclude, nil
}

// matchIndex matches every name of the host index against sub, a page at
// a time, leaving out the names in exclude of their organizations.
func (m *Watcher) matchIndex(ctx context.Context, sub *state, exclude map[string]map[string]bool, rs *reconcileStats) error {
	var after int64
	for {
		names, last, err := m.hosts.HostNamesAfter(ctx, after, 5000)
		if err != nil {
			return err
		}
		if len(names) == 0 {
			return nil
		}
		after = last
		res, err := m.match(ctx, sub, names, nil, exclude)
		if err != nil {
			return err
		}
		rs.Findings += res.Inserted
	}
}

// ensure reconciles once when the watcher has no state yet.
func (m *Watcher) ensure(ctx context.Context) (*state, error) {
	if st := m.state.Load(); st != nil {
		return st, nil
	}
	// Callers arriving together wait for the first one's reconcile rather
	// than each running their own.
	m.mu.Lock()
	defer m.mu.Unlock()
	if st := m.state.Load(); st != nil {
		return st, nil
	}
	if _, err := m.reconcileLocked(ctx); err != nil {
		return nil, err
	}
	return m.state.Load(), nil
}

// Observation is one observed name with the DNS answers seen with it, if any.
type Observation struct {
	Name string
	DNS  host.DNS
	Seen int64 // epoch seconds; 0 means now
}

// Result reports what matching a batch of names did.
type Result struct {
	Matched   int // names that matched at least one brand
	Inserted  int // new findings
	Updated   int // findings seen again with something new
	Unchanged int
	Invalid   int // names the matcher refused
}

// Add adds o's counts to r.
func (r *Result) Add(o Result) {
	r.Matched += o.Matched
	r.Inserted += o.Inserted
	r.Updated += o.Updated
	r.Unchanged += o.Unchanged
	r.Invalid += o.Invalid
}

// ObserveNames matches names (host observations: their DNS answers are read
// from the host index for the names that match) against every brand.
func (m *Watcher) ObserveNames(ctx context.Context, names []string) (Result, error) {
	st, err := m.ensure(ctx)
	if err != nil {
		return Result{}, err
	}
	return m.match(ctx, st, names, nil, nil)
}

// Observe matches observations that carry their own DNS answers (zone
// files, certificate names) against every brand.
func (m *Watcher) Observe(ctx context.Context, obs []Observation) (Result, error) {
	st, err := m.ensure(ctx)
	if err != nil {
		return Result{}, err
	}
	names := make([]string, len(obs))
	dns := make(map[string]Observation, len(obs))
	for i, o := range obs {
		names[i] = o.Name
		dns[o.Name] = o
	}
	return m.match(ctx, st, names, dns, nil)
}

// match classifies names with st's matcher and stores the findings for
// every organization monitoring the matched brands. When given, obs
// supplies DNS answers and times; otherwise they come from the host index.
// exclude lists, per name, organizations the name is known to belong to.
func (m *Watcher) match(ctx context.Context, st *state, names []string, obs map[string]Observation, exclude map[string]map[string]bool) (Result, error) {
	var res Result
	if st == nil || st.matcher == nil || len(st.bases) == 0 {
		return res, nil
	}
	type hit struct {
		name string
		m    brand.Match
	}
	var hits []hit
	var lookup []string
	for _, n := range names {
		ms, err := st.matcher.Match(n)
		if err != nil {
			if errors.Is(err, brand.ErrName) {
				res.Invalid++
				continue
			}
			return res, fmt.Errorf("match %q: %w", n, err)
		}
		if len(ms) == 0 {
			continue
		}
		res.Matched++
		for _, mm := range ms {
			hits = append(hits, hit{n, mm})
		}
		if _, ok := obs[n]; !ok {
			lookup = append(lookup, ms[0].Domain)
		}
	}
	if len(hits) == 0 {
		return res, nil
	}
	known, err := m.hosts.HostsNamed(ctx, lookup)
	if err != nil {
		return res, err
	}
	var fs []brandstore.Finding
	for _, h := range hits {
		var dns host.DNS
		var seen int64
		if o, ok := obs[h.name]; ok {
			dns, seen = o.DNS, o.Seen
		} else if kh, ok := known[h.m.Domain]; ok {
			dns, seen = kh.DNS, kh.LastSeen
		}
		for _, r := range st.bases[h.m.Brand] {
			if exclude[h.name][r.OrgID] || ownedBy(st.owned[r.AccountID], h.m.Domain) {
				continue
			}
			fs = append(fs, brandstore.Finding{
				OrganizationID: r.OrgID, AccountID: r.AccountID, Kind: h.m.Kind, Domain: h.m.Domain,
				BaseDomain: h.m.Brand, Fuzzer: h.m.Fuzzer, Score: h.m.Score, Reason: h.m.Reason, DNS: dns, LastSeen: seen,
			})
		}
	}
	fst, err := m.brand.UpsertFindings(ctx, fs)
	if err != nil {
		return res, err
	}
	res.Inserted, res.Updated, res.Unchanged = fst.Inserted, fst.Updated, fst.Unchanged
	return res, nil
}

// CertLinks returns the links of a stored certificate (by id) to every
// organization with a domain covering one of its host names.
func (m *Watcher) CertLinks(ctx context.Context, id int64, hosts []string, seen int64) ([]brandstore.CertLink, error) {
	st, err := m.ensure(ctx)
	if err != nil || st == nil {
		return nil, err
	}
	seenOrg := map[string]bool{}
	var out []brandstore.CertLink
	for _, h := range hosts {
		for d := h; d != ""; {
			for _, r := range st.domains[d] {
				if !seenOrg[r.OrgID] {
					seenOrg[r.OrgID] = true
					out = append(out, brandstore.CertLink{OrganizationID: r.OrgID, AccountID: r.AccountID, CertificateID: id, Domain: h, Seen: seen})
				}
			}
			i := strings.IndexByte(d, '.')
			if i < 0 {
				break
			}
			d = d[i+1:]
		}
	}
	return out, nil
}

// CertSource is certificate names to the change ledger: a certificate
// names hosts and says nothing else about them, so it adds hosts and
// removes nothing.
var CertSource = ledger.Source{Name: "ct", Covers: []ledger.Category{}}

// Hosts returns the host store the watcher writes certificate names to.
func (m *Watcher) Hosts() *hoststore.Store { return m.hosts }
