package hostquery

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/periscope"
)

// FuzzParsePlan: no input panics, every error is a query_invalid or
// invalid_parameter error (a 400, never a 500), and hostile input is
// answered in bounded time.
func FuzzParsePlan(f *testing.F) {
	for _, s := range []string{
		`country:US port:443`, `-port:22,80 OR (tag:web AND NOT cdn:cloudflare)`, `port:[8000 TO 8999]`,
		`http.title:"a \"b\""`, `last_seen:>2026-11-01`, `asn:AS13335 net:10.0.0.0/8`, `"welcome page"`,
		`contry:US`, `(((`, `port:>`, `a OR`, `ip:2001:db8::1`, strings.Repeat("(", 50), strings.Repeat("-", 100) + "a",
		`port:1,` + strings.Repeat("2,", 40) + "3",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		start := time.Now()
		e, err := ParsePlan(s)
		if d := time.Since(start); d > 50*time.Millisecond {
			t.Errorf("ParsePlan(%q) took %v", s, d)
		}
		if err != nil {
			if c := periscope.ErrorCode(err); c != periscope.EQueryInvalid {
				t.Errorf("ParsePlan(%q): error code %s: %v", s, c, err)
			}
			return
		}
		if e == nil {
			t.Errorf("ParsePlan(%q): nil plan without an error", s)
		}
	})
}

// BenchmarkParsePlan parses and plans a query of 10 terms.
func BenchmarkParsePlan(b *testing.B) {
	const q = `country:US,DE port:443,8443 -tag:cdn (product:nginx OR tech:wordpress) asn:AS13335 http_status_code:<400 ` +
		`last_seen:>2026-11-01 org:"Cloudflare, Inc." domain:example.com net:203.0.113.0/24`
	b.ReportAllocs()
	// CPU time as well as the wall clock: on a shared machine it moves
	// far less with the load.
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	defer func() {
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
		cpu := ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano()
		b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	}()
	for b.Loop() {
		if _, err := ParsePlan(q); err != nil {
			b.Fatal(err)
		}
	}
}
