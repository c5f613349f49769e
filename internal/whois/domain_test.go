package whois

import (
	"strings"
	"testing"

	"golang.org/x/net/idna"
)

// TestFoundCorpusNamesDomain checks that every recorded answer yields the
// domain it was asked for (the file name after the TLD prefix), including
// the block layouts of .ee, .gg and .tk and the IDN names of .se, which
// write the name under a heading, beside its status or its Unicode form.
func TestFoundCorpusNamesDomain(t *testing.T) {
	for name, raw := range readDir(t, "found") {
		_, want, _ := strings.Cut(strings.TrimSuffix(name, ".txt"), "_")
		if !strings.Contains(want, ".") {
			continue // a TLD's own record (com_com.txt)
		}
		got := Parse(raw).Domain
		if a, err := idna.Lookup.ToASCII(got); err == nil {
			got = a // IDN answers may name the Unicode form
		}
		if got != strings.ToLower(want) {
			t.Errorf("%s: domain %q, want %q", name, got, strings.ToLower(want))
		}
	}
}
