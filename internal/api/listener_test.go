package api_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/periscope-oss/periscope/internal/api"
)

// TestJSONErrorListenerLeavesResponsesAlone: a handler's own answer is
// never rewritten, even a text/plain error on a closing connection, which
// is what net/http's own errors look like apart from the Date header.
func TestJSONErrorListenerLeavesResponsesAlone(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		http.Error(w, "400 Bad Request", http.StatusBadRequest)
	}))
	srv.Listener = api.JSONErrorListener(srv.Listener)
	srv.Start()
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" || string(b) != "400 Bad Request\n" {
		t.Fatalf("handler's answer changed: %d %q %q", resp.StatusCode, resp.Header, b)
	}
}
