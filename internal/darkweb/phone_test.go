package darkweb

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// randomNANP writes a North American number in one of the shapes
// nanpE164 takes (and some it does not): +1 or nothing, ten digits (some
// with an area code starting 0 or 1), separators anywhere.
func randomNANP(rng *rand.Rand) string {
	var b strings.Builder
	seps := []string{"", "", " ", "-", ".", "(", ")", " (", ") ", "  ", "--", "x", "/", "+"}
	sep := func() {
		if rng.IntN(3) == 0 {
			b.WriteString(seps[rng.IntN(len(seps))])
		}
	}
	switch rng.IntN(4) {
	case 0:
		b.WriteString("+1")
	case 1:
		b.WriteString("+")
		sep()
		b.WriteString("1")
	case 2:
		b.WriteString("1")
	}
	n := 10
	if rng.IntN(10) == 0 {
		n = 8 + rng.IntN(5)
	}
	for i := range n {
		sep()
		c := byte('0' + rng.IntN(10))
		if i == 0 && rng.IntN(8) != 0 {
			c = byte('2' + rng.IntN(8))
		}
		b.WriteByte(c)
	}
	sep()
	return b.String()
}

// TestNANPFastPath checks the fast path against libphonenumber: wherever
// it answers, the library answers the same.
func TestNANPFastPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	fast := 0
	cases := []string{"+1 798 555 0180", "(798) 555-0180", "798.555.0180", "+1 (798) 555-0180", "+(1) 798 5550180",
		"((798)) 555 0180", "798-555-0180)", "+1 198 555 0180", "+1 098 555 0180", "1 798 555 0180", "+17985550180",
		"+1 798 555 01800", "+1 798 555 018", "798 555 0180 x12", "+1-798-555-0180-", "-798-555-0180"}
	for range 200000 {
		cases = append(cases, randomNANP(rng))
	}
	for _, region := range []string{"US", "GB", "CA", "DE"} {
		for _, v := range cases {
			got, ok := nanpE164(v, region)
			if !ok {
				continue
			}
			fast++
			want, err := libPhone(v, region)
			if err != nil || got != want {
				t.Fatalf("nanpE164(%q, %s) = %q; libphonenumber: %q, %v", v, region, got, want, err)
			}
		}
	}
	if fast < 100000 {
		t.Fatalf("only %d inputs took the fast path", fast)
	}
}

func FuzzNANPFastPath(f *testing.F) {
	for _, s := range []string{"+1 798 555 0180", "(798) 555-0180", "+(1)798.555.0180", "1 798 555 0180"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		for _, region := range []string{"US", "GB"} {
			if got, ok := nanpE164(v, region); ok {
				if want, err := libPhone(v, region); err != nil || got != want {
					t.Fatalf("nanpE164(%q, %s) = %q; libphonenumber: %q, %v", v, region, got, want, err)
				}
			}
		}
	})
}
