package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// clientLogger takes the Redis client's own log lines (its connection
// pool's errors during an outage, written to stderr as plain text by
// default) into the service's JSON log, at most one line every
// ErrorLogEvery with the number of lines dropped since the last.
type clientLogger struct {
	log     *slog.Logger
	now     func() time.Time
	last    atomic.Int64 // unix nanoseconds of the last line written
	dropped atomic.Int64
}

func (l *clientLogger) Printf(_ context.Context, format string, v ...any) {
	now := l.now().UnixNano()
	last := l.last.Load()
	if last != 0 && now-last < int64(ErrorLogEvery) || !l.last.CompareAndSwap(last, now) {
		l.dropped.Add(1)
		return
	}
	l.log.Warn("redis client", "err", fmt.Sprintf(format, v...), "dropped_since_last", l.dropped.Swap(0))
}

// SetClientLogger sends the Redis client's own log lines (the client's
// logger is global to the process) to log, rate-limited.
func SetClientLogger(log *slog.Logger) {
	redis.SetLogger(&clientLogger{log: log, now: time.Now})
}
