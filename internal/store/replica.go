package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Read replicas (PostgreSQL streaming replicas). A request marked with
// ReplicaReads may have its reads (Query, QueryRow, QueryRowPrepared,
// Reader) served by a replica, and only by one that has replayed every
// write committed on the primary before the request's first read: the
// primary's WAL position is read once a request (one tiny query) and the
// replica must have replayed up to it. So a write is visible to its author,
// and to anyone else, on the very next request, across instances, with no
// per-account state. A replica that is down, or behind by more than the
// maximum lag, is skipped until a health check finds it back; with none
// usable, reads go to the primary. Writes and transactions always go to the
// primary.

// replicaWait is how long a read waits for a healthy replica to replay up
// to the request's position before it reads from the primary instead.
const replicaWait = 20 * time.Millisecond

// replicaCheckEvery is how often each replica's health and lag are read.
const replicaCheckEvery = 250 * time.Millisecond

type replica struct {
	db    *sql.DB
	stmts sync.Map // query text → *sql.Stmt
	// healthy: reachable and within the maximum lag at the last check.
	healthy atomic.Bool
	// replayed is the WAL position it had replayed at the last check.
	replayed atomic.Uint64
	lagNanos atomic.Int64
	lagBytes atomic.Int64
	reads    atomic.Int64 // requests whose reads it served
	failures atomic.Int64 // failed checks and failed reads
}

type replicaSet struct {
	primary *sql.DB
	list    []*replica
	maxLag  time.Duration
	next    atomic.Uint64
	stop    context.CancelFunc
	done    chan struct{}
	// samples are the primary's recent WAL positions, to turn a
	// replica's replay position into a lag in time.
	mu      sync.Mutex
	samples []lsnSample
	// primaryReads counts marked requests that read from the primary.
	primaryReads atomic.Int64
}

type lsnSample struct {
	at  time.Time
	lsn uint64
}

// ReplicaStat is one replica's state, for metrics (no DSN: it may hold a
// password).
type ReplicaStat struct {
	Index    int
	Healthy  bool
	Lag      time.Duration
	LagBytes int64
	Reads    int64
	Failures int64
}

// Replicas makes Open connect to PostgreSQL streaming replicas of the
// primary for the reads of requests marked with ReplicaReads; a replica
// more than maxLag behind is skipped.
func Replicas(dsns []string, maxLag time.Duration) Option {
	return func(o *options) { o.replicas, o.replicaMaxLag = dsns, maxLag }
}

func (s *Store) openReplicas(ctx context.Context, dsns []string, maxLag time.Duration) error {
	if len(dsns) == 0 {
		return nil
	}
	if s.dialect.name() != "postgres" {
		return errors.New("read replicas need a PostgreSQL primary (--database postgres://…)")
	}
	if maxLag <= 0 {
		maxLag = 5 * time.Second
	}
	rs := &replicaSet{primary: s.db, maxLag: maxLag}
	for i, dsn := range dsns {
		if dialectFor(dsn).name() != "postgres" {
			rs.close()
			return fmt.Errorf("read replica %d: not a postgres:// URL", i)
		}
		db, err := s.dialect.open(dsn, options{})
		if err != nil {
			rs.close()
			return fmt.Errorf("open read replica %d: %w", i, err)
		}
		s.dialect.configure(db)
		rs.list = append(rs.list, &replica{db: db})
	}
	cctx, stop := context.WithCancel(context.Background())
	rs.stop, rs.done = stop, make(chan struct{})
	rs.check(ctx) // a replica that is down at start is only skipped
	go rs.loop(cctx)
	s.replicas = rs
	return nil
}

func (rs *replicaSet) loop(ctx context.Context) {
	defer close(rs.done)
	t := time.NewTicker(replicaCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			rs.check(ctx)
		}
	}
}

const (
	sqlPrimaryLSN = `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint`
	// A replica's replay position; NULL on a server that is not one.
	sqlReplayLSN = `SELECT pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')::bigint`
)

// check reads the primary's position and each replica's, and marks each
// replica healthy when it answers and is within the maximum lag.
func (rs *replicaSet) check(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var primary int64
	if err := rs.primary.QueryRowContext(cctx, sqlPrimaryLSN).Scan(&primary); err != nil {
		return // the primary's own trouble is reported elsewhere
	}
	now := time.Now()
	rs.mu.Lock()
	rs.samples = append(rs.samples, lsnSample{at: now, lsn: uint64(primary)})
	// Keep samples for twice the maximum lag.
	keep := 0
	for keep < len(rs.samples)-1 && now.Sub(rs.samples[keep].at) > 2*rs.maxLag {
		keep++
	}
	rs.samples = rs.samples[keep:]
	samples := append([]lsnSample(nil), rs.samples...)
	rs.mu.Unlock()
	for _, r := range rs.list {
		var replayed sql.NullInt64
		if err := r.db.QueryRowContext(cctx, sqlReplayLSN).Scan(&replayed); err != nil || !replayed.Valid {
			if r.healthy.Swap(false) || err != nil {
				r.failures.Add(1)
			}
			continue
		}
		r.replayed.Store(uint64(replayed.Int64))
		lag := lagOf(samples, uint64(replayed.Int64), now)
		r.lagNanos.Store(int64(lag))
		r.lagBytes.Store(max(0, primary-replayed.Int64))
		r.healthy.Store(lag <= rs.maxLag)
	}
}

