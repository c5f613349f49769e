package alerts

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/vulnstore"
)

// checkpointLedger names the rules worker's position in the ledger.
const checkpointLedger = "alerts.ledger"

// Worker turns new ledger rows about organizations' assets into alerts and
// outbox deliveries. It runs once across instances (a leased checkpoint)
// and restart-safe: the alerts and deliveries of a batch commit in one
// transaction with the checkpoint past it, so a crash repeats a whole batch
// or none of it. (Ledger ids commit in order because host writers take
// turns; see store.takeTurns.)
type Worker struct {
	DB     *store.Store
	Alerts *alertstore.Store
	// Assets lists every asset of a kind whose notifications are on
	// (store.NotifiedAssets).
	Assets func(ctx context.Context, kind string) ([]periscope.Asset, error)
	// Baseline is how long after an asset's first ledger row its changes
	// are a silent baseline (default 1 h).
	Baseline time.Duration
	Batch    int           // ledger rows a step (default 1000)
	Poll     time.Duration // default 1 s
	Lease    time.Duration // default 30 s
	Log      *slog.Logger
	// Delivered, when set, is woken after a step enqueued deliveries.
	Delivered func()
	// Feeds are the other alert sources, stepped after the ledger.
	Feeds []Feed
	// Vulns, when set, adds the new_vulnerability rule's two feeds: hosts
	// whose products changed against the alertable CVEs, and CVEs that
	// became alertable against the organizations' hosts.
	Vulns *VulnSource
	// VulnCheck is how often the alertable CVEs are checked for changes
	// (default 1 min).
	VulnCheck time.Duration

	once   sync.Once
	holder string
	wake   chan struct{}

	vidx     *vulnIndex // alertable CVEs, as last read
	vpending []vulnstore.AlertableCPE
	vsig     string
	vchecked time.Time
}

func (w *Worker) init() {
	w.once.Do(func() {
		var b [8]byte
		rand.Read(b[:])
		w.holder = hex.EncodeToString(b[:])
		w.wake = make(chan struct{}, 1)
		if w.Baseline == 0 {
			w.Baseline = time.Hour
		}
		if w.Batch == 0 {
			w.Batch = 1000
		}
		if w.Poll == 0 {
			w.Poll = time.Second
		}
		if w.Lease == 0 {
			w.Lease = 30 * time.Second
		}
		if w.Log == nil {
			w.Log = slog.New(slog.DiscardHandler)
		}
		if w.Assets == nil {
			w.Assets = w.DB.NotifiedAssets
		}
		if w.VulnCheck == 0 {
			w.VulnCheck = time.Minute
		}
		if w.Vulns != nil {
			w.Feeds = append(w.Feeds, w.vulnHostFeed(), w.vulnCVEFeed())
		}
	})
}

