package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/ct/cttest"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// TestFeedURLsRefuseLoopback is issue 29's item 8: a feed or ingest URL on
// 127.0.0.1 is refused without --allow-private-targets, as a WHOIS server
// there is, with an error naming the address and the switch, and no
// request reaches it; serve says at start when the switch is on.
func TestFeedURLsRefuseLoopback(t *testing.T) {
	var hits atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.NotFound(w, r)
	}))
	defer up.Close()
	log := cttest.New()
	defer log.Close()
	db := storetest.DSN(t, "sqlite")
	for _, args := range [][]string{
		{"ingest", "epss", up.URL + "/epss.csv"},
		{"ingest", "kev", up.URL + "/kev.json"},
		{"ingest", "hosts", up.URL + "/hosts.ndjson"},
		{"ingest", "ct", log.URL()},
	} {
		_, _, err := runCLI(t, append(args, "--database", db)...)
		if err == nil || !strings.Contains(err.Error(), "127.0.0.1 is loopback") || !strings.Contains(err.Error(), "--allow-private-targets") {
			t.Errorf("%v: err = %v, want the loopback refusal naming the switch", args, err)
		}
	}

	s := startServer(t, db, "--sync-interval", "1h", "--vuln-kev-url", up.URL+"/kev.json",
		"--vuln-epss-url=", "--vuln-exploitdb-url=", "--vuln-osv-url=", "--vuln-nvd-url=",
		"--ct-logs", log.URL(), "--ct-poll", "50ms")
	if strings.Contains(s.stdout.String(), "private targets allowed") {
		t.Errorf("serve without the switch says private targets are allowed:\n%s", s.stdout.String())
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, m := s.do(t, "GET", "/metrics", "", "")
		logs := s.stderr.String()
		if strings.Contains(string(m), `periscope_vuln_sync_last_run_ok{source="kev"} 0`) &&
			strings.Count(logs, "127.0.0.1 is loopback") >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the refusals never showed:\n%s\n%s", m, logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := hits.Load() + int64(log.Requests("get-sth")); n != 0 {
		t.Fatalf("%d requests reached the loopback feeds", n)
	}

	s = startServer(t, storetest.DSN(t, "sqlite"), "--allow-private-targets")
	if !strings.Contains(s.stdout.String(), "private targets allowed (--allow-private-targets)") {
		t.Errorf("serve with the switch did not say so:\n%s", s.stdout.String())
	}
}