// lagOf is how long ago the primary was at the position a replica has
// replayed: zero when it has replayed all the primary had at the last
// sample, else the age of the oldest sample beyond its position.
func lagOf(samples []lsnSample, replayed uint64, now time.Time) time.Duration {
	for i := len(samples) - 1; i >= 0; i-- {
		if samples[i].lsn <= replayed {
			if i == len(samples)-1 {
				return 0
			}
			return now.Sub(samples[i+1].at)
		}
	}
	if len(samples) == 0 {
		return 0
	}
	return now.Sub(samples[0].at) + replicaCheckEvery
}

func (rs *replicaSet) close() {
	if rs.stop != nil {
		rs.stop()
		<-rs.done
	}
	for _, r := range rs.list {
		r.stmts.Range(func(_, v any) bool {
			v.(*sql.Stmt).Close()
			return true
		})
		r.db.Close()
	}
}

// replicaReads is the per-request state of ReplicaReads.
type replicaReads struct {
	once   sync.Once
	chosen *replica // nil: the primary
}

type replicaReadsKey struct{}

// ReplicaReads marks ctx's reads as allowed on a read replica (a request
// that only reads). Without replicas it changes nothing.
func ReplicaReads(ctx context.Context) context.Context {
	return context.WithValue(ctx, replicaReadsKey{}, &replicaReads{})
}

// reader returns the replica ctx's reads go to, or nil for the primary.
func (s *Store) reader(ctx context.Context) *replica {
	rs := s.replicas
	if rs == nil {
		return nil
	}
	st, ok := ctx.Value(replicaReadsKey{}).(*replicaReads)
	if !ok {
		return nil
	}
	st.once.Do(func() {
		st.chosen = rs.choose(ctx)
		if st.chosen == nil {
			rs.primaryReads.Add(1)
		} else {
			st.chosen.reads.Add(1)
		}
	})
	return st.chosen
}

// choose picks a healthy replica that has replayed the primary's current
// position, waiting up to replicaWait for one to get there. A replica that
// does not answer is marked down at once.
func (rs *replicaSet) choose(ctx context.Context) *replica {
	var healthy []*replica
	for _, r := range rs.list {
		if r.healthy.Load() {
			healthy = append(healthy, r)
		}
	}
	if len(healthy) == 0 {
		return nil
	}
	var target int64
	if err := rs.primary.QueryRowContext(ctx, sqlPrimaryLSN).Scan(&target); err != nil {
		return nil
	}
	start := int(rs.next.Add(1))
	deadline := time.Now().Add(replicaWait)
	for {
		for i := range healthy {
			// Asked every time, not taken from the last check: the
			// answer is also the proof that the replica is up now.
			r := healthy[(start+i)%len(healthy)]
			var replayed sql.NullInt64
			if err := r.db.QueryRowContext(ctx, sqlReplayLSN).Scan(&replayed); err != nil || !replayed.Valid {
				r.healthy.Store(false)
				r.failures.Add(1)
				continue
			}
			r.replayed.Store(uint64(replayed.Int64))
			if replayed.Int64 >= target {
				return r
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// ReplicaStats returns each replica's state (nil without replicas) and how
// many marked requests read from the primary.
func (s *Store) ReplicaStats() (stats []ReplicaStat, primaryReads int64) {
	rs := s.replicas
	if rs == nil {
		return nil, 0
	}
	for i, r := range rs.list {
		stats = append(stats, ReplicaStat{Index: i, Healthy: r.healthy.Load(), Lag: time.Duration(r.lagNanos.Load()),
			LagBytes: r.lagBytes.Load(), Reads: r.reads.Load(), Failures: r.failures.Load()})
	}
	return stats, rs.primaryReads.Load()
}

// Reader returns the handle ctx's reads go to: a replica for a request
// marked with ReplicaReads when one is usable, else the primary. For
// capability packages that read through DB().
func (s *Store) Reader(ctx context.Context) *sql.DB {
	if r := s.reader(ctx); r != nil {
		return r.db
	}
	return s.db
}

// failed records a read that failed on a replica for a reason of the
// connection (the next check decides whether it is back).
func (r *replica) failed(err error) {
	if err != nil && !errors.Is(err, sql.ErrNoRows) && !errors.Is(err, context.Canceled) {
		r.failures.Add(1)
		r.healthy.Store(false)
	}
}

// queryRowPrepared runs a one-row query (rebound) through the replica's own
// statement cache.
func (r *replica) queryRowPrepared(ctx context.Context, q string, args ...any) (*sql.Row, error) {
	if st, ok := r.stmts.Load(q); ok {
		return st.(*sql.Stmt).QueryRowContext(ctx, args...), nil
	}
	st, err := r.db.PrepareContext(ctx, q)
	if err != nil {
		r.failed(err)
		return nil, err
	}
	if prev, loaded := r.stmts.LoadOrStore(q, st); loaded {
		st.Close()
		st = prev.(*sql.Stmt)
	}
	return st.QueryRowContext(ctx, args...), nil
}
