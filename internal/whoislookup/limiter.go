package whoislookup

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// ThrottledError means an upstream host may not be asked now: its bucket
// would make the caller wait too long, or it told us to back off.
type ThrottledError struct {
	Host       string
	RetryAfter time.Duration
}

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("upstream %s throttled; retry after %s", e.Host, e.RetryAfter.Round(time.Second))
}

// Limiter is a token bucket per upstream host, with backoff when a host
// answers 429 or a "limit exceeded" text. Registries ban clients that ask
// too fast; this is what keeps Periscope off their lists.
type Limiter struct {
	rate    float64 // tokens a second
	burst   float64
	maxWait time.Duration
	now     func() time.Time
	sleep   func(ctx context.Context, d time.Duration) error

	mu    sync.Mutex
	hosts map[string]*bucket
}

type bucket struct {
	turn         sync.Mutex // callers for one host take turns, so tokens are taken in real time
	waiting      int        // callers queued on turn (under Limiter.mu)
	tokens       float64
	last         time.Time
	blockedUntil time.Time
	backoff      time.Duration
}

// NewLimiter allows perMinute requests a minute to each host, in bursts of
// at most burst; a caller waits at most maxWait for its turn.
func NewLimiter(perMinute float64, burst int, maxWait time.Duration, now func() time.Time) *Limiter {
	if burst < 1 {
		burst = 1
	}
	return &Limiter{rate: perMinute / 60, burst: float64(burst), maxWait: maxWait, now: now,
		sleep: sleepCtx, hosts: map[string]*bucket{}}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func hostOf(s string) string {
	if h, _, err := net.SplitHostPort(s); err == nil {
		return strings.ToLower(h)
	}
	return strings.ToLower(s)
}

// Wait takes a token for host, sleeping until one is there. Callers for one
// host queue and a token is only taken at the moment it exists, so in any
// real window of W seconds a host gets at most burst + rate*W requests, even
// when sleeps overrun. A caller whose turn would come later than maxWait is
// refused at once with a ThrottledError.
func (l *Limiter) Wait(ctx context.Context, host string) error {
	host = hostOf(host)
	l.mu.Lock()
	now := l.now()
	b := l.hosts[host]
	if b == nil {
		b = &bucket{tokens: l.burst, last: now}
		l.hosts[host] = b
	}
	if now.Before(b.blockedUntil) {
		l.mu.Unlock()
		return &ThrottledError{Host: host, RetryAfter: b.blockedUntil.Sub(now)}
	}
	tokens := min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.rate)
	if ahead := float64(b.waiting) + 1 - tokens; ahead > 0 {
		if wait := time.Duration(ahead / l.rate * float64(time.Second)); wait > l.maxWait {
			l.mu.Unlock()
			return &ThrottledError{Host: host, RetryAfter: wait}
		}
	}
	b.waiting++
	l.mu.Unlock()

	b.turn.Lock()
	defer b.turn.Unlock()
	l.mu.Lock()
	defer func() { b.waiting--; l.mu.Unlock() }()
	for {
		now := l.now()
		if now.Before(b.blockedUntil) {
			return &ThrottledError{Host: host, RetryAfter: b.blockedUntil.Sub(now)}
		}
		b.tokens = min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.rate)
		b.last = now
		if b.tokens >= 1 {
			b.tokens--
			return nil
		}
		wait := time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
		l.mu.Unlock()
		err := l.sleep(ctx, wait)
		l.mu.Lock()
		if err != nil {
			return err
		}
	}
}

// Backoff blocks host for retryAfter, or (when zero) for twice the last
// backoff, starting at 30 s and capped at an hour.
func (l *Limiter) Backoff(host string, retryAfter time.Duration) time.Duration {
	host = hostOf(host)
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.hosts[host]
	if b == nil {
		b = &bucket{tokens: 0, last: l.now()}
		l.hosts[host] = b
	}
	d := retryAfter
	if d <= 0 {
		d = max(30*time.Second, 2*b.backoff)
	}
	d = min(d, time.Hour)
	b.backoff = d
	b.blockedUntil = l.now().Add(d)
	return d
}

// OK clears host's backoff after a good answer.
func (l *Limiter) OK(host string) {
	host = hostOf(host)
	l.mu.Lock()
	if b := l.hosts[host]; b != nil {
		b.backoff = 0
	}
	l.mu.Unlock()
}