// Wake makes the worker step now (after a host write committed ledger rows).
func (w *Worker) Wake() {
	w.init()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Run steps until ctx ends.
func (w *Worker) Run(ctx context.Context) error {
	w.init()
	t := time.NewTicker(w.Poll)
	defer t.Stop()
	for {
		for {
			n, err := w.Step(ctx)
			if err != nil && ctx.Err() == nil {
				w.Log.Error("alert rules step failed", "err", err)
			}
			if n < w.Batch || err != nil {
				break
			}
		}
		for _, f := range w.Feeds {
			if _, err := w.stepFeed(ctx, f); err != nil && ctx.Err() == nil {
				w.Log.Error("alert feed step failed", "feed", f.Name, "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-w.wake:
		}
	}
}

// StepFeeds runs one batch of every feed and returns how many alerts they
// raised (for tests and one-shot runs).
func (w *Worker) StepFeeds(ctx context.Context) (int, error) {
	w.init()
	total := 0
	for _, f := range w.Feeds {
		n, err := w.stepFeed(ctx, f)
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

// Step processes one batch of ledger rows and returns how many it read.
func (w *Worker) Step(ctx context.Context) (int, error) {
	w.init()
	now := w.DB.Now()
	pos, ok, err := w.Alerts.LeaseCheckpoint(ctx, checkpointLedger, w.holder, now.Unix(), now.Add(w.Lease).Unix())
	if err != nil || !ok {
		return 0, err
	}
	rows, err := w.Alerts.LedgerAfter(ctx, pos, w.Batch)
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	m, err := w.matcher(ctx)
	if err != nil {
		return 0, err
	}
	enqueued := 0
	err = w.DB.Tx(ctx, func(tx *store.Tx) error {
		enqueued = 0
		for _, r := range rows {
			for _, a := range m.match(r.Host, r.IPAddress) {
				if r.Time < a.CreatedAt.Unix() {
					continue // observed before the asset was monitored
				}
				started, err := w.Alerts.Baseline(ctx, tx, a.OrganizationID, a.Value, r.Time)
				if err != nil {
					return err
				}
				if r.Time < started+int64(w.Baseline/time.Second) {
					continue // the asset's first data: silent baseline
				}
				al, ok := FromChange(r, a)
				if !ok {
					continue
				}
				n, err := raise(ctx, w.Alerts, tx, &al, now)
				if err != nil {
					return err
				}
				enqueued += n
			}
		}
		return w.Alerts.SaveCheckpoint(ctx, tx, checkpointLedger, w.holder, rows[len(rows)-1].ID)
	})
	if err != nil {
		return 0, err
	}
	if enqueued > 0 && w.Delivered != nil {
		w.Delivered()
	}
	return len(rows), nil
}

// Raise stores alerts from other rules (certificate and domain expiry,
// brand findings, vulnerabilities) through the same deduplication and
// delivery as the ledger's, and returns how many deliveries it enqueued.
func Raise(ctx context.Context, db *store.Store, st *alertstore.Store, als []alertstore.Alert) (int, error) {
	total := 0
	err := db.Tx(ctx, func(tx *store.Tx) error {
		total = 0
		for i := range als {
			n, err := raise(ctx, st, tx, &als[i], db.Now())
			if err != nil {
				return err
			}
			total += n
		}
		return nil
	})
	return total, err
}

// raise upserts an alert and, when it is news, enqueues its deliveries.
func raise(ctx context.Context, st *alertstore.Store, tx *store.Tx, al *alertstore.Alert, now time.Time) (int, error) {
	notify, err := st.UpsertAlert(ctx, tx, al)
	if err != nil || !notify {
		return 0, err
	}
	event := "alert.created"
	if al.Count > 1 {
		event = "alert.reopened"
	}
	eps, err := st.LiveEndpoints(ctx, tx, al.OrganizationID)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range eps {
		if !Wants(e, *al) {
			continue
		}
		body, err := Payload(e.Format, event, *al, now)
		if err != nil {
			return 0, err
		}
		if err := st.Enqueue(ctx, tx, &alertstore.Delivery{EndpointID: e.ID, AlertID: al.ID, Event: event, Payload: body}); err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}

// matcher finds the organizations' assets a host belongs to.
type matcher struct {
	domains []periscope.Asset
	ranges  []periscope.Asset
	prefix  []netip.Prefix
}

func (w *Worker) matcher(ctx context.Context) (*matcher, error) {
	m := &matcher{}
	var err error
	if m.domains, err = w.Assets(ctx, periscope.AssetDomain); err != nil {
		return nil, err
	}
	ranges, err := w.Assets(ctx, periscope.AssetIPRange)
	if err != nil {
		return nil, err
	}
	for _, a := range ranges {
		p, err := netip.ParsePrefix(a.Value)
		if err != nil {
			continue
		}
		m.ranges, m.prefix = append(m.ranges, a), append(m.prefix, p)
	}
	return m, nil
}

// match returns one asset per organization covering the host (by name
// under a domain, or by address in a range), so one change is one alert
// per organization.
func (m *matcher) match(hostName, ip string) []periscope.Asset {
	var out []periscope.Asset
	seen := map[string]bool{}
	for _, a := range m.domains {
		if !seen[a.OrganizationID] && (hostName == a.Value || strings.HasSuffix(hostName, "."+a.Value)) {
			seen[a.OrganizationID] = true
			out = append(out, a)
		}
	}
	if addr, err := netip.ParseAddr(ip); err == nil {
		for i, a := range m.ranges {
			if !seen[a.OrganizationID] && m.prefix[i].Contains(addr) {
				seen[a.OrganizationID] = true
				out = append(out, a)
			}
		}
	}
	return out
}

// Dispatcher delivers the webhook outbox: at-least-once, each message
// signed and carrying its webhook-id on every attempt, retried with
// exponential backoff and jitter for MaxAge, after which the endpoint is
// disabled. Leases make it safe to run on several instances.
type Dispatcher struct {
	Alerts *alertstore.Store
	// Client sends the deliveries. It must dial through the SSRF-safe
	// dialer (egress) in production; nil is an error at Run.
	Client   *http.Client
	Now      func() time.Time
	Log      *slog.Logger
	Lease    time.Duration // default 30 s
	Batch    int           // default 32
	Parallel int           // default 4
	Poll     time.Duration // default 1 s
	MaxAge   time.Duration // default 24 h
	Timeout  time.Duration // per attempt, default 10 s

	once sync.Once
	wake chan struct{}
}

func (d *Dispatcher) init() {
	d.once.Do(func() {
		d.wake = make(chan struct{}, 1)
		if d.Now == nil {
			d.Now = time.Now
		}
		if d.Log == nil {
			d.Log = slog.New(slog.DiscardHandler)
		}
		if d.Lease == 0 {
			d.Lease = 30 * time.Second
		}
		if d.Batch == 0 {
			d.Batch = 32
		}
		if d.Parallel == 0 {
			d.Parallel = 4
		}
		if d.Poll == 0 {
			d.Poll = time.Second
		}
		if d.MaxAge == 0 {
			d.MaxAge = 24 * time.Hour
		}
		if d.Timeout == 0 {
			d.Timeout = 10 * time.Second
		}
	})
}

// Wake makes the dispatcher look at the outbox now.
func (d *Dispatcher) Wake() {
	d.init()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run delivers until ctx ends; in-flight attempts finish first.
func (d *Dispatcher) Run(ctx context.Context) error {
	d.init()
	if d.Client == nil {
		return errors.New("webhook dispatcher: no HTTP client")
	}
	t := time.NewTicker(d.Poll)
	defer t.Stop()
	for {
		for {
			n, err := d.Step(ctx)
			if err != nil && ctx.Err() == nil {
				d.Log.Error("webhook delivery step failed", "err", err)
			}
			if n < d.Batch || err != nil {
				break
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-d.wake:
		}
	}
}

// Step leases due deliveries and attempts each once; it returns how many.
func (d *Dispatcher) Step(ctx context.Context) (int, error) {
	d.init()
	ds, err := d.Alerts.Lease(ctx, d.Batch, d.Now().Add(d.Lease).Unix())
	if err != nil || len(ds) == 0 {
		return 0, err
	}
	sem := make(chan struct{}, d.Parallel)
	var wg sync.WaitGroup
	errs := make([]error, len(ds))
	for i, del := range ds {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = d.attempt(context.WithoutCancel(ctx), del)
		}()
	}
	wg.Wait()
	return len(ds), errors.Join(errs...)
}

// attempt sends one delivery and records the outcome.
func (d *Dispatcher) attempt(ctx context.Context, del alertstore.Delivery) error {
	status, reason := d.send(ctx, del)
	if status >= 200 && status < 300 {
		return d.Alerts.Delivered(ctx, del, status)
	}
	next := d.nextAttempt(del)
	if status == http.StatusGone {
		next = 0 // the receiver says the endpoint is gone for good
	}
	d.Log.Warn("webhook delivery failed", "delivery", del.ID, "endpoint", del.EndpointID, "status", status, "reason", reason, "attempt", del.Attempts+1)
	return d.Alerts.Failed(ctx, del, status, reason, next)
}

// send posts the signed payload and returns the HTTP status (0 when none
// came) and a reason safe to store: never the URL (a Slack or Teams URL is
// itself a credential) nor a secret.
func (d *Dispatcher) send(ctx context.Context, del alertstore.Delivery) (int, string) {
	ctx, cancel := context.WithTimeout(ctx, d.Timeout)
	defer cancel()
	ts := d.Now().Unix()
	sig, err := Sign(del.Secrets, del.ID, ts, del.Payload)
	if err != nil {
		return 0, err.Error()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, del.URL, strings.NewReader(string(del.Payload)))
	if err != nil {
		return 0, "invalid endpoint URL"
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Periscope-Webhooks/1")
	req.Header.Set("webhook-id", del.ID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", sig)
	resp, err := d.Client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, periscope.Clip(err.Error(), 200)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp.StatusCode, ""
	}
	return resp.StatusCode, fmt.Sprintf("HTTP %d", resp.StatusCode)
}

// nextAttempt is when to retry after this failed attempt: 5 s doubling per
// attempt up to 6 h, with ±25% jitter so endpoints that failed together do
// not retry together; 0 once the delivery is older than MaxAge.
func (d *Dispatcher) nextAttempt(del alertstore.Delivery) int64 {
	n := float64(del.Attempts) // attempts before this one
	wait := math.Min(5*math.Pow(2, n), 6*3600)
	wait *= 0.75 + 0.5*mrand.Float64()
	next := d.Now().Add(time.Duration(wait * float64(time.Second)))
	if next.After(time.Unix(del.CreatedAt, 0).Add(d.MaxAge)) {
		return 0
	}
	return next.Unix()
}

// Service is what the API needs of alerts: the store, plus test deliveries.
type Service struct {
	*alertstore.Store
	DB *store.Store
	// Delivered, when set, wakes the dispatcher after a test is enqueued.
	Delivered func()
}

// SendTest enqueues a test message to an endpoint (delivered like any
// other, whatever its severity and types) and returns its webhook-id.
func (s *Service) SendTest(ctx context.Context, e alertstore.Endpoint) (string, error) {
	now := s.DB.Now()
	al := alertstore.Alert{ID: "test", Type: TypeTest, Severity: "info", State: alertstore.StateOpen, OrganizationID: e.OrganizationID,
		Title: "Periscope webhook test", Message: "This is a test delivery to check the endpoint and its signature.",
		Count: 1, FirstSeen: now.Unix(), LastSeen: now.Unix(), Evidence: []byte(`{}`)}
	body, err := Payload(e.Format, "webhook.test", al, now)
	if err != nil {
		return "", err
	}
	d := alertstore.Delivery{EndpointID: e.ID, Event: "webhook.test", Payload: body}
	if err := s.DB.Tx(ctx, func(tx *store.Tx) error { return s.Store.Enqueue(ctx, tx, &d) }); err != nil {
		return "", err
	}
	if s.Delivered != nil {
		s.Delivered()
	}
	return d.ID, nil
}
