package ratelimit

import (
	"testing"
	"time"
)

func TestFixedWindowWithFrozenClock(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 30, 0, time.UTC)
	l := New()
	l.Now = func() time.Time { return now }
	for i := 1; i <= 3; i++ {
		r := l.Allow("k", 3)
		if !r.Allowed || r.Remaining != 3-i || r.Limit != 3 {
			t.Fatalf("request %d: %+v", i, r)
		}
	}
	r := l.Allow("k", 3)
	if r.Allowed || r.Remaining != 0 {
		t.Fatalf("4th request allowed: %+v", r)
	}
	if got := r.RetryAfter(now); got != 30 {
		t.Fatalf("RetryAfter = %d, want 30", got)
	}
	if want := time.Date(2026, 11, 22, 10, 1, 0, 0, time.UTC); !r.Reset.Equal(want) {
		t.Fatalf("Reset = %v", r.Reset)
	}
	if !l.Allow("other", 3).Allowed {
		t.Fatal("keys share a count")
	}
	if p := l.Peek("k", 3); p.Allowed {
		t.Fatal("Peek allowed a spent key")
	}
	now = now.Add(30 * time.Second) // next window
	if r := l.Allow("k", 3); !r.Allowed || r.Remaining != 2 {
		t.Fatalf("after window: %+v", r)
	}
	if r := l.Allow("k", 0); !r.Allowed {
		t.Fatal("limit 0 must be unlimited")
	}
}
