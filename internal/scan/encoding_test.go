package scan

import (
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/host"
)

// TestLegacyBytesDecoded checks that a scanner line holding Windows-1252
// bytes (a page title served in that charset, copied raw) is decoded by
// textenc and stored, not rejected or kept as invalid UTF-8.
func TestLegacyBytesDecoded(t *testing.T) {
	line := "{\"input\":\"shop.example.com\",\"host\":\"93.184.216.34\",\"port\":\"443\",\"url\":\"https://shop.example.com\",\"status_code\":200,\"title\":\"Caf\xe9 \x96 M\xfcller\"}\n"
	var hosts []host.Host
	st, err := Parse(HTTPX, strings.NewReader(line), func(h host.Host) error { hosts = append(hosts, h); return nil })
	if err != nil || st.Rejected != 0 || len(hosts) != 1 {
		t.Fatalf("stats %+v, %d hosts, %v", st, len(hosts), err)
	}
	if got := hosts[0].HTTPTitle; got != "Café – Müller" {
		t.Errorf("title %q, want %q", got, "Café – Müller")
	}
}
