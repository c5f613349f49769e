// Package lease runs background jobs on one instance at a time when several
// instances of Periscope share one PostgreSQL database. A job holds a named
// lease (a row of the leases table: holder and expiry, on the database's
// clock) while it runs and renews it every TTL/3; an instance that dies
// stops renewing, its lease expires, and another instance, trying every
// TTL/3, takes the job over: within TTL + TTL/3 of the last renewal. An
// instance that cannot renew for 2/3 of the TTL (the database unreachable
// or the lease taken) stops its job before the lease can pass to another.
//
// On SQLite, one process owns the database, so it always holds every lease.
package lease

import (
	"context"
	crand "crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"time"

	"github.com/periscope-oss/periscope/internal/store"
)

// DefaultTTL is how long a lease lasts without renewal.
const DefaultTTL = 30 * time.Second

// Options configure a Manager.
type Options struct {
	// TTL is how long a lease lasts without renewal (default DefaultTTL).
	TTL time.Duration
	// Holder names this instance in the leases table (default host name,
	// process id and a random suffix).
	Holder string
	// Log receives acquisitions, losses and errors; nil discards.
	Log *slog.Logger
}

// Manager takes, renews and releases the leases of one instance.
type Manager struct {
	db     *sql.DB
	rebind func(string) string
	solo   bool
	ttl    time.Duration
	holder string
	log    *slog.Logger
}

// New returns the lease manager of st's database.
func New(st *store.Store, opts Options) *Manager {
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.Holder == "" {
		opts.Holder = defaultHolder()
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &Manager{db: st.DB(), rebind: st.Rebind, solo: st.Dialect().SingleProcess(), ttl: opts.TTL,
		holder: opts.Holder, log: opts.Log}
}

func defaultHolder() string {
	host, _ := os.Hostname()
	var b [4]byte
	crand.Read(b[:])
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// Holder returns the name this instance holds leases under.
func (m *Manager) Holder() string { return m.holder }

// TTL returns the lease time.
func (m *Manager) TTL() time.Duration { return m.ttl }

// SQL of the leases table (PostgreSQL only). One upsert both takes a free
// or expired lease and renews one's own: it changes a row only when the
// lease is this holder's or has expired, so RowsAffected says whether the
// lease is held. Times are the database's, so the instances' clocks never
// have to agree.
const (
	takeSQL = `INSERT INTO leases (name, holder, acquired_at, expires_at)
		VALUES (?, ?, clock_timestamp(), clock_timestamp() + ?::bigint * interval '1 millisecond')
		ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at,
			acquired_at = CASE WHEN leases.holder = EXCLUDED.holder THEN leases.acquired_at ELSE EXCLUDED.acquired_at END
		WHERE leases.holder = EXCLUDED.holder OR leases.expires_at < clock_timestamp()`
	releaseSQL = `DELETE FROM leases WHERE name = ? AND holder = ?`
	holderSQL  = `SELECT holder FROM leases WHERE name = ? AND expires_at >= clock_timestamp()`
)

// take takes or renews the lease name for one TTL and reports whether this
// instance holds it.
func (m *Manager) take(ctx context.Context, name string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, m.ttl/3)
	defer cancel()
	res, err := m.db.ExecContext(ctx, m.rebind(takeSQL), name, m.holder, m.ttl.Milliseconds())
	if err != nil {
		return false, fmt.Errorf("take lease %s: %w", name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("take lease %s: %w", name, err)
	}
	return n == 1, nil
}

// release gives the lease up, so another instance takes the job at its next
// try instead of after the TTL.
func (m *Manager) release(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := m.db.ExecContext(ctx, m.rebind(releaseSQL), name, m.holder); err != nil {
		m.log.Warn("lease: release failed; it expires by itself", "lease", name, "err", err)
	}
}

// Holder returns who holds the lease name now ("" when nobody does). On
// SQLite it is always this instance.
func (m *Manager) HolderOf(ctx context.Context, name string) (string, error) {
	if m.solo {
		return m.holder, nil
	}
	var h string
	err := m.db.QueryRowContext(ctx, m.rebind(holderSQL), name).Scan(&h)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read lease %s: %w", name, err)
	}
	return h, nil
}

// errLost reports that a job was stopped because its lease could not be
// kept.
var errLost = errors.New("lease lost")

// Run runs job while this instance holds the lease name, until ctx is
// done: it waits for the lease, runs job with a context cancelled when the
// lease is lost, and when job stops because of that, waits for the lease
// again. When job returns by itself, Run releases the lease and returns
// job's error. On SQLite Run is job(ctx).
func (m *Manager) Run(ctx context.Context, name string, job func(context.Context) error) error {
	if m.solo {
		return job(ctx)
	}
	for {
		held, err := m.take(ctx, name)
		if err != nil && ctx.Err() == nil {
			m.log.Warn("lease: cannot take", "lease", name, "err", err)
		}
		if held {
			m.log.Info("lease acquired: job starts here", "lease", name, "holder", m.holder)
			err := m.hold(ctx, name, job)
			if !errors.Is(err, errLost) {
				return err
			}
			m.log.Warn("lease lost: job stopped here", "lease", name, "holder", m.holder)
		}
		// Jitter, so instances started together do not try in lockstep.
		wait := m.ttl/3 - time.Duration(rand.Int64N(int64(m.ttl/12)+1))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// hold runs job while renewing the lease. It returns errLost when the
// lease could not be kept (job stopped), else job's error after releasing.
func (m *Manager) hold(ctx context.Context, name string, job func(context.Context) error) error {
	jctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- job(jctx) }()
	t := time.NewTicker(m.ttl / 3)
	defer t.Stop()
	renewed := time.Now()
	for {
		select {
		case err := <-done:
			m.release(name)
			return err
		case <-t.C:
			held, err := m.take(ctx, name)
			if held {
				renewed = time.Now()
				continue
			}
			if ctx.Err() != nil {
				continue // shutting down: the done case follows
			}
			if err != nil && time.Since(renewed) < 2*m.ttl/3 {
				m.log.Warn("lease: renewal failed; retrying", "lease", name, "err", err)
				continue
			}
			// Taken by another instance, or not renewed for 2/3 of the
			// TTL: stop before another can take it over.
			stop()
			<-done
			return errLost
		}
	}
}
