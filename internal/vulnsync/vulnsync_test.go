package vulnsync_test

import (
	"archive/zip"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
	"github.com/periscope-oss/periscope/internal/vuln"
	"github.com/periscope-oss/periscope/internal/vulnstore"
	"github.com/periscope-oss/periscope/internal/vulnsync"
)

const data = "../vuln/testdata/"

// upstream serves the recorded feeds like the real hosts do: KEV with an
// ETag and 304s, EPSS once failing with 503, the OSV Go archive built from
// the recorded records, and one NVD API page.
type upstream struct {
	mu       sync.Mutex
	requests map[string]int
	notMod   int
}

func (u *upstream) handler(t *testing.T) http.Handler {
	kev, _ := os.ReadFile(data + "kev/known_exploited_vulnerabilities.json")
	epss, _ := os.ReadFile(data + "epss/vunnel_epss_scores_2025-02-20_first5rows.csv")
	edb, _ := os.ReadFile(data + "exploitdb/files_exploits_sample.csv")
	nvd, _ := os.ReadFile(data + "nvd/osvdev_CVE-2024-3094.json")
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	files, _ := filepath.Glob(data + "osv/go/*.json")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		w, _ := zw.Create(filepath.Base(f))
		w.Write(b)
	}
	zw.Close()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.requests[r.URL.Path]++
		n := u.requests[r.URL.Path]
		u.mu.Unlock()
		switch r.URL.Path {
		case "/kev.json":
			if r.Header.Get("If-None-Match") == `"v1"` {
				u.mu.Lock()
				u.notMod++
				u.mu.Unlock()
				w.WriteHeader(http.StatusNotModified)
				return
			}
			w.Header().Set("ETag", `"v1"`)
			w.Write(kev)
		case "/epss.csv":
			if n == 1 {
				w.Header().Set("Retry-After", "1")
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
			w.Write(epss)
		case "/exploits.csv":
			w.Write(edb)
		case "/osv/Go/all.zip":
			w.Write(zbuf.Bytes())
		case "/nvd":
			if r.URL.Query().Get("lastModStartDate") == "" {
				t.Errorf("NVD request without a window: %s", r.URL)
			}
			w.Write(nvd)
		default:
			http.NotFound(w, r)
		}
	})
}

