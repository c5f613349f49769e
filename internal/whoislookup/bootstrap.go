package whoislookup

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/periscope-oss/periscope/internal/rdap"
	"github.com/periscope-oss/periscope/internal/whoisstore"
)

// LoadBootstrap lays the registries stored by earlier refreshes over the
// bundled snapshot (the --rdap-bootstrap dns file still wins).
func (s *Service) LoadBootstrap(ctx context.Context) error {
	stored, err := s.Store.Bootstraps(ctx)
	if err != nil {
		return err
	}
	b := *s.bootstrap.Load()
	for _, row := range stored {
		r, err := rdap.ParseRegistry(row.Body)
		if err != nil {
			return fmt.Errorf("stored rdap bootstrap %s: %w", row.Kind, err)
		}
		if row.Kind == rdap.KindDNS && s.dnsOverride != nil {
			continue
		}
		b.Set(row.Kind, r)
	}
	s.bootstrap.Store(&b)
	return nil
}

// RefreshBootstrap fetches IANA's four registries, stores each one that
// parses and puts it in force. A registry that fails keeps its last copy.
func (s *Service) RefreshBootstrap(ctx context.Context) error {
	var errs []error
	for _, kind := range rdap.Kinds {
		raw, r, err := s.RDAP.FetchRegistry(ctx, kind)
		if err != nil {
			errs = append(errs, fmt.Errorf("fetch %s: %w", kind, err))
			continue
		}
		if err := s.Store.PutBootstrap(ctx, whoisstore.Bootstrap{Kind: kind, Body: raw, Publication: r.Publication, FetchedAt: s.Now()}); err != nil {
			errs = append(errs, err)
			continue
		}
		if kind == rdap.KindDNS && s.dnsOverride != nil {
			continue
		}
		b := *s.bootstrap.Load()
		b.Set(kind, r)
		s.bootstrap.Store(&b)
	}
	if len(errs) > 0 {
		return fmt.Errorf("refresh rdap bootstrap: %v", errs)
	}
	return nil
}

// RunBootstrapRefresh refreshes the registries once a day until ctx ends,
// the first time when the stored copy is older than a day (at the earliest a
// minute after start, so a short-lived process never reaches out). The
// caller owns the goroutine running it.
func (s *Service) RunBootstrapRefresh(ctx context.Context, log *slog.Logger) {
	next := time.Minute
	if stored, err := s.Store.Bootstraps(ctx); err == nil && len(stored) == len(rdap.Kinds) {
		oldest := stored[0].FetchedAt
		for _, b := range stored {
			if b.FetchedAt.Before(oldest) {
				oldest = b.FetchedAt
			}
		}
		next = max(time.Minute, 24*time.Hour-s.Now().Sub(oldest))
	}
	for {
		t := time.NewTimer(next)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if err := s.RefreshBootstrap(ctx); err != nil {
			log.Warn("rdap bootstrap refresh", "err", err)
			next = time.Hour
		} else {
			next = 24 * time.Hour
		}
	}
}
