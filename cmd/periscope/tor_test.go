package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// TestTorExits loads a list with `ingest tor-exits`, then serves --demo
// (which loads its bundled list) with the sync pointed at a local list
// server, and finds each list's exits through /nexus/tor/check-ip.
func TestTorExits(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			dsn := storetest.DSN(t, engine)
			file := filepath.Join(t.TempDir(), "torbulkexitlist")
			if err := os.WriteFile(file, []byte("198.51.100.23\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			if err := run(context.Background(), []string{"ingest", "tor-exits", "--database", dsn, file}, func(string) string { return "" }, &out, &errOut); err != nil {
				t.Fatalf("ingest: %v\n%s", err, errOut.String())
			}
			if !strings.Contains(out.String(), "tor-exits: 1 source(s): read 1, stored 1 (inserted 1, updated 0)") {
				t.Errorf("ingest said %q", out.String())
			}
			bad := filepath.Join(t.TempDir(), "page.html")
			os.WriteFile(bad, []byte("<html>Service unavailable</html>"), 0o600)
			if err := run(context.Background(), []string{"ingest", "tor-exits", "--database", dsn, bad}, func(string) string { return "" }, &out, &errOut); err == nil {
				t.Error("an HTML page was ingested as an exit list")
			}
			var lists atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				lists.Add(1)
				w.Write([]byte("ExitNode 0123456789ABCDEF0123456789ABCDEF01234567\nPublished 2026-11-20 09:00:00\nLastStatus 2026-11-20 10:00:00\nExitAddress 203.0.113.77 2026-11-20 10:00:00\n"))
			}))
			defer srv.Close()
			s := startServer(t, dsn, "--demo", "--tor-sync-interval", "1m", "--tor-exits-url", srv.URL, "--allow-private-targets")
			key := demoKeys(t, s.stdout.String())["free"]
			count := func(ip string) int {
				t.Helper()
				status, body := s.do(t, "GET", "/api/v1/nexus/tor/check-ip?ip="+ip, key, "")
				var c struct {
					Count int `json:"count"`
				}
				if status != 200 || json.Unmarshal(body, &c) != nil {
					t.Fatalf("check-ip %s: %d %s", ip, status, body)
				}
				return c.Count
			}
			deadline := time.Now().Add(30 * time.Second)
			for count("203.0.113.77") != 1 {
				if time.Now().After(deadline) {
					t.Fatalf("the synced list never arrived (%d downloads)", lists.Load())
				}
				time.Sleep(200 * time.Millisecond)
			}
			for ip, want := range map[string]int{"198.51.100.23": 1, "185.241.208.232": 1, "8.8.8.8": 0} {
				if got := count(ip); got != want {
					t.Errorf("%s: count %d, want %d", ip, got, want)
				}
			}
			if err := s.stop(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