func TestSyncer(t *testing.T) {
	storetest.EachOf(t, []store.MigrationSet{vulnstore.Migrations()}, vulnstore.New, func(t *testing.T, s *vulnstore.Store) {
		ctx := context.Background()
		u := &upstream{requests: map[string]int{}}
		srv := httptest.NewServer(u.handler(t))
		defer srv.Close()
		var slept []time.Duration
		f := &vuln.Fetcher{Client: srv.Client(), MaxRetries: 3, BaseDelay: time.Millisecond,
			Sleep: func(ctx context.Context, d time.Duration) error { slept = append(slept, d); return nil }}
		now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
		sy := &vulnsync.Syncer{Store: s, Fetcher: f, Now: func() time.Time { return now }, Config: vulnsync.Config{
			KEVURL: srv.URL + "/kev.json", EPSSURL: srv.URL + "/epss.csv", ExploitDBURL: srv.URL + "/exploits.csv",
			OSVURL: srv.URL + "/osv/{ecosystem}/all.zip", OSVEcosystems: []string{"Go", "PyPI"}, NVDURL: srv.URL + "/nvd",
		}}
		err := sy.RunOnce(ctx)
		// PyPI is not served: that source fails, the others succeed.
		if err == nil || !strings.Contains(err.Error(), "osv:PyPI") || strings.Contains(err.Error(), "kev") {
			t.Fatalf("first run: %v", err)
		}
		if len(slept) != 1 || slept[0] != time.Second {
			t.Errorf("backoff sleeps %v, want the 503's Retry-After of 1s", slept)
		}
		c, err := s.CountVulns(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c.KEV != 1404 || c.EPSS != 5 || c.Exploits != 4 || c.Advisories != 62 || c.Vulnerabilities < 1405 {
			t.Fatalf("counts after sync %+v", c)
		}
		states, err := s.VulnSyncStates(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st := states["kev"]; st.ETag != `"v1"` || st.LastSuccess != now.Unix() || st.Records != 1404 || st.LastError != "" {
			t.Errorf("kev state %+v", st)
		}
		if st := states["osv:PyPI"]; st.LastSuccess != 0 || !strings.Contains(st.LastError, "404") {
			t.Errorf("osv:PyPI state %+v", st)
		}
		if st := states["nvd"]; st.LastSuccess != now.Unix() || st.Records != 1 {
			t.Errorf("nvd state %+v", st)
		}
		// Second run: KEV answers 304, nothing changes.
		now = now.Add(time.Hour)
		sy.RunOnce(ctx)
		if u.notMod != 1 {
			t.Errorf("conditional requests answered 304: %d, want 1", u.notMod)
		}
		c2, _ := s.CountVulns(ctx)
		if c2 != c {
			t.Errorf("counts changed on an unchanged upstream: %+v -> %+v", c, c2)
		}
		states, _ = s.VulnSyncStates(ctx)
		if st := states["kev"]; st.LastSuccess != now.Unix() {
			t.Errorf("kev state after 304 %+v", st)
		}
	})
}

func TestSourcesConfig(t *testing.T) {
	c := vulnsync.Config{KEVURL: "k", OSVURL: "https://x/{ecosystem}/all.zip", OSVEcosystems: []string{"Go", " ", "crates.io"}}
	got := c.Sources()
	if len(got) != 3 || got[2].URL != "https://x/crates.io/all.zip" || got[1].Name != "osv:Go" {
		t.Fatalf("sources %+v", got)
	}
}

func TestRunStopsWithContext(t *testing.T) {
	s := vulnstore.New(storetest.Open(t, "sqlite", vulnstore.Migrations()))
	sy := &vulnsync.Syncer{Store: s, Fetcher: &vuln.Fetcher{Client: http.DefaultClient}, Interval: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- sy.Run(ctx) }()
	cancel()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Fatalf("Run returned %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop")
	}
	if err := (&vulnsync.Syncer{Store: s}).Run(context.Background()); err == nil {
		t.Fatal("Run without an interval accepted")
	}
}

// Issue 12, defect 11: an answer that is not the feed (valid JSON or CSV of
// another shape, an empty body, an empty archive) is a failed sync, not a
// successful one with 0 records.
func TestSyncerAnswerNotAFeedFails(t *testing.T) {
	s := vulnstore.New(storetest.Open(t, "sqlite", vulnstore.Migrations()))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/kev.json":
			w.Write([]byte(`{"message":"moved"}`))
		case "/epss.csv":
			// an empty 200
		case "/osv/Go/all.zip":
			zw := zip.NewWriter(w)
			zw.Close()
		default:
			w.Write([]byte("id,file,description\n"))
		}
	}))
	defer srv.Close()
	sy := &vulnsync.Syncer{Store: s, Fetcher: &vuln.Fetcher{Client: srv.Client()}, Config: vulnsync.Config{
		KEVURL: srv.URL + "/kev.json", EPSSURL: srv.URL + "/epss.csv", ExploitDBURL: srv.URL + "/exploits.csv",
		OSVURL: srv.URL + "/osv/{ecosystem}/all.zip", OSVEcosystems: []string{"Go"}}}
	if err := sy.RunOnce(context.Background()); err == nil {
		t.Fatal("sync of HTML answers succeeded")
	}
	states, err := s.VulnSyncStates(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"kev", "epss", "exploitdb", "osv:Go"} {
		if st := states[name]; st.LastSuccess != 0 || st.LastError == "" {
			t.Errorf("%s state after an answer that is not the feed: %+v", name, st)
		}
	}
}
