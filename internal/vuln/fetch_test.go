package vuln

import (
	"archive/zip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// recordingSleep records requested delays instead of sleeping.
type recordingSleep struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (r *recordingSleep) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.delays = append(r.delays, d)
	return ctx.Err()
}

func newFetcher(s *recordingSleep, now time.Time) *Fetcher {
	return &Fetcher{
		Client:     &http.Client{Timeout: 5 * time.Second},
		UserAgent:  "periscope-test",
		MaxRetries: 3,
		BaseDelay:  time.Second,
		MaxDelay:   time.Minute,
		Now:        func() time.Time { return now },
		Sleep:      s.sleep,
	}
}

func TestFetchConditional(t *testing.T) {
	const etag = `"v1"`
	lastMod := "Mon, 25 Aug 2025 17:04:19 GMT"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("User-Agent") != "periscope-test" {
			t.Errorf("user agent = %q", r.Header.Get("User-Agent"))
		}
		if r.Header.Get("If-None-Match") == etag || r.Header.Get("If-Modified-Since") == lastMod {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", etag)
		w.Header().Set("Last-Modified", lastMod)
		io.WriteString(w, "feed body")
	}))
	defer srv.Close()
	f := newFetcher(&recordingSleep{}, time.Now())
	resp, err := f.Get(context.Background(), srv.URL, Validators{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "feed body" || resp.Validators != (Validators{ETag: etag, LastModified: lastMod}) {
		t.Fatalf("body %q validators %+v", body, resp.Validators)
	}
	for _, prev := range []Validators{{ETag: etag}, {LastModified: lastMod}} {
		if _, err := f.Get(context.Background(), srv.URL, prev, nil); !errors.Is(err, ErrNotModified) {
			t.Errorf("Get with %+v: err = %v, want ErrNotModified", prev, err)
		}
	}
}

func TestFetchRetries(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		statuses   []int
		retryAfter []string
		wantDelays []time.Duration
		wantErr    bool
		wantCalls  int
	}{
		{"503 then ok, Retry-After seconds", []int{503, 200}, []string{"7", ""}, []time.Duration{7 * time.Second}, false, 2},
		{"429 backoff doubles", []int{429, 429, 429, 200}, nil, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, false, 4},
		{"Retry-After HTTP date", []int{503, 200}, []string{now.Add(30 * time.Second).Format(http.TimeFormat), ""}, []time.Duration{30 * time.Second}, false, 2},
		{"Retry-After capped by MaxDelay", []int{429, 200}, []string{"3600", ""}, []time.Duration{time.Minute}, false, 2},
		{"404 is final", []int{404}, nil, nil, true, 1},
		{"retries exhausted", []int{500, 502, 503, 504}, nil, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, true, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			calls := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				i := calls
				calls++
				mu.Unlock()
				if i < len(tt.retryAfter) && tt.retryAfter[i] != "" {
					w.Header().Set("Retry-After", tt.retryAfter[i])
				}
				w.WriteHeader(tt.statuses[i])
				io.WriteString(w, "x")
			}))
			defer srv.Close()
			rs := &recordingSleep{}
			resp, err := newFetcher(rs, now).Get(context.Background(), srv.URL, Validators{}, nil)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil {
				resp.Body.Close()
			}
			var se *StatusError
			if tt.wantErr && !errors.As(err, &se) {
				t.Errorf("err %v is not a StatusError", err)
			}
			if calls != tt.wantCalls {
				t.Errorf("calls = %d, want %d", calls, tt.wantCalls)
			}
			if diff := cmp.Diff(tt.wantDelays, rs.delays); diff != "" {
				t.Errorf("delays (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFetchContextCancelled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	f := newFetcher(&recordingSleep{}, time.Now())
	f.Sleep = func(ctx context.Context, d time.Duration) error { cancel(); return ctx.Err() }
	if _, err := f.Get(ctx, srv.URL, Validators{}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	// The real sleep honours the context too.
	f.Sleep = nil
	if _, err := f.Get(ctx, srv.URL, Validators{}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("real sleep: err = %v, want context.Canceled", err)
	}
}

// nvdServer serves the recorded 38-CVE NVD API page, re-paged by
// startIndex/resultsPerPage as the real API does.
func nvdServer(t *testing.T, apiKey string, windows *[][2]string) *httptest.Server {
	raw, err := os.ReadFile("testdata/nvd/vunnel_full-page.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var vulns []json.RawMessage
	json.Unmarshal(doc["vulnerabilities"], &vulns)
	var mu sync.Mutex
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if got := r.Header.Get("apiKey"); got != apiKey {
			t.Errorf("apiKey header = %q, want %q", got, apiKey)
		}
		start, _ := strconv.Atoi(q.Get("startIndex"))
		per, _ := strconv.Atoi(q.Get("resultsPerPage"))
		s, e := q.Get("lastModStartDate"), q.Get("lastModEndDate")
		if (s == "") != (e == "") {
			t.Errorf("half a date window: %q %q", s, e)
		}
		if s != "" {
			ts, err1 := time.Parse("2006-01-02T15:04:05.000Z", s)
			te, err2 := time.Parse("2006-01-02T15:04:05.000Z", e)
			if err1 != nil || err2 != nil || te.Sub(ts) > NVDMaxWindow {
				t.Errorf("bad window %q..%q", s, e)
			}
			if start == 0 {
				mu.Lock()
				*windows = append(*windows, [2]string{s, e})
				mu.Unlock()
			}
		}
		end := min(start+per, len(vulns))
		page := vulns[start:end]
		b, _ := json.Marshal(page)
		fmt.Fprintf(w, `{"resultsPerPage":%d,"startIndex":%d,"totalResults":%d,"format":"NVD_CVE","version":"2.0","vulnerabilities":%s}`, len(page), start, len(vulns), b)
	}))
}

