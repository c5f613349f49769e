package console

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSearchFilters(t *testing.T) {
	for _, c := range []struct {
		in   string
		want map[string]any
	}{
		{"example.com", map[string]any{"domain": "example.com"}},
		{"port:443 port:8443 tech:nginx", map[string]any{"port": []any{int64(443), int64(8443)}, "tech": "nginx"}},
		{`is_cloud:true http_title:"Admin Login"`, map[string]any{"is_cloud": true, "http_title": "Admin Login"}},
		{"country:DE asn:13335", map[string]any{"country": "DE", "asn": int64(13335)}},
		{"", map[string]any{}},
	} {
		if diff := cmp.Diff(c.want, searchFilters(c.in)); diff != "" {
			t.Errorf("searchFilters(%q) (-want +got):\n%s", c.in, diff)
		}
	}
}

func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{
		"/alerts?state=open": "/alerts?state=open", "/hosts/a.example.com": "/hosts/a.example.com",
		"//evil.example": "/", "https://evil.example": "/", "/\\evil": "/", "": "/", "alerts": "/",
		"/login?next=/x": "/", "/logout": "/", "/a\r\nSet-Cookie:x": "/",
	} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}
