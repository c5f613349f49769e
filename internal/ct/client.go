// Package ct reads Certificate Transparency logs: an RFC 6962 client
// (get-sth, get-entries in batches with retries), a Follower that tails a log
// from a persisted checkpoint, and a parser for certstream JSON messages.
// Every logged certificate and precertificate becomes a cert.Certificate.
package ct

import (
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	ctgo "github.com/google/certificate-transparency-go"
	"github.com/google/certificate-transparency-go/tls"

	"github.com/periscope-oss/periscope/internal/cert"
	"github.com/periscope-oss/periscope/internal/egress"
)

// maxResponseSize bounds a response body; a get-entries batch of 1,000
// entries with chains is a few megabytes.
const maxResponseSize = 64 << 20

// Options configure a Client. Zero values take the defaults noted.
type Options struct {
	// HTTPClient defaults to a client with a 60 second timeout.
	HTTPClient *http.Client
	// BatchSize is the number of entries asked for per get-entries request
	// (default 256). Logs may return fewer; the client continues from where
	// the log stopped.
	BatchSize int
	// MaxRetries is how many times one request is retried after a 429, a
	// 5xx, a transport error or an empty batch (default 6).
	MaxRetries int
	// MinBackoff and MaxBackoff bound the exponential backoff between
	// retries (defaults 1s and 60s). A Retry-After header takes precedence,
	// up to MaxRetryAfter (default 10 minutes).
	MinBackoff, MaxBackoff, MaxRetryAfter time.Duration
	// UserAgent is sent with every request (default "periscope-ct").
	UserAgent string
	// PublicKey, when set, is the log's key: GetSTH verifies the tree head
	// signature with it.
	PublicKey crypto.PublicKey
}

// Client talks to one RFC 6962 log. It is safe for concurrent use.
type Client struct {
	base string
	opts Options
	// sleep waits between retries; tests replace it to observe the waits.
	sleep func(ctx context.Context, d time.Duration) error
}

// NewClient returns a client for the log at baseURL, such as
// "https://ct.googleapis.com/logs/us1/argon2025h1/".
func NewClient(baseURL string, opts Options) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("ct log URL %q: want an absolute http or https URL", baseURL)
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 60 * time.Second}
	}
	// A log that redirects elsewhere is not the log that was configured:
	// redirects are followed only within its host and scheme. (A copy:
	// the caller's client is not changed.)
	client := *opts.HTTPClient
	next := client.CheckRedirect
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if first := via[0].URL; !strings.EqualFold(req.URL.Host, first.Host) || req.URL.Scheme != first.Scheme {
			return fmt.Errorf("ct log redirected from %s to %s://%s: refused", first.Host, req.URL.Scheme, req.URL.Host)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
	opts.HTTPClient = &client
	if opts.BatchSize <= 0 {
		opts.BatchSize = 256
	}
	if opts.MaxRetries <= 0 {
		opts.MaxRetries = 6
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = time.Second
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(60*time.Second, opts.MinBackoff)
	}
	if opts.MaxRetryAfter <= 0 {
		opts.MaxRetryAfter = 10 * time.Minute
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "periscope-ct"
	}
	return &Client{base: strings.TrimRight(baseURL, "/") + "/ct/v1/", opts: opts, sleep: sleepCtx}, nil
}

// URL returns the log's base URL as given to NewClient, without the trailing
// slash.
func (c *Client) URL() string { return strings.TrimSuffix(c.base, "/ct/v1/") }

// STH is a signed tree head.
type STH struct {
	TreeSize  int64
	Timestamp time.Time
	RootHash  []byte
	// Signature is the TLS-encoded DigitallySigned structure.
	Signature []byte
}

// HTTPError is a log's answer with a status other than 200.
type HTTPError struct {
	StatusCode int
	// RetryAfter is the parsed Retry-After header; 0 when absent.
	RetryAfter time.Duration
	// Body is the start of the response body, for the error message.
	Body string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("ct log answered %d: %s", e.StatusCode, e.Body)
}

func (e *HTTPError) retryable() bool {
	return e.StatusCode == http.StatusTooManyRequests || e.StatusCode == http.StatusRequestTimeout || e.StatusCode >= 500
}

// GetSTH fetches the log's current signed tree head, verifying its signature
// when Options.PublicKey is set.
func (c *Client) GetSTH(ctx context.Context) (STH, error) {
	var resp ctgo.GetSTHResponse
	if err := c.get(ctx, "get-sth", nil, &resp); err != nil {
		return STH{}, fmt.Errorf("get-sth from %s: %w", c.URL(), err)
	}
	if resp.TreeSize > 1<<62 {
		return STH{}, fmt.Errorf("get-sth from %s: implausible tree_size %d", c.URL(), resp.TreeSize)
	}
	if c.opts.PublicKey != nil {
		sth, err := resp.ToSignedTreeHead()
		if err != nil {
			return STH{}, fmt.Errorf("get-sth from %s: %w", c.URL(), err)
		}
		input, err := ctgo.SerializeSTHSignatureInput(*sth)
		if err != nil {
			return STH{}, fmt.Errorf("get-sth from %s: %w", c.URL(), err)
		}
		if err := tls.VerifySignature(c.opts.PublicKey, input, tls.DigitallySigned(sth.TreeHeadSignature)); err != nil {
			return STH{}, fmt.Errorf("get-sth from %s: bad tree head signature: %w", c.URL(), err)
		}
	}
	return STH{
		TreeSize:  int64(resp.TreeSize),
		Timestamp: time.UnixMilli(int64(resp.Timestamp)).UTC(),
		RootHash:  resp.SHA256RootHash,
		Signature: resp.TreeHeadSignature,
	}, nil
}

