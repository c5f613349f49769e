package store

import (
	"context"
	"errors"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// A request that finds SQLite's write lock taken waits up to the busy
// timeout (BusyTimeout), then fails busy and answers 503: a client can try
// again. A background writer has no client: behind a long write of another
// process (a large ingest's transactions) it waits its turn however long
// that takes, so that its step completes once the writer is done instead
// of failing and logging the wait as an error. PostgreSQL writers wait for
// their locks anyway.

type patientKey struct{}

// Patient marks ctx as a background writer's: the store's transactions
// (Tx, Begin) and statements (Exec, ExecPrepared) under it that find the
// SQLite write lock held past the busy timeout wait again, until they get
// it or ctx ends, instead of failing with SQLITE_BUSY.
func Patient(ctx context.Context) context.Context {
	return context.WithValue(ctx, patientKey{}, true)
}

func patient(ctx context.Context) bool {
	p, _ := ctx.Value(patientKey{}).(bool)
	return p
}

// IsBusy reports whether err is SQLite's "database is locked" (busy or
// locked, whatever the extended code): another connection held the lock
// for longer than the busy timeout.
func IsBusy(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	c := e.Code() & 0xff
	return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
}

// busyPause is the pause between two waits for the write lock (each wait
// is itself up to the busy timeout long).
const busyPause = 50 * time.Millisecond

// inTurn runs fn, a step that changes nothing when it fails busy (taking
// the write lock, one statement outside a transaction), and under a
// patient ctx runs it again as long as it fails busy.
func inTurn[T any](ctx context.Context, fn func() (T, error)) (T, error) {
	for {
		v, err := fn()
		if err == nil || !patient(ctx) || !IsBusy(err) {
			return v, err
		}
		t := time.NewTimer(busyPause)
		select {
		case <-ctx.Done():
			t.Stop()
			return v, err
		case <-t.C:
		}
	}
}
