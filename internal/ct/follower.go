package ct

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Checkpoint persists, per log, the index of the next entry to read, so that
// a restarted Follower resumes where it stopped. Load returns 0 for a log
// that was never saved.
type Checkpoint interface {
	Load(log string) (int64, error)
	Save(log string, next int64) error
}

// Follower tails one log from a checkpoint.
type Follower struct {
	Client *Client
	// Log names the log in the checkpoint; it defaults to the client's URL.
	Log string
	// Poll is the wait between get-sth calls once the follower has caught
	// up. Zero means Run returns nil as soon as it has read every entry of
	// the tree head it saw.
	Poll time.Duration
}

// Run reads entries from the checkpointed index up to the log's tree size,
// passing each to emit in order, and saves the checkpoint after every batch
// whose entries emit accepted. With Poll set it then keeps polling get-sth
// until ctx is done (returning ctx.Err()); otherwise it returns nil once
// caught up. An error from emit, the log or the checkpoint stops it; entries
// before the failing batch are already checkpointed.
func (f *Follower) Run(ctx context.Context, checkpoint Checkpoint, emit func(Entry) error) error {
	name := f.Log
	if name == "" {
		name = f.Client.URL()
	}
	next, err := checkpoint.Load(name)
	if err != nil {
		return fmt.Errorf("load checkpoint for %s: %w", name, err)
	}
	if next < 0 {
		return fmt.Errorf("load checkpoint for %s: negative index %d", name, next)
	}
	for {
		sth, err := f.Client.GetSTH(ctx)
		if err != nil {
			return err
		}
		for next < sth.TreeSize {
			hi := min(next+int64(f.Client.opts.BatchSize), sth.TreeSize) - 1
			entries, err := f.Client.Batch(ctx, next, hi)
			if err != nil {
				return err
			}
			for _, e := range entries {
				if err := emit(e); err != nil {
					return fmt.Errorf("ct entry %d of %s: %w", e.Index, name, err)
				}
			}
			next += int64(len(entries))
			if err := checkpoint.Save(name, next); err != nil {
				return fmt.Errorf("save checkpoint %d for %s: %w", next, name, err)
			}
		}
		if f.Poll <= 0 {
			return nil
		}
		if err := f.Client.sleep(ctx, f.Poll); err != nil {
			return err
		}
	}
}

// MemoryCheckpoint is a Checkpoint held in memory, for one-off ingestion and
// tests. The zero value is ready to use.
type MemoryCheckpoint struct {
	mu   sync.Mutex
	next map[string]int64
}

// Load returns the saved index for log, or 0.
func (m *MemoryCheckpoint) Load(log string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.next[log], nil
}

// Save records next for log.
func (m *MemoryCheckpoint) Save(log string, next int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.next == nil {
		m.next = make(map[string]int64)
	}
	m.next[log] = next
	return nil
}
