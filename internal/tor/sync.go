package tor

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"
)

// Store keeps the exits a list names (*torstore.Store).
type Store interface {
	Load(ctx context.Context, source string, exits []Exit) error
}

// maxListBytes bounds a downloaded list: the Tor Project's is under 1 MiB.
const maxListBytes = 16 << 20

// Syncer downloads a list and stores it, every Interval.
type Syncer struct {
	Store    Store
	Client   *http.Client // through the egress dialer
	URL      string
	Interval time.Duration
	Log      *slog.Logger
}

// Read parses a whole list into memory (a list is a few thousand exits).
func Read(r io.Reader) ([]Exit, error) {
	var out []Exit
	_, err := Parse(r, func(e Exit) error {
		out = append(out, e)
		return nil
	})
	return out, err
}

// Sync downloads the list once and stores it; it returns how many exits it
// stored.
func (s *Syncer) Sync(ctx context.Context) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	if err != nil {
		return 0, fmt.Errorf("tor exit list %s: %w", s.URL, err)
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("tor exit list: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("tor exit list %s: HTTP %d", s.URL, resp.StatusCode)
	}
	exits, err := Read(io.LimitReader(resp.Body, maxListBytes))
	if err != nil {
		return 0, fmt.Errorf("tor exit list %s: %w", s.URL, err)
	}
	if err := s.Store.Load(ctx, s.URL, exits); err != nil {
		return 0, err
	}
	return len(exits), nil
}

// Run syncs at once, then every Interval, until ctx ends. A failed sync is
// logged and retried at the next interval: the stored list still answers.
func (s *Syncer) Run(ctx context.Context) error {
	for {
		n, err := s.Sync(ctx)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			s.Log.Warn("tor exit list sync failed", "url", s.URL, "err", err)
		default:
			s.Log.Info("tor exit list synced", "url", s.URL, "exits", n)
		}
		t := time.NewTimer(s.Interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
