package activescan

import (
	"context"
	"sync"
)

// fairSlots is a counting semaphore that serves waiters in arrival order:
// a scan that gives its slot back between slices (yield) queues behind the
// scans already waiting, so one organization's large range never holds a
// slot while another's host scan waits.
type fairSlots struct {
	mu      sync.Mutex
	free    int
	waiters []chan struct{}
}

func newFairSlots(n int) *fairSlots { return &fairSlots{free: n} }

// acquire waits for a slot, in arrival order, until ctx ends.
func (f *fairSlots) acquire(ctx context.Context) error {
	f.mu.Lock()
	if f.free > 0 && len(f.waiters) == 0 {
		f.free--
		f.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	f.waiters = append(f.waiters, ch)
	f.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		f.mu.Lock()
		defer f.mu.Unlock()
		for i, w := range f.waiters {
			if w == ch {
				f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
				return ctx.Err()
			}
		}
		// Handed a slot as ctx ended: give it on.
		f.releaseLocked()
		return ctx.Err()
	}
}

// release gives a slot back, to the longest waiter if any.
func (f *fairSlots) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.releaseLocked()
}

func (f *fairSlots) releaseLocked() {
	if len(f.waiters) > 0 {
		ch := f.waiters[0]
		f.waiters = f.waiters[1:]
		close(ch)
		return
	}
	f.free++
}

// yield gives the slot back and queues for it again behind the scans
// waiting now.
func (f *fairSlots) yield(ctx context.Context) error {
	f.mu.Lock()
	if len(f.waiters) == 0 {
		f.mu.Unlock()
		return nil
	}
	f.releaseLocked()
	f.mu.Unlock()
	return f.acquire(ctx)
}
