// Package vulnsync keeps the vulnerability-intelligence data fresh from
// upstream feeds on a schedule: conditional downloads (ETag and
// If-Modified-Since, remembered in the store), retries with backoff on 429
// and 5xx (vuln.Fetcher), incremental NVD API windows from the last
// successful sync, and a stored status per source for /metrics.
package vulnsync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/vuln"
	"github.com/periscope-oss/periscope/internal/vulningest"
	"github.com/periscope-oss/periscope/internal/vulnstore"
)

// nvdFirstSync is how far back the first NVD API sync reaches; later syncs
// start where the last successful one ended.
const nvdFirstSync = 120 * 24 * time.Hour

// Source is one feed to download: a kind of vulningest and its URL.
type Source struct {
	Name string // unique, e.g. "kev" or "osv:PyPI"
	Kind string
	URL  string
}

// Config says what to sync.
type Config struct {
	KEVURL, EPSSURL, ExploitDBURL string // "" leaves the source out
	OSVURL                        string // with {ecosystem}; "" leaves OSV out
	OSVEcosystems                 []string
	NVDURL                        string // NVD CVE API 2.0; "" leaves NVD out
	NVDAPIKey                     string
}

// Sources lists the downloads of c (NVD, paged, is handled apart).
func (c Config) Sources() []Source {
	var out []Source
	if c.KEVURL != "" {
		out = append(out, Source{"kev", vulningest.KEV, c.KEVURL})
	}
	if c.EPSSURL != "" {
		out = append(out, Source{"epss", vulningest.EPSS, c.EPSSURL})
	}
	if c.ExploitDBURL != "" {
		out = append(out, Source{"exploitdb", vulningest.ExploitDB, c.ExploitDBURL})
	}
	if c.OSVURL != "" {
		for _, eco := range c.OSVEcosystems {
			if eco = strings.TrimSpace(eco); eco != "" {
				out = append(out, Source{"osv:" + eco, vulningest.OSV, strings.ReplaceAll(c.OSVURL, "{ecosystem}", eco)})
			}
		}
	}
	return out
}

// Syncer runs the scheduled sync.
type Syncer struct {
	Store   *vulnstore.Store
	Fetcher *vuln.Fetcher
	Config  Config
	// Interval between runs; Run needs it > 0.
	Interval time.Duration
	Log      *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// NVDPageDelay is slept between NVD API pages (NVD asks for ~6 s
	// without a key); 0 means none.
	NVDPageDelay time.Duration
}

func (s *Syncer) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Syncer) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.New(slog.DiscardHandler)
}