// Entry is one decoded log entry.
type Entry struct {
	Index int64
	// Timestamp is the log's timestamp from the Merkle tree leaf.
	Timestamp time.Time
	// Cert is the logged certificate; for a precert_entry it is the
	// pre-certificate from extra_data, with IsPrecert set.
	Cert cert.Certificate
	// Chain holds the DER of the issuing chain, issuer first.
	Chain [][]byte
	// Err is set when the entry could not be decoded; only Index (and
	// Timestamp, when the leaf was readable) are then meaningful. Entries
	// are never silently dropped, so checkpoints stay exact.
	Err error
}

// GetEntries fetches entries start..end (inclusive) in batches of
// Options.BatchSize and passes each to emit in index order. When the log
// returns fewer entries than asked, the next request starts after the last
// one returned. An error from emit stops the fetch and is returned.
func (c *Client) GetEntries(ctx context.Context, start, end int64, emit func(Entry) error) error {
	for next := start; next <= end; {
		hi := min(next+int64(c.opts.BatchSize)-1, end)
		entries, err := c.Batch(ctx, next, hi)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := emit(e); err != nil {
				return err
			}
		}
		next += int64(len(entries))
	}
	return nil
}

// Batch fetches and decodes entries start..end (inclusive) with one
// successful get-entries request. It may return fewer entries than asked,
// never none: an empty answer is retried like a server error.
func (c *Client) Batch(ctx context.Context, start, end int64) ([]Entry, error) {
	if start < 0 || end < start {
		return nil, fmt.Errorf("get-entries: bad range %d..%d", start, end)
	}
	q := url.Values{"start": {strconv.FormatInt(start, 10)}, "end": {strconv.FormatInt(end, 10)}}
	var resp ctgo.GetEntriesResponse
	for attempt := 0; ; attempt++ {
		resp.Entries = resp.Entries[:0]
		if err := c.get(ctx, "get-entries", q, &resp); err != nil {
			return nil, fmt.Errorf("get-entries %d..%d from %s: %w", start, end, c.URL(), err)
		}
		if len(resp.Entries) > 0 {
			break
		}
		if attempt >= c.opts.MaxRetries {
			return nil, fmt.Errorf("get-entries %d..%d from %s: log returned no entries %d times", start, end, c.URL(), attempt+1)
		}
		if err := c.sleep(ctx, c.backoff(attempt)); err != nil {
			return nil, err
		}
	}
	if want := end - start + 1; int64(len(resp.Entries)) > want {
		resp.Entries = resp.Entries[:want]
	}
	out := make([]Entry, len(resp.Entries))
	for i := range resp.Entries {
		out[i] = decodeLeaf(start+int64(i), &resp.Entries[i])
	}
	return out, nil
}

// decodeLeaf decodes a MerkleTreeLeaf and its extra_data.
func decodeLeaf(index int64, le *ctgo.LeafEntry) Entry {
	e := Entry{Index: index}
	raw, err := ctgo.RawLogEntryFromLeaf(index, le)
	if err != nil {
		e.Err = fmt.Errorf("entry %d: %w", index, err)
		return e
	}
	e.Timestamp = time.UnixMilli(int64(raw.Leaf.TimestampedEntry.Timestamp)).UTC()
	e.Chain = make([][]byte, len(raw.Chain))
	for i, c := range raw.Chain {
		e.Chain[i] = c.Data
	}
	c, err := cert.Parse(raw.Cert.Data)
	if err != nil {
		e.Err = fmt.Errorf("entry %d: %w", index, err)
		return e
	}
	if raw.Leaf.TimestampedEntry.EntryType == ctgo.PrecertLogEntryType {
		c.IsPrecert = true
	}
	e.Cert = c
	return e
}

// get performs a GET of the named RFC 6962 method, decoding the JSON answer
// into out, with retries on 429, 5xx and transport errors.
func (c *Client) get(ctx context.Context, method string, q url.Values, out any) error {
	u := c.base + method
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	for attempt := 0; ; attempt++ {
		err := c.getOnce(ctx, u, out)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, egress.ErrRefused) {
			return err // a refused destination stays refused
		}
		wait := c.backoff(attempt)
		var he *HTTPError
		if errors.As(err, &he) {
			if !he.retryable() {
				return err
			}
			if he.RetryAfter > 0 {
				wait = min(he.RetryAfter, c.opts.MaxRetryAfter)
			}
		}
		if attempt >= c.opts.MaxRetries {
			return fmt.Errorf("after %d attempts: %w", attempt+1, err)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

func (c *Client) getOnce(ctx context.Context, u string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", c.opts.UserAgent)
	req.Header.Set("Accept", "application/json")
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		return &HTTPError{
			StatusCode: resp.StatusCode,
			RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()),
			Body:       strings.TrimSpace(string(body)),
		}
	}
	dec := json.NewDecoder(io.LimitReader(resp.Body, maxResponseSize))
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("decode response: %w", err)
	}
	return nil
}

// parseRetryAfter reads delay-seconds or an HTTP date; 0 when absent or
// unreadable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(min(secs, 1<<31)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// backoff is the wait before retry attempt+1: exponential from MinBackoff,
// capped at MaxBackoff, with up to 20% jitter so clients do not retry in step.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.opts.MinBackoff << min(attempt, 20)
	if d <= 0 || d > c.opts.MaxBackoff {
		d = c.opts.MaxBackoff
	}
	return d + time.Duration(rand.Int64N(int64(d)/5+1))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
