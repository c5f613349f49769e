package accesslog

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// viaSlog writes e through slog's JSON handler the way the API did before.
func viaSlog(e *Entry) []byte {
	var buf bytes.Buffer
	h := slog.NewJSONHandler(&buf, nil)
	r := slog.NewRecord(e.Time, slog.LevelInfo, "request", 0)
	r.AddAttrs(e.Attrs()...)
	if err := h.Handle(context.Background(), r); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// check compares e's line with slog's: the same JSON value always, and the
// same bytes unless a string holds a control character (slog writes \b and
// \f as \u0008 and \u000c, encoding/json and jsontext as \b and \f).
func check(t *testing.T, e *Entry) {
	t.Helper()
	got, want := Append(nil, e), viaSlog(e)
	if bytes.Equal(got, want) {
		return
	}
	var g, w map[string]any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("not JSON: %v: %s", err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("slog's line is not JSON: %v: %s", err, want)
	}
	if !reflect.DeepEqual(g, w) || !bytes.Contains(got, []byte(`\b`)) && !bytes.Contains(got, []byte(`\f`)) {
		t.Fatalf("line differs from slog's JSON handler:\n got %s\nwant %s", got, want)
	}
}

func TestMatchesSlogJSONHandler(t *testing.T) {
	base := Entry{Time: time.Date(2026, 11, 26, 5, 30, 1, 123456789, time.UTC), RequestID: "0123456789abcdef",
		Method: "GET", Path: "/api/v1/auth/status", Route: "GET /api/v1/auth/status", Status: 200,
		Bytes: 312, DurationUS: 17, Remote: "127.0.0.1"}
	check(t, &base)
	keyed := base
	keyed.Key, keyed.Account = "pk_abcd", "acct-1"
	check(t, &keyed)
	local := base
	local.Time = time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 5*3600+30*60))
	check(t, &local)
	for _, p := range []string{"/a\"b\\c", "/\x00\x01\x1f", "/<script>&", "/\xff\xfe", "/\u2028\u2029", "/é/日本", "/" + strings.Repeat("x", 4000)} {
		e := base
		e.Path, e.Remote, e.Method = p, p, p
		check(t, &e)
	}
}

func FuzzMatchesSlogJSONHandler(f *testing.F) {
	f.Add("/api/v1/host/a\"b", "GET", 404, int64(-1))
	f.Fuzz(func(t *testing.T, path, method string, status int, n int64) {
		e := Entry{Time: time.Unix(n%1e9, n%1e9).UTC(), RequestID: method, Method: method, Path: path,
			Route: "unmatched", Status: status, Bytes: n, DurationUS: n, Remote: path, Key: method, Account: path}
		check(t, &e)
	})
}

// Lines written by many goroutines, through Log and through Write, arrive
// whole.
func TestLinesDoNotInterleave(t *testing.T) {
	var buf bytes.Buffer
	w := New(&buf)
	logger := slog.New(slog.NewJSONHandler(w, nil))
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				w.Log(&Entry{Time: time.Now(), RequestID: "r", Method: "GET", Path: strings.Repeat("p", 300), Route: "x", Status: 200})
				logger.Info("other", "n", i)
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 8*200*2 {
		t.Fatalf("%d lines, want %d", len(lines), 8*200*2)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, `{"time":"`) || !strings.HasSuffix(l, "}") {
			t.Fatalf("broken line %q", l)
		}
	}
}
