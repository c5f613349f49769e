// Package ratelimit counts requests in fixed one-minute windows per key, in
// memory. Windows are aligned to the clock's minute, so X-RateLimit-Reset is
// the same for every client and easy to reason about.
package ratelimit

import (
	"sync"
	"time"
)

// Limiter counts requests per key. It is safe for concurrent use.
type Limiter struct {
	// Now is the clock; tests freeze it.
	Now    func() time.Time
	Window time.Duration

	mu     sync.Mutex
	start  time.Time
	counts map[string]int
	lastGC time.Time
}

// New returns a limiter with one-minute windows on the real clock.
func New() *Limiter {
	return &Limiter{Now: time.Now, Window: time.Minute, counts: map[string]int{}}
}

// Result is the outcome of one Allow call, carrying what the
// X-RateLimit-* headers say.
type Result struct {
	Allowed   bool
	Limit     int
	Remaining int
	Reset     time.Time // when the current window ends
}

// RetryAfter returns whole seconds until Reset, at least 1.
func (r Result) RetryAfter(now time.Time) int {
	s := int(r.Reset.Sub(now).Seconds() + 0.999)
	if s < 1 {
		s = 1
	}
	return s
}

// Allow counts one request for key against limit requests per window. A
// limit of 0 or less means unlimited.
func (l *Limiter) Allow(key string, limit int) Result {
	return l.take(key, limit, true)
}

// Peek reports the state for key without counting a request.
func (l *Limiter) Peek(key string, limit int) Result {
	return l.take(key, limit, false)
}

func (l *Limiter) take(key string, limit int, count bool) Result {
	now := l.Now()
	start := now.Truncate(l.Window)
	reset := start.Add(l.Window)
	if limit <= 0 {
		return Result{Allowed: true, Limit: 0, Remaining: 0, Reset: reset}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !start.Equal(l.start) {
		// A new window: every count starts again. Reuse the map unless it grew
		// large, so a burst of one-off keys (failed-auth IPs) does not stay.
		if len(l.counts) > 4096 {
			l.counts = map[string]int{}
		} else {
			clear(l.counts)
		}
		l.start = start
	}
	n := l.counts[key]
	if count {
		if n >= limit {
			return Result{Allowed: false, Limit: limit, Remaining: 0, Reset: reset}
		}
		n++
		l.counts[key] = n
	} else if n >= limit {
		return Result{Allowed: false, Limit: limit, Remaining: 0, Reset: reset}
	}
	return Result{Allowed: true, Limit: limit, Remaining: limit - n, Reset: reset}
}
