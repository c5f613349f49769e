package vuln

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// NVDAPIURL is the NVD CVE API 2.0 endpoint.
const NVDAPIURL = "https://services.nvd.nist.gov/rest/json/cves/2.0"

// NVDMaxWindow is the longest lastModStartDate..lastModEndDate range the
// NVD API accepts in one query.
const NVDMaxWindow = 120 * 24 * time.Hour

// NVDClient pages through the NVD CVE API 2.0.
type NVDClient struct {
	Fetcher *Fetcher
	// BaseURL defaults to NVDAPIURL.
	BaseURL string
	// APIKey, when set, is sent in the apiKey header (raising NVD's rate limit).
	APIKey string
	// ResultsPerPage defaults to 2000, the API maximum.
	ResultsPerPage int
	// PageDelay is slept between requests; NVD asks for about 6 s without
	// a key. Zero means no delay.
	PageDelay time.Duration
}

// Sync fetches every CVE modified between start and end, splitting the
// range into windows of at most NVDMaxWindow and paging each window with
// startIndex/resultsPerPage until totalResults is reached. A zero start
// fetches the whole database without a date filter (end is then ignored).
func (c *NVDClient) Sync(ctx context.Context, start, end time.Time, fn func(Vulnerability) error) (Result, error) {
	var res Result
	if start.IsZero() {
		return res, c.window(ctx, nil, &res, fn)
	}
	if !end.After(start) {
		return res, fmt.Errorf("nvd sync: end %v is not after start %v", end, start)
	}
	for _, w := range NVDWindows(start, end) {
		q := url.Values{}
		q.Set("lastModStartDate", nvdTime(w[0]))
		q.Set("lastModEndDate", nvdTime(w[1]))
		if err := c.window(ctx, q, &res, fn); err != nil {
			return res, err
		}
	}
	return res, nil
}

// NVDWindows splits [start, end] into consecutive windows no longer than
// NVDMaxWindow.
func NVDWindows(start, end time.Time) [][2]time.Time {
	var out [][2]time.Time
	for s := start; s.Before(end); {
		e := s.Add(NVDMaxWindow)
		if e.After(end) {
			e = end
		}
		out = append(out, [2]time.Time{s, e})
		s = e
	}
	return out
}

func nvdTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

func (c *NVDClient) window(ctx context.Context, q url.Values, res *Result, fn func(Vulnerability) error) error {
	base := c.BaseURL
	if base == "" {
		base = NVDAPIURL
	}
	per := c.ResultsPerPage
	if per <= 0 {
		per = 2000
	}
	var hdr http.Header
	if c.APIKey != "" {
		hdr = http.Header{"apiKey": []string{c.APIKey}}
	}
	for index := 0; ; {
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Set("startIndex", strconv.Itoa(index))
		v.Set("resultsPerPage", strconv.Itoa(per))
		u := base + "?" + v.Encode()
		if index > 0 && c.PageDelay > 0 {
			if err := c.Fetcher.sleep(ctx, c.PageDelay); err != nil {
				return fmt.Errorf("nvd sync: %w", err)
			}
		}
		resp, err := c.Fetcher.Get(ctx, u, Validators{}, hdr)
		if err != nil {
			return fmt.Errorf("nvd sync: %w", err)
		}
		page, r, err := ReadNVD(resp.Body, u, fn)
		resp.Body.Close()
		res.add(r)
		if err != nil {
			return fmt.Errorf("nvd sync: %w", err)
		}
		got := r.Records + r.Skipped
		index += got
		if index >= page.TotalResults {
			return nil
		}
		if got == 0 {
			return errors.New("nvd sync: empty page before totalResults reached")
		}
	}
}
