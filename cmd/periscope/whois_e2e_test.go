package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// fakeRegistries are loopback RDAP (.com) and port-43 (.it) servers
// answering with recorded data, and counting what reached them.
type fakeRegistries struct {
	rdapURL, whoisAddr string
	rdapHits, whoisHit atomic.Int64
}

func startFakeRegistries(t *testing.T) *fakeRegistries {
	f := &fakeRegistries{}
	googleRDAP, err := os.ReadFile("testdata/whois/whoisit_rdap.verisign.com_domain_GOOGLE.COM.json")
	if err != nil {
		t.Fatal(err)
	}
	itRaw, _ := os.ReadFile("testdata/whois/it_google.it.txt")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.rdapHits.Add(1)
		if r.URL.Path == "/com/v1/domain/google.com" {
			w.Header().Set("Content-Type", "application/rdap+json")
			w.Write([]byte(strings.ReplaceAll(string(googleRDAP), "https://rdap.markmonitor.com/rdap", f.rdapURL+"/registrar")))
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	f.rdapURL = srv.URL
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f.whoisHit.Add(1)
			go func() {
				defer c.Close()
				bufio.NewReader(c).ReadString('\n')
				io.WriteString(c, string(itRaw))
			}()
		}
	}()
	f.whoisAddr = ln.Addr().String()
	return f
}

func writeFile(t *testing.T, name, body string) string {
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestWhoisEndToEnd runs serve with loopback registries and
// --allow-private-targets, and looks up over real HTTP.
func TestWhoisEndToEnd(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			f := startFakeRegistries(t)
			boot := writeFile(t, "dns.json", fmt.Sprintf(`{"version":"1.0","publication":"2026-01-01T00:00:00Z","services":[[["com"],["%s/com/v1/"]]]}`, f.rdapURL))
			servers := writeFile(t, "servers.txt", "it "+f.whoisAddr+"\n")
			dsn := storetest.DSN(t, engine)
			s := startServer(t, dsn, "--demo", "--allow-private-targets", "--rdap-bootstrap", boot, "--whois-servers", servers)
			oem := demoKeys(t, s.stdout.String())["oem"]

			// The demo answers from its cache without asking upstream.
			status, body := s.do(t, "POST", "/api/v1/oem/whois/lookup", oem, `{"domain":"google.com"}`)
			if status != 200 || !strings.Contains(string(body), `"cached":true`) || f.rdapHits.Load() != 0 {
				t.Fatalf("demo lookup: %d rdap hits %d %.300s", status, f.rdapHits.Load(), body)
			}
			// no_cache goes to the loopback RDAP registry.
			status, body = s.do(t, "POST", "/api/v1/oem/whois/lookup", oem, `{"domain":"google.com","no_cache":true}`)
			var res struct {
				Cached    bool `json:"cached"`
				WhoisData struct {
					Registered bool            `json:"registered"`
					RDAP       json.RawMessage `json:"rdap"`
					Whois      *struct {
						Registrar string `json:"registrar"`
						Source    string `json:"source"`
					} `json:"whois"`
				} `json:"whois_data"`
			}
			json.Unmarshal(body, &res)
			if status != 200 || res.Cached || !strings.Contains(string(res.WhoisData.RDAP), f.rdapURL) || f.rdapHits.Load() < 1 {
				t.Fatalf("RDAP lookup: %d %.400s", status, body)
			}
			// Port 43 for .it through the --whois-servers file.
			status, body = s.do(t, "POST", "/api/v1/oem/whois/lookup", oem, `{"domain":"google.it","no_cache":true}`)
			json.Unmarshal(body, &res)
			if status != 200 || res.WhoisData.Whois == nil || res.WhoisData.Whois.Source != f.whoisAddr || f.whoisHit.Load() != 1 {
				t.Fatalf("port-43 lookup: %d %.400s", status, body)
			}
			// Not registered.
			status, body = s.do(t, "POST", "/api/v1/oem/whois/lookup", oem, `{"domain":"surely-not-registered.com"}`)
			if status != 200 || !strings.Contains(string(body), `"registered":false`) {
				t.Fatalf("not registered: %d %s", status, body)
			}
			status, body = s.do(t, "POST", "/api/v1/oem/whois/search", oem, `{"registrar":"markmonitor","tld":"com"}`)
			if status != 200 || !strings.Contains(string(body), `"domain":"google.com"`) {
				t.Fatalf("search: %d %.300s", status, body)
			}

			// The CLI does the same lookup.
			out, errOut, err := runCLI(t, "whois", "--database", dsn, "--allow-private-targets", "--rdap-bootstrap", boot, "--no-cache", "google.com")
			if err != nil || !strings.Contains(out, "Registrar:   MarkMonitor Inc.") {
				t.Fatalf("periscope whois: %v\n%s%s", err, out, errOut)
			}
		})
	}
}

// TestWhoisRefusesPrivateTargets shows that without --allow-private-targets
// a bootstrap URL or WHOIS server leading to 127.0.0.1, 10.0.0.1 or
// 169.254.169.254 is refused (no connection is attempted).
func TestWhoisRefusesPrivateTargets(t *testing.T) {
	f := startFakeRegistries(t)
	boot := writeFile(t, "dns.json", fmt.Sprintf(`{"services":[[["com"],["%s/com/v1/"]],[["net"],["http://10.0.0.1/"]],[["org"],["https://169.254.169.254/"]]]}`, f.rdapURL))
	servers := writeFile(t, "servers.txt", "com 127.0.0.1:43\nnet 10.0.0.1\norg 169.254.169.254:43\nit "+f.whoisAddr+"\n")
	s := startServer(t, storetest.DSN(t, "sqlite"), "--demo", "--rdap-bootstrap", boot, "--whois-servers", servers)
	oem := demoKeys(t, s.stdout.String())["oem"]
	for _, domain := range []string{"nothere.com", "nothere.net", "nothere.org", "nothere.it"} {
		status, body := s.do(t, "POST", "/api/v1/oem/whois/lookup", oem, `{"domain":"`+domain+`"}`)
		if status != 503 {
			t.Fatalf("%s: %d %s, want 503", domain, status, body)
		}
	}
	// A stored answer is served stale instead.
	status, body := s.do(t, "POST", "/api/v1/oem/whois/lookup", oem, `{"domain":"google.com","no_cache":true}`)
	if status != 200 || !strings.Contains(string(body), `"stale":true`) {
		t.Fatalf("stale: %d %.300s", status, body)
	}
	if f.rdapHits.Load() != 0 || f.whoisHit.Load() != 0 {
		t.Fatalf("loopback registries reached: rdap %d whois %d", f.rdapHits.Load(), f.whoisHit.Load())
	}
	logs := s.stderr.String()
	for _, ip := range []string{"127.0.0.1", "10.0.0.1", "169.254.169.254"} {
		if !strings.Contains(logs, "resolves to "+ip) && !strings.Contains(logs, ip+" is ") {
			t.Errorf("no refusal of %s logged:\n%s", ip, logs)
		}
	}
}

func TestIngestWhois(t *testing.T) {
	dsn := storetest.DSN(t, "sqlite")
	out, errOut, err := runCLI(t, "ingest", "whois", "--database", dsn, "testdata/whois", writeFile(t, "junk.txt", "nothing to see"))
	if err != nil || !strings.Contains(out, "whois: 4 source(s): read 4, stored 3 (inserted 2, updated 1), unchanged 0, skipped 0, rejected 1") || !strings.Contains(out, "rejected junk.txt: the answer names no domain") {
		t.Fatalf("ingest: %v\n%s%s", err, out, errOut)
	}
}
