package api_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/periscope-oss/periscope/internal/accesslog"
	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The access log, through accesslog (as serve wires it) and through the
// logger's own handler when no access-log writer is given: one line a
// request with the route, status, key prefix and account, and never the key
// or the query string.
func TestAccessLogLines(t *testing.T) {
	for name, wire := range map[string]func(d *api.Deps, out *lockedBuffer){
		"accesslog": func(d *api.Deps, out *lockedBuffer) { d.AccessLog = accesslog.New(out) },
		"slog":      func(d *api.Deps, out *lockedBuffer) { d.Log = slog.New(slog.NewJSONHandler(out, nil)) },
	} {
		t.Run(name, func(t *testing.T) { checkAccessLog(t, wire) })
	}
}

func checkAccessLog(t *testing.T, wire func(d *api.Deps, out *lockedBuffer)) {
	var out lockedBuffer
	e := apitest.New(t, "sqlite", apitest.Options{Deps: func(d *api.Deps, _ *store.Store) { wire(d, &out) }})
	acct, key := e.Account(periscope.Account{CreditsPerMonth: 10})
	if r := e.Do("GET", "/api/v1/auth/status?apikey="+key+"&q=secret-query", key, nil); r.Status != 200 {
		t.Fatalf("auth/status: %d %s", r.Status, r.Body)
	}
	if r := e.Do("GET", "/api/v1/auth/status", "wrong-"+key, nil); r.Status != 401 {
		t.Fatalf("bad key: %d", r.Status)
	}
	text := out.String()
	if strings.Contains(text, key) || strings.Contains(text, key[8:]) || strings.Contains(text, "secret-query") {
		t.Fatalf("a key or a query string reached the access log: %s", text)
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2: %s", len(lines), text)
	}
	var ok, refused map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &ok); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &refused); err != nil {
		t.Fatal(err)
	}
	if ok["msg"] != "request" || ok["level"] != "INFO" || ok["route"] != "GET /api/v1/auth/status" || ok["status"] != 200.0 ||
		ok["path"] != "/api/v1/auth/status" || ok["account"] != acct.ID || ok["key"] == nil || ok["request_id"] == "" || ok["remote"] != "127.0.0.1" {
		t.Errorf("served line: %s", lines[0])
	}
	if refused["status"] != 401.0 || refused["key"] != nil || refused["account"] != nil {
		t.Errorf("refused line: %s", lines[1])
	}
}
