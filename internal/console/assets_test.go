package console_test

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// TestAssets: every asset a page names is served under its content-hashed
// name, cached for a year, and everything shipped stays within budget.
func TestAssets(t *testing.T) {
	e := newEnv(t, "sqlite")
	b := e.browser()
	p := b.get("/login")
	refs := regexp.MustCompile(`(?:href|src)="(/assets/[^"]+)"`).FindAllStringSubmatch(p.Body, -1)
	if len(refs) != 6 {
		t.Fatalf("the sign-in page names %d assets, want 6 (3 CSS, 3 JS)", len(refs))
	}
	total := 0
	for _, m := range refs {
		if !regexp.MustCompile(`\.[0-9a-f]{10}\.(js|css)$`).MatchString(m[1]) {
			t.Errorf("%s: no content hash in the name", m[1])
		}
		resp, err := http.Get(e.HTTP.URL + m[1])
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		total += len(body)
		if resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" ||
			!(strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css") || strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript")) {
			t.Errorf("%s: %d %v", m[1], resp.StatusCode, resp.Header)
		}
	}
	// The budget: all JS and CSS, uncompressed.
	if total > 150_000 {
		t.Errorf("the console ships %d bytes of JS and CSS, over the 150000-byte budget", total)
	}
	t.Logf("JS and CSS shipped: %d bytes", total)
	if resp, err := http.Get(e.HTTP.URL + "/assets/htmx.min.js"); err != nil || resp.StatusCode != 404 {
		t.Errorf("an unhashed name is served: %v", resp)
	}
}
