package ratelimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Counter counts requests per key in fixed windows aligned to the clock.
// Limiter counts in this process; Redis counts for every instance sharing
// one Redis.
type Counter interface {
	// Allow counts one request for key against limit requests per window
	// (a limit of 0 or less is unlimited).
	Allow(key string, limit int) Result
	// Peek reports the state for key without counting a request.
	Peek(key string, limit int) Result
}

var _ Counter = (*Limiter)(nil)
var _ Counter = (*Redis)(nil)

// allowScript is one fixed-window step, atomic in Redis: it reads the
// window's count and, when counting and under the limit, increments it (the
// first increment sets the key's expiry). A refused request is not counted,
// as in Limiter, so a client that keeps retrying does not push its own
// count further. It returns {allowed, count}.
var allowScript = redis.NewScript(`
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
local limit = tonumber(ARGV[1])
if n >= limit then return {0, n} end
if ARGV[3] == '1' then
  n = redis.call('INCR', KEYS[1])
  if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
end
return {1, n}
`)

// Redis is a Counter shared by every instance using the same Redis: a
// key's count is one INCR-ed integer per window, named by the key and the
// window's start. Windows are aligned to each instance's clock, so keep
// the instances' clocks synchronised (NTP); the counts agree as long as
// the clocks agree to well under a window.
//
// When Redis cannot be reached within Timeout, a request is allowed (not
// counted) and the error is logged at most once per ErrorLogEvery: the
// limits protect the service, and losing them for the length of a Redis
// outage is better than refusing every request.
type Redis struct {
	// Now is the clock; tests freeze it.
	Now     func() time.Time
	Window  time.Duration
	Timeout time.Duration // per call (default 250ms)
	Log     *slog.Logger

	client  *redis.Client
	prefix  string
	lastLog *atomic.Int64 // unix nanoseconds of the last logged error
	errors  *atomic.Int64
}

// ErrorLogEvery is how often a failing Redis is logged.
const ErrorLogEvery = 10 * time.Second

// NewRedis connects to the Redis at url (redis://[user:password@]host:port/db
// or rediss:// for TLS) and checks it answers. Counts are kept under keys
// starting with prefix.
func NewRedis(ctx context.Context, url, prefix string) (*Redis, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("rate-limit store: %w", err)
	}
	c := redis.NewClient(opts)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.Ping(pctx).Err(); err != nil {
		c.Close()
		return nil, fmt.Errorf("rate-limit store %s:%s: %w", opts.Addr, strconv.Itoa(opts.DB), err)
	}
	return &Redis{Now: time.Now, Window: time.Minute, Timeout: 250 * time.Millisecond,
		Log: slog.New(slog.DiscardHandler), client: c, prefix: prefix,
		lastLog: new(atomic.Int64), errors: new(atomic.Int64)}, nil
}

// WithPrefix returns a Counter on the same connection whose keys start
// with prefix instead (so two limiters never share a count).
func (r *Redis) WithPrefix(prefix string) *Redis {
	n := *r
	n.prefix = prefix
	return &n
}

// Close closes the connection (of every Redis made by WithPrefix too).
func (r *Redis) Close() error { return r.client.Close() }

// Errors returns how many calls failed (and were allowed) so far.
func (r *Redis) Errors() int64 { return r.errors.Load() }

// Allow implements Counter.
func (r *Redis) Allow(key string, limit int) Result { return r.take(key, limit, true) }

// Peek implements Counter.
func (r *Redis) Peek(key string, limit int) Result { return r.take(key, limit, false) }

func (r *Redis) take(key string, limit int, count bool) Result {
	now := r.Now()
	start := now.Truncate(r.Window)
	reset := start.Add(r.Window)
	if limit <= 0 {
		return Result{Allowed: true, Reset: reset}
	}
	// The key outlives its window by one more, so a clock slightly behind
	// still finds the count.
	ttl := reset.Sub(now) + r.Window
	k := r.prefix + key + ":" + strconv.FormatInt(start.Unix(), 10)
	c := "0"
	if count {
		c = "1"
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.Timeout)
	defer cancel()
	v, err := allowScript.Run(ctx, r.client, []string{k}, limit, ttl.Milliseconds(), c).Int64Slice()
	if err == nil && len(v) != 2 {
		err = fmt.Errorf("unexpected script answer %v", v)
	}
	if err != nil {
		r.failed(err)
		return Result{Allowed: true, Limit: limit, Remaining: limit, Reset: reset}
	}
	n := int(v[1])
	return Result{Allowed: v[0] == 1, Limit: limit, Remaining: max(0, limit-n), Reset: reset}
}

func (r *Redis) failed(err error) {
	r.errors.Add(1)
	now := time.Now().UnixNano()
	last := r.lastLog.Load()
	if now-last >= int64(ErrorLogEvery) && r.lastLog.CompareAndSwap(last, now) {
		r.Log.Error("rate-limit store unreachable; requests are not limited until it answers", "err", err, "failures", r.errors.Load())
	}
}

// RandomPrefix returns a fresh key prefix (for tests that share one Redis).
func RandomPrefix(name string) string {
	var b [6]byte
	rand.Read(b[:])
	return name + ":" + hex.EncodeToString(b[:]) + ":"
}
