package rdap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// MaxBody caps one RDAP response.
const MaxBody = 1 << 20

// ErrNotFound means the server answered 404: the name is not registered.
var ErrNotFound = errors.New("rdap: not found")

// ErrNoServer means the bootstrap registry names no RDAP server.
var ErrNoServer = errors.New("rdap: no server in bootstrap registry")

// LimitedError is a 429 (or 503 with Retry-After) from a server.
type LimitedError struct {
	Host       string
	RetryAfter time.Duration
}

func (e *LimitedError) Error() string {
	return fmt.Sprintf("rdap %s: rate limited (retry after %s)", e.Host, e.RetryAfter)
}

// Client looks objects up over RDAP.
type Client struct {
	// HTTP must come from egress.(*Dialer).HTTPClient.
	HTTP *http.Client
	// Bootstrap returns the registries in force (refreshed by the caller).
	Bootstrap func() *Bootstrap
	// Wait, when set, is called before each request with the URL's host so
	// the caller can rate-limit per upstream host.
	Wait func(ctx context.Context, host string) error
}

// Answer is one domain lookup.
type Answer struct {
	URL          string
	Object       *Object
	Raw          []byte
	RegistrarURL string
	Registrar    *Object // the related link's object, when followed
	RegistrarRaw []byte
	RelatedErr   error
}

// Domain looks domain up at the server the dns registry names, then follows
// at most one related link to the registrar.
func (c *Client) Domain(ctx context.Context, domain string) (Answer, error) {
	bases := c.Bootstrap().DomainURLs(domain)
	if len(bases) == 0 {
		return Answer{}, ErrNoServer
	}
	u := strings.TrimSuffix(bases[0], "/") + "/domain/" + url.PathEscape(domain)
	raw, err := c.get(ctx, u)
	if err != nil {
		return Answer{}, err
	}
	obj, err := Decode(raw)
	if err != nil {
		return Answer{}, fmt.Errorf("rdap %s: %w", u, err)
	}
	ans := Answer{URL: u, Object: obj, Raw: raw}
	if rel := obj.RelatedURL(); rel != "" {
		ans.RegistrarURL = rel
		rraw, err := c.get(ctx, rel)
		if err == nil {
			var robj *Object
			robj, err = Decode(rraw)
			if err == nil {
				ans.Registrar, ans.RegistrarRaw = robj, rraw
			}
		}
		// The registry's answer stands without the registrar's.
		ans.RelatedErr = err
	}
	return ans, nil
}

func (c *Client) get(ctx context.Context, u string) ([]byte, error) {
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Host == "" {
		return nil, fmt.Errorf("rdap: bad URL %q", u)
	}
	if c.Wait != nil {
		if err := c.Wait(ctx, pu.Host); err != nil {
			return nil, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("rdap: %w", err)
	}
	req.Header.Set("Accept", "application/rdap+json, application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("rdap %s: %w", pu.Host, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, ErrNotFound
	case resp.StatusCode == http.StatusTooManyRequests || (resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != ""):
		return nil, &LimitedError{Host: pu.Host, RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("rdap %s: status %d", pu.Host, resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		return nil, fmt.Errorf("rdap %s: read: %w", pu.Host, err)
	}
	if len(b) > MaxBody {
		return nil, fmt.Errorf("rdap %s: response over %d bytes", pu.Host, MaxBody)
	}
	return b, nil
}

func retryAfter(v string) time.Duration {
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return time.Minute
}

// FetchRegistry downloads one bootstrap file (IANA's daily refresh).
func (c *Client) FetchRegistry(ctx context.Context, kind string) ([]byte, *Registry, error) {
	raw, err := c.get(ctx, IANAURL(kind))
	if err != nil {
		return nil, nil, err
	}
	r, err := ParseRegistry(raw)
	if err != nil {
		return nil, nil, err
	}
	return raw, r, nil
}
