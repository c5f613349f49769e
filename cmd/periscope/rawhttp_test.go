package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// TestServeAnswersUnparsableRequestsInJSON: requests net/http refuses
// before any handler runs (issue 29, item 6) get the API's JSON error, not
// net/http's text/plain, from the real serve over a raw TCP connection.
func TestServeAnswersUnparsableRequestsInJSON(t *testing.T) {
	s := startServer(t, storetest.DSN(t, "sqlite"))
	addr := strings.TrimPrefix(s.base, "http://")
	for _, tc := range []struct {
		name, request string
		status        int
		code, message string
	}{
		{"control character in the path", "GET /api/v1/auth/status\x01 HTTP/1.1\r\nHost: x\r\n\r\n", 400, "invalid_parameter", "percent-encoded"},
		{"space in the path", "GET /api/v1/auth status HTTP/1.1\r\nHost: x\r\n\r\n", 400, "invalid_parameter", "malformed"},
		{"control character in a header", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n", 400, "invalid_parameter", "malformed"},
		{"bad header name", "GET /healthz HTTP/1.1\r\nHost: x\r\nX A: b\r\n\r\n", 400, "invalid_parameter", "invalid header name"},
		{"no Host header", "GET /healthz HTTP/1.1\r\n\r\n", 400, "invalid_parameter", "missing required Host header"},
		{"headers over 64 KiB", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: " + strings.Repeat("a", 80<<10) + "\r\n\r\n", 431, "payload_too_large", "too large"},
		{"unknown transfer coding", "POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "invalid_parameter", "Transfer-Encoding"},
		{"unsupported HTTP version", "GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n", 505, "invalid_parameter", "unsupported protocol version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			// A good request first: the connection's normal answers are
			// untouched, and the rewrite also works mid-connection.
			br := bufio.NewReader(c)
			io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
			if resp, body := readRaw(t, br); resp.StatusCode != 200 || resp.Header.Get("Date") == "" || !strings.Contains(body, `"ok"`) {
				t.Fatalf("good request: %d %q %s", resp.StatusCode, resp.Header, body)
			}
			io.WriteString(c, tc.request)
			resp, body := readRaw(t, br)
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("X-Request-Id") == "" || !resp.Close {
				t.Fatalf("answer: %d %q", resp.StatusCode, resp.Header)
			}
			var e struct {
				Status  int    `json:"status"`
				Error   string `json:"error"`
				Message string `json:"message"`
			}
			if err := json.Unmarshal([]byte(body), &e); err != nil || e.Status != tc.status || e.Error != tc.code || !strings.Contains(e.Message, tc.message) {
				t.Fatalf("body %q (%v)", body, err)
			}
		})
	}
}

// readRaw reads one response and its whole body, checking the body is as
// long as Content-Length says.
func readRaw(t *testing.T, br *bufio.Reader) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := strconv.Atoi(resp.Header.Get("Content-Length")); err != nil || n != len(b) {
		t.Fatalf("Content-Length %q, body of %d bytes", resp.Header.Get("Content-Length"), len(b))
	}
	return resp, string(b)
}
