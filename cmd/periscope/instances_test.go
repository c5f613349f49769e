package main

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/schema"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// helperArgsEnv carries serve's arguments to TestHelperServe in a child
// process, so a test can kill an instance with SIGKILL.
const helperArgsEnv = "PERISCOPE_HELPER_SERVE_ARGS"

// TestHelperServe is not a test: it is `periscope serve` in a child process
// of TestSeveralInstances (it skips unless started by it).
func TestHelperServe(t *testing.T) {
	args := os.Getenv(helperArgsEnv)
	if args == "" {
		t.Skip("runs only as a child of TestSeveralInstances")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, strings.Split(args, "\x1f"), os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "periscope:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// instanceProc is one `periscope serve` in its own process.
type instanceProc struct {
	cmd    *exec.Cmd
	base   string
	stderr *syncBuffer
	exited chan error
}

func startInstanceProc(t *testing.T, args ...string) *instanceProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperServe$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperArgsEnv+"="+strings.Join(args, "\x1f"))
	p := &instanceProc{cmd: cmd, stderr: &syncBuffer{}, exited: make(chan error, 1)}
	cmd.Stderr = p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`listening on (http://\S+)`)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		p.exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.exited
	})
	select {
	case p.base = <-addr:
	case err := <-p.exited:
		t.Fatalf("instance exited: %v\n%s", err, p.stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("instance did not start\n%s", p.stderr.String())
	}
	return p
}

func (p *instanceProc) get(t *testing.T, path, key string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", p.base+path, nil)
	req.Header.Set("X-API-KEY", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// leaseHolder reads who holds a lease now ("" for nobody).
func leaseHolder(t *testing.T, db *sql.DB, name string) string {
	t.Helper()
	var h string
	err := db.QueryRow(`SELECT holder FROM leases WHERE name = $1 AND expires_at >= clock_timestamp()`, name).Scan(&h)
	if errors.Is(err, sql.ErrNoRows) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestSeveralInstances runs two instances of `periscope serve` (separate
// processes) on one PostgreSQL database and one Redis, and shows that a
// key's rate limit and the failed-authentication limit hold across both,
// that each background job runs on exactly one, and that killing the
// leader (SIGKILL: no release) hands its jobs to the other within the lease
// time.
func TestSeveralInstances(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two server processes")
	}
	redisURL := os.Getenv("PERISCOPE_TEST_REDIS")
	if redisURL == "" {
		t.Skip("PERISCOPE_TEST_REDIS is not set (e.g. redis://127.0.0.1:6379/0): skipping the several-instances test")
	}
	dsn := storetest.DSN(t, "postgres") // skips without PERISCOPE_TEST_POSTGRES
	ctx := context.Background()
	st, err := store.Open(ctx, dsn, store.Files(schema.Sets()...))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx, schema.Sets()...); err != nil {
		t.Fatal(err)
	}
	a := periscope.Account{Company: "Shared Co", Enterprise: true, CreditsPerMonth: 1000, MaxResultsPerRequest: 100}
	u := periscope.User{Email: "shared@example.com"}
	if err := st.CreateAccount(ctx, &a, &u); err != nil {
		t.Fatal(err)
	}
	key, _, err := st.CreateKey(ctx, a.ID, u.ID, "shared")
	if err != nil {
		t.Fatal(err)
	}

	const ttl = 2 * time.Second // generous: renewals must not time out on a loaded machine
	args := []string{"serve", "--addr", "127.0.0.1:0", "--database", dsn, "--rate-limit", "10", "--auth-fail-limit", "4",
		"--rate-limit-store", redisURL, "--lease-ttl", ttl.String(), "--brand-poll", "200ms"}
	one, two := startInstanceProc(t, args...), startInstanceProc(t, args...)

	// Fixed one-minute windows: keep the counting clear of a minute's end.
	if s := time.Now().Second(); s >= 45 {
		time.Sleep(time.Duration(61-s) * time.Second)
	}
	ok, limited := 0, 0
	for i := range 20 {
		p := one
		if i%2 == 1 {
			p = two
		}
		switch code := p.get(t, "/api/v1/auth/status", key); code {
		case 200:
			ok++
		case 429:
			limited++
		default:
			t.Fatalf("request %d: status %d", i, code)
		}
	}
	if ok != 10 || limited != 10 {
		t.Fatalf("a limit of 10/min over two instances: %d answered, %d limited (want 10 and 10)", ok, limited)
	}
	bad := strings.Repeat("0", 64)
	for i := range 4 {
		p := one
		if i%2 == 1 {
			p = two
		}
		if code := p.get(t, "/api/v1/auth/status", bad); code != 401 {
			t.Fatalf("bad key %d: %d", i, code)
		}
	}
	if code := one.get(t, "/api/v1/auth/status", bad); code != 429 {
		t.Fatalf("fifth failed authentication over two instances: %d, want 429", code)
	}

	// Each background job on exactly one instance: the lease has one
	// holder, and only that instance logged starting the job.
	const job = "worker:brand-backfill"
	var holder string
	deadline := time.Now().Add(10 * ttl)
	for holder == "" && time.Now().Before(deadline) {
		holder = leaseHolder(t, st.DB(), job)
		time.Sleep(50 * time.Millisecond)
	}
	started := func(p *instanceProc) int {
		return strings.Count(p.stderr.String(), `"msg":"lease acquired: job starts here","lease":"`+job+`"`)
	}
	time.Sleep(2 * ttl) // renewals happen; nobody else starts it
	if n1, n2 := started(one), started(two); n1+n2 != 1 {
		t.Fatalf("%s started %d times on instance one and %d on two, want once in all", job, n1, n2)
	}
	leader, follower := one, two
	if started(two) == 1 {
		leader, follower = two, one
	}
	if h := leaseHolder(t, st.DB(), job); h != holder {
		t.Fatalf("holder changed from %q to %q without a failure", holder, h)
	}

	// Kill the leader outright: it cannot release. The other takes the job
	// over once the lease expires, within TTL + TTL/3 of its last renewal.
	killed := time.Now()
	if err := leader.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-leader.exited
	leader.exited <- nil // for the cleanup
	for started(follower) == 0 {
		if time.Since(killed) > 5*ttl {
			t.Fatalf("no takeover %v after the leader was killed\n%s", time.Since(killed), follower.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(killed)
	if limit := ttl + ttl/3 + time.Second; took > limit {
		t.Fatalf("takeover took %v, more than the lease time allows (%v)", took, limit)
	}
	if h := leaseHolder(t, st.DB(), job); h == "" || h == holder {
		t.Fatalf("after takeover the holder is %q (was %q)", h, holder)
	}
	t.Logf("takeover %v after SIGKILL of the leader (lease TTL %v)", took, ttl)
	// The survivor still serves, sharing the same counts.
	if code := follower.get(t, "/api/v1/auth/status", key); code != 429 {
		t.Fatalf("the survivor forgot the shared count: %d", code)
	}
}
