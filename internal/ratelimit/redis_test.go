package ratelimit

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"
)

// openRedis connects to the Redis of PERISCOPE_TEST_REDIS (CI sets it; see
// .ci/run) with a fresh key prefix.
func openRedis(t testing.TB) *Redis {
	t.Helper()
	url := os.Getenv("PERISCOPE_TEST_REDIS")
	if url == "" {
		t.Skip("PERISCOPE_TEST_REDIS is not set (e.g. redis://127.0.0.1:6379/0): skipping the Redis rate-limit store")
	}
	r, err := NewRedis(context.Background(), url, RandomPrefix("test"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestRedisMatchesInProcess runs one scenario with a frozen clock through
// both counters and requires the same answers.
func TestRedisMatchesInProcess(t *testing.T) {
	r := openRedis(t)
	l := New()
	now := time.Date(2026, 11, 22, 10, 0, 30, 0, time.UTC)
	r.Now, l.Now = func() time.Time { return now }, func() time.Time { return now }
	type step struct {
		peek  bool
		key   string
		limit int
	}
	steps := []step{{false, "k", 3}, {false, "k", 3}, {true, "k", 3}, {false, "k", 3}, {false, "k", 3}, {false, "k", 3},
		{true, "k", 3}, {false, "other", 3}, {false, "k", 0}, {false, "k", 4}, {false, "k", 4}}
	run := func(c Counter, s step) Result {
		if s.peek {
			return c.Peek(s.key, s.limit)
		}
		return c.Allow(s.key, s.limit)
	}
	for i, s := range steps {
		want, got := run(l, s), run(r, s)
		if got != want {
			t.Fatalf("step %d %+v: redis %+v, in-process %+v", i, s, got, want)
		}
	}
	now = now.Add(30 * time.Second) // the next window
	if got, want := r.Allow("k", 3), l.Allow("k", 3); got != want || !got.Allowed || got.Remaining != 2 {
		t.Fatalf("next window: redis %+v, in-process %+v", got, want)
	}
	if r.Errors() != 0 {
		t.Fatalf("%d Redis errors", r.Errors())
	}
}

// TestRedisSharedAcrossInstances: two counters (two instances) on one
// Redis allow exactly limit requests in a window between them, however
// the requests are spread and interleaved.
func TestRedisSharedAcrossInstances(t *testing.T) {
	a := openRedis(t)
	b := a.WithPrefix(a.prefix) // a second instance's counter on the same keys
	now := time.Now()
	a.Now, b.Now = func() time.Time { return now }, func() time.Time { return now }
	const limit, tries = 25, 200
	var mu sync.Mutex
	allowed := 0
	var wg sync.WaitGroup
	for i := range tries {
		c := Counter(a)
		if i%2 == 1 {
			c = b
		}
		wg.Go(func() {
			if c.Allow("key-1|general", limit).Allowed {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if allowed != limit {
		t.Fatalf("%d of %d requests allowed across two instances, want %d", allowed, tries, limit)
	}
	if got := b.Peek("key-1|general", limit); got.Allowed || got.Remaining != 0 {
		t.Fatalf("peek after the limit: %+v", got)
	}
}

// TestRedisDownAllows: an unreachable Redis lets requests through and
// counts the failures.
func TestRedisDownAllows(t *testing.T) {
	r := openRedis(t)
	r.Close()
	if res := r.Allow("k", 1); !res.Allowed {
		t.Fatalf("refused with Redis closed: %+v", res)
	}
	if r.Errors() != 1 {
		t.Fatalf("errors = %d, want 1", r.Errors())
	}
}
