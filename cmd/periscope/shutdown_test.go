package main

import (
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// Issue 12, defect 12: what docs/operations.md says of SIGTERM: the listener closes
// at once, so new connections are refused (a load balancer moves on), and
// the process exits once in-flight requests are done.
func TestShutdownRefusesNewConnections(t *testing.T) {
	s := startServer(t, storetest.DSN(t, "sqlite"))
	if status, _ := s.do(t, "GET", "/healthz", "", ""); status != 200 {
		t.Fatalf("healthz: %d", status)
	}
	u, _ := url.Parse(s.base)
	if err := s.stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	c, err := net.DialTimeout("tcp", u.Host, 2*time.Second)
	if err == nil {
		c.Close()
		t.Fatalf("a new connection was accepted after shutdown")
	}
}
