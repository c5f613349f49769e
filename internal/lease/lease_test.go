package lease

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// instance is one Manager on its own connection pool to the shared
// database, as a separate process would have.
type instance struct {
	name    string
	st      *store.Store
	m       *Manager
	cancel  context.CancelFunc
	done    chan error
	running atomic.Bool
	starts  atomic.Int32
}

// jobRecorder watches how many instances run the job at once.
type jobRecorder struct {
	now, most atomic.Int32
}

func (r *jobRecorder) job(in *instance) func(context.Context) error {
	return func(ctx context.Context) error {
		if n := r.now.Add(1); n > r.most.Load() {
			r.most.Store(n)
		}
		in.running.Store(true)
		in.starts.Add(1)
		<-ctx.Done()
		in.running.Store(false)
		r.now.Add(-1)
		return ctx.Err()
	}
}

func startInstance(t *testing.T, dsn, name string, ttl time.Duration, rec *jobRecorder) *instance {
	t.Helper()
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	in := &instance{name: name, st: st, m: New(st, Options{TTL: ttl, Holder: name}), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	in.cancel = cancel
	go func() { in.done <- in.m.Run(ctx, "test-job", rec.job(in)) }()
	t.Cleanup(func() { cancel(); <-in.done })
	return in
}

// waitFor polls cond until it holds or d passes, returning how long it took.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < d {
		if cond() {
			return time.Since(start)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s: not within %v", what, d)
	return 0
}

func TestOneHolderAndTakeover(t *testing.T) {
	if !slices.Contains(storetest.Engines(), "postgres") {
		t.Skip("leases are PostgreSQL's; PERISCOPE_TEST_POSTGRES is not set")
	}
	dsn := storetest.DSN(t, "postgres")
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	const ttl = 1500 * time.Millisecond // generous: renewals must not time out on a loaded machine
	var rec jobRecorder
	a := startInstance(t, dsn, "a", ttl, &rec)
	b := startInstance(t, dsn, "b", ttl, &rec)
	waitFor(t, 2*ttl, "a job running", func() bool { return rec.now.Load() == 1 })
	time.Sleep(3 * ttl) // several renewals: the holder keeps it, the other waits
	if rec.most.Load() != 1 || a.starts.Load()+b.starts.Load() != 1 {
		t.Fatalf("%d instances ran at once; starts a=%d b=%d", rec.most.Load(), a.starts.Load(), b.starts.Load())
	}
	leader, follower := a, b
	if b.running.Load() {
		leader, follower = b, a
	}
	if h, err := a.m.HolderOf(context.Background(), "test-job"); err != nil || h != leader.name {
		t.Fatalf("holder %q (%v), want %s", h, err, leader.name)
	}

	// The leader dies without releasing: its database goes away, so it
	// can neither renew nor release. It stops its job within 2/3 of the
	// TTL, and the other takes over once the lease has expired.
	leader.st.Close()
	took := waitFor(t, 3*ttl, "takeover after the leader died", follower.running.Load)
	if limit := ttl + ttl/3 + 500*time.Millisecond; took > limit {
		t.Fatalf("takeover took %v, more than TTL+TTL/3 (%v)", took, limit)
	}
	if leader.running.Load() || rec.most.Load() != 1 {
		t.Fatalf("two instances ran the job at once (dead leader running: %v, most %d)", leader.running.Load(), rec.most.Load())
	}
	t.Logf("takeover after a dead leader: %v (TTL %v)", took, ttl)

	// A graceful stop releases at once: a third instance takes over at its
	// next try, without waiting for expiry.
	c := startInstance(t, dsn, "c", ttl, &rec)
	follower.cancel()
	<-follower.done
	follower.done <- nil // for the cleanup
	took = waitFor(t, 2*ttl, "takeover after a graceful stop", c.running.Load)
	if took > ttl/3+500*time.Millisecond {
		t.Fatalf("takeover after release took %v, want about TTL/3 (%v)", took, ttl/3)
	}
	if rec.most.Load() != 1 {
		t.Fatalf("%d instances ran at once", rec.most.Load())
	}
}

// TestJobReturnReleases: a job that ends by itself releases its lease and
// Run returns its error.
func TestJobReturnReleases(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			st := storetest.Open(t, engine)
			m := New(st, Options{TTL: time.Second, Holder: "x"})
			var mu sync.Mutex
			ran := 0
			err := m.Run(context.Background(), "once", func(context.Context) error {
				mu.Lock()
				ran++
				mu.Unlock()
				return context.DeadlineExceeded
			})
			if err != context.DeadlineExceeded || ran != 1 {
				t.Fatalf("Run = %v after %d runs", err, ran)
			}
			h, err := m.HolderOf(context.Background(), "once")
			if err != nil {
				t.Fatal(err)
			}
			if want := map[string]string{"sqlite": "x", "postgres": ""}[engine]; h != want {
				t.Fatalf("holder after the job %q, want %q", h, want)
			}
		})
	}
}
