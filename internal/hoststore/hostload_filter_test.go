package hoststore

import (
	"strconv"
	"testing"
)

// A load keeps answering for the names it stored well past the 4 million
// its map of hashes held: a 10M-host load skips every lookup. Each stored
// name is a "maybe", and few names it never stored are.
func TestHostLoadRemembersPastFourMillionNames(t *testing.T) {
	const total = 4_500_000 // past the old bound of 4 << 20
	l := NewHostLoad()
	l.begin(0)
	name := func(i int) string { return "h" + strconv.Itoa(i) + ".example.com" }
	chunk := make([]string, 0, 20000)
	for i := 0; i < total; i += cap(chunk) {
		chunk = chunk[:0]
		for j := i; j < i+cap(chunk) && j < total; j++ {
			chunk = append(chunk, name(j))
		}
		l.stored(chunk, int64(i+len(chunk)))
	}
	if !l.on() {
		t.Fatalf("the load stopped answering after %d names", total)
	}
	for i := 0; i < total; i += 997 {
		if !l.mayHave(name(i)) {
			t.Fatalf("stored name %q is not a maybe", name(i))
		}
	}
	maybes := 0
	const probes = 200000
	for i := range probes {
		if l.mayHave(name(total + i)) {
			maybes++
		}
	}
	// Three filters of about 0.06% each at capacity.
	if rate := float64(maybes) / probes; rate > 0.005 {
		t.Errorf("%.2f%% of names never stored are maybes, want under 0.5%%", 100*rate)
	}
	t.Logf("%d filters, %d of %d names never stored are maybes", len(l.names), maybes, probes)
}
