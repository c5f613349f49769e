package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const vulnData = "../../internal/vuln/testdata/"

func TestIngestVulnCLI(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	out, _, err := runCLI(t, "ingest", "nvd", "--database", db, vulnData+"nvd")
	if err != nil || !strings.Contains(out, "nvd: 19 source(s): read 68, stored 68 (inserted 68, updated 0), unchanged 0, skipped 0, rejected 0") {
		t.Fatalf("first nvd ingest: %v\n%s", err, out)
	}
	out, _, err = runCLI(t, "ingest", "nvd", "--database", db, vulnData+"nvd")
	if err != nil || !strings.Contains(out, "read 68, stored 0 (inserted 0, updated 0), unchanged 68, skipped 0, rejected 0") || !strings.Contains(out, "records/s") {
		t.Fatalf("second nvd ingest: %v\n%s", err, out)
	}
	out, _, err = runCLI(t, "ingest", "exploitdb", "--database", db, vulnData+"exploitdb/files_exploits_sample.csv")
	if err != nil || !strings.Contains(out, "rejected 2") || !strings.Contains(out, "files_exploits_sample.csv: line 3: abc bad id") {
		t.Fatalf("exploitdb ingest: %v\n%s", err, out)
	}
	out, _, err = runCLI(t, "ingest", "osv", "--database", db, vulnData+"osv/go", vulnData+"osv/ghsa")
	if err != nil || !strings.Contains(out, "osv: 2 source(s): read 67, stored 67 (inserted 67,") {
		t.Fatalf("osv ingest: %v\n%s", err, out)
	}
	// A URL is downloaded (gzip or not) and ingested; a 404 is an error
	// naming it. The upstream is on loopback: --allow-private-targets.
	epss, _ := os.ReadFile(vulnData + "epss/vunnel_epss_scores_2025-02-20_first5rows.csv")
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/epss.csv" {
			http.NotFound(w, r)
			return
		}
		w.Write(epss)
	}))
	defer up.Close()
	out, _, err = runCLI(t, "ingest", "epss", "--allow-private-targets", "--database", db, up.URL+"/epss.csv")
	if err != nil || !strings.Contains(out, "read 5, stored 5 (inserted 5,") {
		t.Fatalf("epss from URL: %v\n%s", err, out)
	}
	if _, _, err = runCLI(t, "ingest", "epss", "--allow-private-targets", "--database", db, up.URL+"/missing.csv"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("missing URL: %v", err)
	}
	// A truncated catalog: the error names the file, the batches before it stay.
	b, _ := os.ReadFile(vulnData + "kev/known_exploited_vulnerabilities.json")
	trunc := filepath.Join(t.TempDir(), "kev.json")
	os.WriteFile(trunc, b[:len(b)*3/4], 0o644)
	out, errOut, err := runCLI(t, "ingest", "kev", "--database", db, trunc)
	if err == nil || !strings.Contains(errOut, "kev.json") || !strings.Contains(out, "read 1020, stored 1020 (inserted 1020,") {
		t.Fatalf("truncated kev: %v\n%s\n%s", err, out, errOut)
	}
}

// TestServeVulnDemoAndSync runs serve --demo with the scheduled sync
// pointed at a local upstream serving the recorded KEV catalog.
func TestServeVulnDemoAndSync(t *testing.T) {
	kev, err := os.ReadFile(vulnData + "kev/known_exploited_vulnerabilities.json")
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"kev-1"`)
		if r.Header.Get("If-None-Match") == `"kev-1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Write(kev)
	}))
	defer up.Close()
	db := filepath.Join(t.TempDir(), "p.db")
	s := startServer(t, db, "--demo", "--allow-private-targets", "--sync-interval", "1h", "--vuln-kev-url", up.URL+"/kev.json",
		"--vuln-epss-url=", "--vuln-exploitdb-url=", "--vuln-osv-url=", "--vuln-nvd-url=")
	keys := demoKeys(t, s.stdout.String())
	status, body := s.do(t, "GET", "/api/v1/vulnerability-intelligence/feed?keywords=CVE-2023-4863,CVE-2021-44228", keys["free"], "")
	if status != 200 || !strings.Contains(string(body), `"total_vulnerabilities":2`) || !strings.Contains(string(body), `"is_kev":true`) {
		t.Fatalf("demo feed: %d %s", status, body)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, m := s.do(t, "GET", "/metrics", "", "")
		if strings.Contains(string(m), `periscope_vuln_sync_last_run_ok{source="kev"} 1`) &&
			strings.Contains(string(m), `periscope_vuln_sync_records{source="kev"} 1404`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sync status never reached /metrics:\n%s\n%s", m, s.stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := s.stop(); err != nil {
		t.Fatalf("shutdown with the sync worker: %v", err)
	}
}
