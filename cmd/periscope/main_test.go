package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// syncBuffer is a goroutine-safe writer for the server's output.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// server is a running `periscope serve` started through run.
type server struct {
	base   string
	stdout *syncBuffer
	stderr *syncBuffer
	stop   func() error
	client *http.Client
}

// startServer runs the real serve command on :0 and waits until it listens.
func startServer(t *testing.T, dsn string, extra ...string) *server {
	t.Helper()
	return startServerEnv(t, func(string) string { return "" }, dsn, extra...)
}

// startServerEnv is startServer with the environment getenv.
func startServerEnv(t *testing.T, getenv func(string) string, dsn string, extra ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--database", dsn}, extra...)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, args, getenv, io.MultiWriter(pw, stdout), stderr)
		pw.Close()
	}()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		re := regexp.MustCompile(`listening on (http://\S+)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		io.Copy(io.Discard, pr)
	}()
	var base string
	select {
	case base = <-addr:
	case err := <-done:
		cancel()
		t.Fatalf("serve exited: %v\nstderr: %s", err, stderr.String())
	case <-time.After(3 * time.Minute): // the demo's load takes a while on a busy machine
		cancel()
		t.Fatalf("serve did not start\nstderr: %s", stderr.String())
	}
	var once sync.Once
	var stopErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case stopErr = <-done:
			case <-time.After(30 * time.Second):
				stopErr = context.DeadlineExceeded
			}
		})
		return stopErr
	}
	t.Cleanup(func() { stop() })
	return &server{base: base, stdout: stdout, stderr: stderr, stop: stop, client: &http.Client{}}
}

func (s *server) do(t *testing.T, method, path, key, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, s.base+path, rd)
	if key != "" {
		req.Header.Set("X-API-KEY", key)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

var demoKeyLine = regexp.MustCompile(`(?m)^\s+(free|enterprise|oem)\s+.*X-API-KEY: ([0-9a-f]{64})$`)

func demoKeys(t *testing.T, out string) map[string]string {
	t.Helper()
	keys := map[string]string{}
	for _, m := range demoKeyLine.FindAllStringSubmatch(out, -1) {
		keys[m[1]] = m[2]
	}
	if len(keys) != 3 {
		t.Fatalf("demo keys not printed:\n%s", out)
	}
	return keys
}

// TestServeEndToEnd drives the real binary's run over HTTP on both engines.
func TestServeEndToEnd(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			dsn := storetest.DSN(t, engine)
			s := startServer(t, dsn, "--demo")
			s.client.Transport = apitest.Validator(t, fetchOpenAPI(t, s.base)).Transport(http.DefaultTransport)
			keys := demoKeys(t, s.stdout.String())

			status, body := s.do(t, "GET", "/api/v1/auth/status", keys["free"], "")
			if status != 200 || !strings.Contains(string(body), `"plan":"free"`) || !strings.Contains(string(body), `"total_credits_per_month":100`) {
				t.Fatalf("auth/status: %d %s", status, body)
			}
			status, body = s.do(t, "GET", "/api/v1/enterprise/organizations", keys["enterprise"], "")
			if status != 200 || !strings.Contains(string(body), `"is_default":true`) {
				t.Fatalf("organizations: %d %s", status, body)
			}
			if status, _ := s.do(t, "POST", "/api/v1/oem/account/credits", keys["oem"], `{"query_tags":{"t":"e2e"}}`); status != 200 {
				t.Fatalf("oem credits: %d", status)
			}
			if status, _ := s.do(t, "GET", "/readyz", "", ""); status != 200 {
				t.Fatalf("readyz: %d", status)
			}
			if status, body := s.do(t, "GET", "/metrics", "", ""); status != 200 || !strings.Contains(string(body), `periscope_http_requests_total{method="GET",route="GET /api/v1/auth/status",status="200"} 1`) {
				t.Fatalf("metrics: %d %s", status, body)
			}
			if err := s.stop(); err != nil {
				t.Fatalf("shutdown: %v", err)
			}
			logs := s.stderr.String()
			for _, k := range keys {
				if strings.Contains(logs, k) || strings.Contains(logs, k[8:]) {
					t.Fatal("a key reached the log")
				}
			}
			if !strings.Contains(logs, `"route":"GET /api/v1/auth/status"`) {
				t.Fatalf("no access log line: %s", logs)
			}

			// A second --demo start is idempotent: same accounts, new keys, old ones revoked.
			s2 := startServer(t, dsn, "--demo")
			keys2 := demoKeys(t, s2.stdout.String())
			if status, _ := s2.do(t, "GET", "/api/v1/auth/status", keys["free"], ""); status != 401 {
				t.Errorf("old demo key still works: %d", status)
			}
			if status, body := s2.do(t, "GET", "/api/v1/enterprise/organizations", keys2["enterprise"], ""); status != 200 || strings.Count(string(body), `"id"`) != 1 {
				t.Errorf("second demo start: %d %s", status, body)
			}
		})
	}
}

func fetchOpenAPI(t *testing.T, base string) []byte {
	resp, err := http.Get(base + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !json.Valid(b) {
		t.Fatal("openapi.json is not JSON")
	}
	return b
}

func runCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	return runCLIEnv(t, nil, args...)
}

// runCLIEnv runs a command with the environment env.
func runCLIEnv(t *testing.T, env map[string]string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, func(k string) string { return env[k] }, &out, &errb)
	return out.String(), errb.String(), err
}

func TestCLI(t *testing.T) {
	db := storetest.DSN(t, "sqlite")
	d := "--database=" + db
	if _, _, err := runCLI(t, "migrate", d); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, "account", "create", d, "--company", "Acme", "--email", "a@acme.test", "--first-name", "Ada", "--last-name", "L", "--enterprise", "--credits", "50")
	if err != nil || !strings.Contains(out, "created account") {
		t.Fatalf("create: %v %s", err, out)
	}
	if _, _, err := runCLI(t, "account", "create", d, "--company", "Acme", "--email", "b@acme.test"); err == nil || strings.Contains(err.Error(), "\n") {
		t.Fatalf("duplicate company: %v", err)
	}
	out, _, err = runCLI(t, "account", "update", d, "Acme", "--oem", "--oem-credits", "7", "--plan", "gold")
	if err != nil || !strings.Contains(out, "oem credits:             0 used of 7") || !strings.Contains(out, "plan:                    gold") || !strings.Contains(out, "credits:                 0 used of 50") {
		t.Fatalf("update: %v %s", err, out)
	}
	key, _, err := runCLI(t, "key", "create", d, "--account", "Acme", "--name", "ci")
	key = strings.TrimSpace(key)
	if err != nil || len(key) != 64 {
		t.Fatalf("key create: %v %q", err, key)
	}
	out, _, err = runCLI(t, "key", "list", d, "--account", "Acme")
	if err != nil || !strings.Contains(out, key[:8]) || strings.Contains(out, key[8:]) {
		t.Fatalf("key list: %v %s", err, out)
	}
	out, _, err = runCLI(t, "account", "list", d)
	if err != nil || !strings.Contains(out, "Acme") {
		t.Fatalf("account list: %v %s", err, out)
	}
	if _, _, err := runCLI(t, "key", "revoke", d, key[:8]); err != nil {
		t.Fatal(err)
	}
	out, _, _ = runCLI(t, "key", "list", d, "--account", "Acme")
	if strings.Contains(out, "\t-\n") || !strings.Contains(out, "20") {
		t.Fatalf("revoked key not shown as revoked: %s", out)
	}
	for _, bad := range [][]string{
		{"nope"}, {"account"}, {"account", "show", d, "Nobody"}, {"key", "create", d}, {"key", "revoke", d, "ffffffff"},
		{"serve", "--database", db, "--log-level", "loud"}, {"ingest"}, {"ingest", "no-such-kind", "x"},
		{"account", "create", d, "--company", "X", "--email", "x@x.test", "--max-results", "0"},
	} {
		if _, _, err := runCLI(t, bad...); !oneLineError(err) {
			t.Errorf("%v: want a one-line error (and a line pointing to --help), got %v", bad, err)
		}
	}
	if out, _, err := runCLI(t, "version"); err != nil || !strings.HasPrefix(out, "periscope ") {
		t.Errorf("version: %v %q", err, out)
	}
}

// oneLineError reports whether err is one line, or, for a command line the
// command cannot run, one line and one more pointing to --help.
func oneLineError(err error) bool {
	if err == nil {
		return false
	}
	first, rest, _ := strings.Cut(err.Error(), "\n")
	return first != "" && (rest == "" || !strings.Contains(rest, "\n") && strings.HasPrefix(rest, `Run "periscope `) && strings.Contains(rest, "--help"))
}