// Run syncs every Interval until ctx ends: at once when a source is due
// (or was never tried), else when the first one is.
func (s *Syncer) Run(ctx context.Context) error {
	if s.Interval <= 0 {
		return errors.New("vulnerability sync: interval must be > 0")
	}
	wait, err := s.untilDue(ctx)
	if err != nil {
		s.log().Warn("vulnerability sync: cannot read the schedule; syncing now", "err", err)
	}
	if wait > 0 {
		s.log().Info("vulnerability sync: next run when due", "in", wait.Round(time.Second).String())
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	for {
		if err := s.RunOnce(ctx); err != nil && ctx.Err() == nil {
			s.log().Warn("vulnerability sync finished with errors", "err", err)
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

// RunOnce syncs every source once. A failing source does not stop the
// others; the errors are joined.
func (s *Syncer) RunOnce(ctx context.Context) error {
	states, err := s.Store.VulnSyncStates(ctx)
	if err != nil {
		return err
	}
	var errs []error
	in := &vulningest.Ingester{Store: s.Store}
	changed := 0 // records inserted or updated by this run
	for _, src := range s.Config.Sources() {
		if err := s.syncSource(ctx, in, src, states[src.Name], &changed); err != nil {
			errs = append(errs, err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if s.Config.NVDURL != "" {
		if err := s.syncNVD(ctx, in, states["nvd"], &changed); err != nil {
			errs = append(errs, err)
		}
	}
	// Planner statistics follow the data: nothing to refresh when every
	// source answered "not modified" or changed nothing.
	if changed > 0 {
		if err := s.Store.OptimizeVulns(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (s *Syncer) syncSource(ctx context.Context, in *vulningest.Ingester, src Source, st vulnstore.SyncState, changed *int) error {
	start := s.now()
	st.Source, st.LastAttempt = src.Name, start.Unix()
	if st.URL != src.URL {
		// Another URL's validators mean nothing here, and a failure below
		// must not store them under this URL.
		st.ETag, st.LastModified = "", ""
	}
	prev := vuln.Validators{ETag: st.ETag, LastModified: st.LastModified}
	st.URL = src.URL
	resp, err := s.Fetcher.Get(ctx, src.URL, prev, nil)
	switch {
	case errors.Is(err, vuln.ErrNotModified):
		st.LastSuccess, st.LastError = start.Unix(), ""
		s.log().Info("vulnerability sync: not modified", "source", src.Name)
		return s.Store.PutVulnSyncState(context.WithoutCancel(ctx), st)
	case err != nil:
		return s.fail(ctx, st, err)
	}
	defer resp.Body.Close()
	sum, err := in.IngestReader(ctx, src.Kind, src.URL, resp.Body, nil)
	*changed += sum.Inserted + sum.Updated
	if err == nil && sum.Read == 0 {
		// Every feed synced here holds records: an answer with none is
		// not the feed (a captive portal, an error page served as 200,
		// a format change) and must not pass for an up-to-date sync.
		err = fmt.Errorf("the answer from %s held no %s records", src.URL, src.Kind)
	}
	if err != nil {
		// Batches stored before the error stay; the validators are not
		// kept, so the next run downloads the feed again.
		return s.fail(ctx, st, err)
	}
	st.ETag, st.LastModified = resp.Validators.ETag, resp.Validators.LastModified
	st.LastSuccess, st.LastError, st.Records = start.Unix(), "", int64(sum.Read)
	s.log().Info("vulnerability sync", "source", src.Name, "read", sum.Read, "inserted", sum.Inserted, "updated", sum.Updated,
		"unchanged", sum.Unchanged, "rejected", sum.Rejected, "duration", sum.Duration.String())
	return s.Store.PutVulnSyncState(context.WithoutCancel(ctx), st)
}

func (s *Syncer) fail(ctx context.Context, st vulnstore.SyncState, err error) error {
	st.LastError = err.Error()
	s.log().Warn("vulnerability sync failed", "source", st.Source, "err", err)
	if perr := s.Store.PutVulnSyncState(context.WithoutCancel(ctx), st); perr != nil {
		return errors.Join(err, perr)
	}
	return fmt.Errorf("sync %s: %w", st.Source, err)
}

// syncNVD fetches the CVEs modified since the last successful NVD sync
// (nvdFirstSync back the first time).
func (s *Syncer) syncNVD(ctx context.Context, in *vulningest.Ingester, st vulnstore.SyncState, changed *int) error {
	end := s.now().UTC()
	st.Source, st.URL, st.LastAttempt = "nvd", s.Config.NVDURL, end.Unix()
	start := end.Add(-nvdFirstSync)
	if st.LastSuccess > 0 {
		// Overlap a little: NVD stamps lastModified before publishing.
		start = time.Unix(st.LastSuccess, 0).UTC().Add(-time.Hour)
	}
	c := &vuln.NVDClient{Fetcher: s.Fetcher, BaseURL: s.Config.NVDURL, APIKey: s.Config.NVDAPIKey, PageDelay: s.NVDPageDelay}
	sum, err := in.IngestNVDAPI(ctx, c, start, end)
	*changed += sum.Inserted + sum.Updated
	if err != nil {
		return s.fail(ctx, st, err)
	}
	st.LastSuccess, st.LastError, st.Records = end.Unix(), "", int64(sum.Read)
	s.log().Info("vulnerability sync", "source", "nvd", "read", sum.Read, "inserted", sum.Inserted, "updated", sum.Updated,
		"unchanged", sum.Unchanged, "rejected", sum.Rejected, "duration", sum.Duration.String())
	return s.Store.PutVulnSyncState(context.WithoutCancel(ctx), st)
}
