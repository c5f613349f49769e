package activescan

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/periscope-oss/periscope/internal/scanstore"
)

// Run is the monitor's worker, until ctx ends: every Poll it queues the
// scheduled scans that are due, and every Poll or when a scan is queued
// here (Wake) it starts the runnable scans (dispatch) without waiting for
// those already running. It returns when ctx ends and the scans it started
// have stopped. The per-organization scan lock in the database keeps one
// scan of an organization running at a time across instances.
func (s *Service) Run(ctx context.Context) error {
	t := time.NewTicker(s.opt.Poll)
	defer t.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	scheduled := true
	for {
		if err := s.dispatch(ctx, &wg, scheduled); err != nil && ctx.Err() == nil {
			s.d.Log.Error("monitor pass failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			scheduled = true
		case <-s.wake:
			scheduled = false
		}
	}
}

// Wake makes Run look for runnable scans now (a scan was queued).
func (s *Service) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// dispatch queues the due scheduled scans (when scheduled) and starts
// every runnable scan of an organization with none running here, each in
// a goroutine that waits, in arrival order, for one of MaxScans slots. It
// does not wait for them: scans of different organizations proceed
// independently, and an organization's next scan starts when its current
// one ends (which wakes Run).
func (s *Service) dispatch(ctx context.Context, wg *sync.WaitGroup, scheduled bool) error {
	if scheduled {
		if err := s.schedule(ctx); err != nil {
			return err
		}
	}
	stale := s.d.Now().Add(-s.opt.Lease).Unix()
	scans, err := s.d.Store.Runnable(ctx, stale, 1000)
	if err != nil {
		return err
	}
	for _, sc := range scans {
		s.mu.Lock()
		busy := s.running[sc.OrganizationID]
		s.running[sc.OrganizationID] = true
		s.mu.Unlock()
		if busy {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ran := false
			defer func() {
				s.mu.Lock()
				delete(s.running, sc.OrganizationID)
				s.mu.Unlock()
				if ran { // the organization's next scan may start
					s.Wake()
				}
			}()
			if err := s.slots.acquire(ctx); err != nil {
				return
			}
			defer s.slots.release()
			var err error
			if ran, err = s.runScan(ctx, sc, s.slots.yield); err != nil && ctx.Err() == nil {
				s.d.Log.Error("monitor scan failed", "scan", sc.ID, "err", err)
			}
		}()
	}
	return nil
}

// Tick is one pass of the worker: it queues a scheduled scan of every
// organization with something authorised whose last one is older than
// Interval, then runs the runnable scans, at most MaxScans organizations
// at once and one scan per organization, and returns when they are done.
func (s *Service) Tick(ctx context.Context) error {
	if err := s.schedule(ctx); err != nil {
		return err
	}
	// Rounds until nothing runnable starts: an organization's scans run
	// one after the other within the pass.
	for {
		started, err := s.round(ctx)
		if err != nil || started == 0 {
			return err
		}
	}
}

// round starts the oldest runnable scan of each organization and waits for
// them, reporting how many started.
func (s *Service) round(ctx context.Context) (int, error) {
	stale := s.d.Now().Add(-s.opt.Lease).Unix()
	scans, err := s.d.Store.Runnable(ctx, stale, 1000)
	if err != nil {
		return 0, err
	}
	// One scan per organization per pass; the others wait for the next.
	byOrg := map[string]bool{}
	var queue []scanstore.Scan
	for _, sc := range scans {
		if !byOrg[sc.OrganizationID] {
			byOrg[sc.OrganizationID] = true
			queue = append(queue, sc)
		}
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		errs    []error
		started int
		slot    = make(chan struct{}, s.opt.MaxScans)
	)
	for _, sc := range queue {
		select {
		case slot <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return started, ctx.Err()
		}
		wg.Add(1)
		go func() {
			defer func() { <-slot; wg.Done() }()
			ran, err := s.RunScan(ctx, sc)
			mu.Lock()
			defer mu.Unlock()
			if ran {
				started++
			}
			if err != nil {
				errs = append(errs, err)
			}
		}()
	}
	wg.Wait()
	return started, errors.Join(errs...)
}

// schedule queues the scheduled scans that are due. The request window is
// the interval, so a scan is queued once per interval per organization
// whichever instance asks.
func (s *Service) schedule(ctx context.Context) error {
	orgs, err := s.d.Store.AuthorizedOrgs(ctx)
	if err != nil {
		return err
	}
	for _, o := range orgs {
		_, _, err := s.d.Store.Enqueue(ctx, scanstore.Request{AccountID: o.AccountID, OrganizationID: o.ID,
			Origin: scanstore.OriginScheduled, TargetType: scanstore.TargetOrganization, Target: o.ID}, s.opt.Interval)
		if err != nil {
			return err
		}
	}
	return nil
}
