package ratelimit

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestClientLoggerJSONAndRateLimited: 25 lines of the Redis client in 3 s
// (an outage) give one JSON record; the next after ErrorLogEvery says how
// many were dropped.
func TestClientLoggerJSONAndRateLimited(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	l := &clientLogger{log: slog.New(slog.NewJSONHandler(&buf, nil)), now: func() time.Time { return now }}
	for range 25 {
		l.Printf(context.Background(), "redis: connection pool: failed to dial after %d attempts: %s", 5, "dial tcp 127.0.0.1:6379: connect: connection refused")
		now = now.Add(120 * time.Millisecond)
	}
	now = now.Add(ErrorLogEvery)
	l.Printf(context.Background(), "redis: still down")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(lines), buf.String())
	}
	for _, ln := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(ln), &m); err != nil {
			t.Fatalf("not JSON: %s", ln)
		}
	}
	if !strings.Contains(lines[1], `"dropped_since_last":24`) {
		t.Fatalf("second line: %s", lines[1])
	}
}
