package main

import (
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// TestServePrivateRanges is issue 29's item 10 on the real serve: with
// --allow-private-targets an organization registers 127.0.0.1/32, the
// operator authorises it with `periscope org authorize-range`, and an
// on-demand scan probes it; without the switch the range is refused.
func TestServePrivateRanges(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	addRange := func(s *server, key string) (string, int, string) {
		t.Helper()
		status, body := s.do(t, "POST", "/api/v1/enterprise/organizations", key, `{"name":"Intranet"}`)
		var org struct{ ID string }
		if json.Unmarshal(body, &org); org.ID == "" {
			t.Fatalf("create organization: %d %s", status, body)
		}
		status, body = s.do(t, "POST", "/api/v1/enterprise/organizations/"+org.ID+"/ip-ranges", key, `{"ip_range":"127.0.0.1/32"}`)
		return org.ID, status, string(body)
	}
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			dsn := storetest.DSN(t, engine)
			s := startServer(t, dsn, "--demo", "--allow-private-targets", "--monitor-ports", port, "--monitor-resolvers", "127.0.0.1:1")
			ent := demoKeys(t, s.stdout.String())["enterprise"]
			org, status, body := addRange(s, ent)
			if status != 201 {
				t.Fatalf("add 127.0.0.1/32 with --allow-private-targets: %d %s", status, body)
			}
			if status, body := s.do(t, "GET", "/api/v1/enterprise/on-demand-scans?target=127.0.0.1", ent, ""); status != 403 {
				t.Fatalf("scan before authorisation: %d %s", status, body)
			}
			if out, errOut, err := runCLI(t, "org", "authorize-range", "--database", dsn, org, "127.0.0.1/32"); err != nil {
				t.Fatalf("authorize-range: %v\n%s%s", err, out, errOut)
			}
			if status, body := s.do(t, "GET", "/api/v1/enterprise/on-demand-scans?target=127.0.0.1", ent, ""); status != 200 {
				t.Fatalf("scan after authorisation: %d %s", status, body)
			}
			for deadline := time.Now().Add(30 * time.Second); accepted.Load() == 0; time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the authorised range was not probed\n%s", s.stderr.String())
				}
			}
			accepted.Store(0)
		})
	}
	t.Run("without the switch", func(t *testing.T) {
		s := startServer(t, storetest.DSN(t, "sqlite"), "--demo", "--monitor-ports", port, "--monitor-resolvers", "127.0.0.1:1")
		_, status, body := addRange(s, demoKeys(t, s.stdout.String())["enterprise"])
		if status != 400 || !strings.Contains(body, "not public unicast space") {
			t.Fatalf("add 127.0.0.1/32 without --allow-private-targets: %d %s", status, body)
		}
	})
}
