package vuln

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/egress"
)

// ErrNotModified is returned by Fetcher.Get when the server answers a
// conditional request with 304 Not Modified.
var ErrNotModified = errors.New("not modified")

// Validators are the HTTP cache validators of a previous download, sent
// back on the next one so an unchanged feed is not downloaded again.
type Validators struct {
	ETag         string
	LastModified string
}

// Fetcher downloads feeds for scheduled sync: conditional GETs, and
// retries with exponential backoff on network errors, 429 and 5xx,
// honouring Retry-After. The zero value is not usable; set Client.
type Fetcher struct {
	Client    *http.Client
	UserAgent string
	// MaxRetries is the number of retries after the first attempt.
	MaxRetries int
	// BaseDelay is the first backoff delay; each retry doubles it, up to
	// MaxDelay, which also caps Retry-After.
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// Now and Sleep are injectable for tests; nil means the real clock.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// Response is a successful (200) download. The caller must close Body.
type Response struct {
	Body       io.ReadCloser
	Validators Validators
	Header     http.Header
}

// StatusError is a final non-success HTTP status.
type StatusError struct {
	URL        string
	StatusCode int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("GET %s: HTTP %d %s", e.URL, e.StatusCode, http.StatusText(e.StatusCode))
}

// Get downloads url. prev holds the validators of the last download (may
// be zero); extra headers (such as NVD's apiKey) are added to the request.
// It returns ErrNotModified on 304.
func (f *Fetcher) Get(ctx context.Context, url string, prev Validators, extra http.Header) (*Response, error) {
	var lastErr error
	for attempt := 0; ; attempt++ {
		resp, retryAfter, err := f.try(ctx, url, prev, extra)
		if err == nil || !retryable(err) || attempt >= f.MaxRetries {
			if err != nil && lastErr != nil && !errors.Is(err, ErrNotModified) {
				return nil, fmt.Errorf("%w (after %d attempts)", err, attempt+1)
			}
			return resp, err
		}
		lastErr = err
		delay := f.backoff(attempt)
		if retryAfter > 0 {
			delay = min(retryAfter, f.maxDelay())
		}
		if err := f.sleep(ctx, delay); err != nil {
			return nil, fmt.Errorf("GET %s: %w (last error: %v)", url, err, lastErr)
		}
	}
}

func (f *Fetcher) try(ctx context.Context, url string, prev Validators, extra http.Header) (*Response, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("GET %s: %w", url, err)
	}
	for k, vs := range extra {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if f.UserAgent != "" {
		req.Header.Set("User-Agent", f.UserAgent)
	}
	if prev.ETag != "" {
		req.Header.Set("If-None-Match", prev.ETag)
	}
	if prev.LastModified != "" {
		req.Header.Set("If-Modified-Since", prev.LastModified)
	}
	// A redirect to another host would carry the extra headers (NVD's
	// apiKey) there: refused, and not retried.
	client := *f.Client
	client.CheckRedirect = sameHostRedirects(f.Client.CheckRedirect)
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, ErrCrossHostRedirect) || errors.Is(err, egress.ErrRefused) {
			// A refused destination stays refused: no retry.
			return nil, 0, fmt.Errorf("GET %s: %w", url, err)
		}
		if ctx.Err() != nil {
			return nil, 0, fmt.Errorf("GET %s: %w", url, ctx.Err())
		}
		return nil, 0, transientError{fmt.Errorf("GET %s: %w", url, err)}
	}
	switch {
	case resp.StatusCode == http.StatusOK:
		return &Response{
			Body:       resp.Body,
			Header:     resp.Header,
			Validators: Validators{ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")},
		}, 0, nil
	case resp.StatusCode == http.StatusNotModified:
		resp.Body.Close()
		return nil, 0, ErrNotModified
	}
	// Drain a little so the connection can be reused.
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	serr := &StatusError{URL: url, StatusCode: resp.StatusCode}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		return nil, f.retryAfter(resp.Header.Get("Retry-After")), transientError{serr}
	}
	return nil, 0, serr
}

// ErrCrossHostRedirect is the error of a fetch redirected to another host
// (or from https to http).
var ErrCrossHostRedirect = errors.New("redirect to another host refused")

// sameHostRedirects returns a CheckRedirect that follows redirects only
// within the original host and scheme (at most 10), then applies next.
func sameHostRedirects(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		first := via[0].URL
		if !strings.EqualFold(req.URL.Host, first.Host) || req.URL.Scheme != first.Scheme {
			return fmt.Errorf("%w: %s to %s://%s", ErrCrossHostRedirect, first.Host, req.URL.Scheme, req.URL.Host)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
}

// transientError marks errors worth retrying.
type transientError struct{ err error }

func (e transientError) Error() string { return e.err.Error() }
func (e transientError) Unwrap() error { return e.err }

func retryable(err error) bool {
	var t transientError
	return errors.As(err, &t)
}

// retryAfter parses a Retry-After header: delay-seconds or an HTTP date.
func (f *Fetcher) retryAfter(h string) time.Duration {
	if h == "" {
		return 0
	}
	if s, err := strconv.Atoi(h); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		if d := t.Sub(f.now()); d > 0 {
			return d
		}
	}
	return 0
}

func (f *Fetcher) backoff(attempt int) time.Duration {
	d := f.BaseDelay
	if d <= 0 {
		d = time.Second
	}
	for i := 0; i < attempt && d < f.maxDelay(); i++ {
		d *= 2
	}
	return min(d, f.maxDelay())
}

func (f *Fetcher) maxDelay() time.Duration {
	if f.MaxDelay > 0 {
		return f.MaxDelay
	}
	return 5 * time.Minute
}

func (f *Fetcher) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

func (f *Fetcher) sleep(ctx context.Context, d time.Duration) error {
	if f.Sleep != nil {
		return f.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