func TestNVDClientPaging(t *testing.T) {
	var windows [][2]string
	srv := nvdServer(t, "secret-key", &windows)
	defer srv.Close()
	c := &NVDClient{Fetcher: newFetcher(&recordingSleep{}, time.Now()), BaseURL: srv.URL, APIKey: "secret-key", ResultsPerPage: 10}
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	end := start.Add(300 * 24 * time.Hour)
	seen := map[string]int{}
	res, err := c.Sync(context.Background(), start, end, func(v Vulnerability) error { seen[v.CVEID]++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	// 300 days split into 120 + 120 + 60; each window pages 38 CVEs by 10.
	want := [][2]string{
		{"2024-01-01T00:00:00.000Z", "2024-04-30T00:00:00.000Z"},
		{"2024-04-30T00:00:00.000Z", "2024-08-28T00:00:00.000Z"},
		{"2024-08-28T00:00:00.000Z", "2024-10-27T00:00:00.000Z"},
	}
	if diff := cmp.Diff(want, windows); diff != "" {
		t.Errorf("windows (-want +got):\n%s", diff)
	}
	if res.Records != 3*38 || len(seen) != 38 {
		t.Errorf("records %d, distinct %d; want 114, 38", res.Records, len(seen))
	}
	for id, n := range seen {
		if n != 3 {
			t.Errorf("%s delivered %d times, want once per window", id, n)
		}
	}

	// Without a key no apiKey header is sent; a zero start means no window.
	windows = nil
	srv2 := nvdServer(t, "", &windows)
	defer srv2.Close()
	c2 := &NVDClient{Fetcher: newFetcher(&recordingSleep{}, time.Now()), BaseURL: srv2.URL, ResultsPerPage: 2000}
	res, err = c2.Sync(context.Background(), time.Time{}, time.Time{}, func(Vulnerability) error { return nil })
	if err != nil || res.Records != 38 || len(windows) != 0 {
		t.Errorf("full sync: %+v %v windows %v", res, err, windows)
	}
}

func TestNVDWindows(t *testing.T) {
	s := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := NVDWindows(s, s.Add(NVDMaxWindow)); len(got) != 1 {
		t.Errorf("exactly 120 days: %d windows", len(got))
	}
	got := NVDWindows(s, s.Add(NVDMaxWindow+time.Second))
	if len(got) != 2 || !got[1][0].Equal(got[0][1]) || got[1][1].Sub(got[1][0]) != time.Second {
		t.Errorf("120 days + 1s: %v", got)
	}
}

func TestOSVZip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "all.zip")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	files, _ := filepath.Glob("testdata/osv/go/*.json")
	ghsa, _ := filepath.Glob("testdata/osv/ghsa/*.json")
	files = append(files, ghsa...)
	for _, p := range files {
		b, _ := os.ReadFile(p)
		w, _ := zw.Create(filepath.Base(p))
		w.Write(b)
	}
	w, _ := zw.Create("BROKEN-1.json")
	io.WriteString(w, `{"id":"BROKEN-1","severity":[{"type":"CVSS_V3","score":"CVSS:3.1/AV:N"}]}`)
	zw.Create("README.txt")
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	n := 0
	res, err := ReadOSV(path, func(Advisory) error { n++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if n != len(files) || res.Skipped != 1 || !strings.HasSuffix(res.Skips[0].Source, "all.zip!BROKEN-1.json") || !strings.Contains(res.Skips[0].Reason, "missing mandatory metric") {
		t.Errorf("n=%d (want %d), skips %v", n, len(files), res.Skips)
	}
	os.WriteFile(path, []byte("not a zip"), 0o644)
	if _, err := ReadOSV(path, func(Advisory) error { return nil }); err == nil {
		t.Error("corrupt zip: want error")
	}
}

// Issue 12, defect 11: a redirect to another host is refused (it would
// carry the apiKey header there); one within the host is followed.
func TestFetchRefusesCrossHostRedirect(t *testing.T) {
	var leaked []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked = append(leaked, r.Header.Get("apiKey"))
		w.Write([]byte("{}"))
	}))
	defer other.Close()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/feed", http.StatusFound)
		case "/moved":
			http.Redirect(w, r, "/feed", http.StatusMovedPermanently)
		default:
			w.Write([]byte("{}"))
		}
	}))
	defer origin.Close()
	f := newFetcher(&recordingSleep{}, time.Now())
	key := http.Header{"apiKey": {"secret-key"}}
	if _, err := f.Get(context.Background(), origin.URL+"/away", Validators{}, key); !errors.Is(err, ErrCrossHostRedirect) {
		t.Errorf("cross-host redirect: err = %v", err)
	}
	if len(leaked) != 0 {
		t.Errorf("the other host was asked %d times (apiKey %q)", len(leaked), leaked)
	}
	resp, err := f.Get(context.Background(), origin.URL+"/moved", Validators{}, key)
	if err != nil {
		t.Fatalf("same-host redirect: %v", err)
	}
	resp.Body.Close()
}
