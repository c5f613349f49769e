package darkweb

import (
	"encoding/csv"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/idna"
	"golang.org/x/text/unicode/norm"
)

// randomASCII returns a random string of up to n bytes drawn from alphabet.
func randomASCII(rng *rand.Rand, alphabet string, n int) string {
	b := make([]byte, rng.IntN(n+1))
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

// TestPlainHostMatchesIDNA checks that every host the fast path keeps as
// it is, IDNA lookup also returns unchanged and without error.
func TestPlainHostMatchesIDNA(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	plain := 0
	cases := []string{"example.com", "a.b", "xn--bcher-kva.example", "ab--cd.example", "-a.example", "a-.example", "a..b", "x",
		strings.Repeat("a", 63) + ".com", strings.Repeat("a", 64) + ".com", "1.2.3.4", "a_b.example"}
	for range 200000 {
		cases = append(cases, randomASCII(rng, "abcxn0129-.", 30))
	}
	for _, v := range cases {
		if !plainHost(v) {
			continue
		}
		plain++
		if got, err := idna.Lookup.ToASCII(v); err != nil || got != v {
			t.Fatalf("plainHost(%q) but IDNA lookup gives %q, %v", v, got, err)
		}
	}
	if plain < 10000 {
		t.Fatalf("only %d plain hosts", plain)
	}
}

// TestASCIIFastPaths checks the ASCII paths of text checks and folding
// against x/text's transformers on every ASCII character.
func TestASCIIFastPaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var all strings.Builder
	for c := 0; c < 0x80; c++ {
		all.WriteByte(byte(c))
	}
	cases := []string{all.String(), "Ada  LOVELACE", " x\t y ", "K"}
	for range 50000 {
		cases = append(cases, randomASCII(rng, all.String(), 20), randomASCII(rng, "aZ \tK.-\x7f", 12))
	}
	errText := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	for _, v := range cases {
		if got, want := errText(CheckText(v)), errText(checkTextRunes(v)); got != want {
			t.Fatalf("CheckText(%q) = %q, want %q", v, got, want)
		}
		if got, want := foldNFC(v), fold.String(norm.NFC.String(v)); got != want {
			t.Fatalf("foldNFC(%q) = %q, want %q", v, got, want)
		}
		if CheckText(v) != nil || strings.TrimSpace(v) == "" {
			continue
		}
		got, _ := Normalizer{}.Normalize(Name, v)
		if want := strings.Join(strings.Fields(fold.String(norm.NFKC.String(strings.TrimSpace(v)))), " "); got != want {
			t.Fatalf("Normalize(name, %q) = %q, want %q", v, got, want)
		}
	}
}

// TestCSVSplitFastPath checks the split of lines without quotes against
// encoding/csv on random lines.
func TestCSVSplitFastPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	slow := func(line string, delim rune) ([]string, error) {
		cr := csv.NewReader(strings.NewReader(line))
		cr.Comma = delim
		cr.LazyQuotes = true
		cr.FieldsPerRecord = -1
		return cr.Read()
	}
	for i := range 100000 {
		delim := []rune{',', '\t', ';', '|'}[i%4]
		line := randomASCII(rng, "ab ,\t;|\"\r\n\\x", 24)
		if i%7 == 0 {
			line += "é,ü\xff"
		}
		want, werr := slow(line, delim)
		got, gerr := csvSplit(line, delim)
		if (werr != nil) != (gerr != nil) || !slices.Equal(got, want) {
			t.Fatalf("csvSplit(%q, %q) = %q, %v; encoding/csv: %q, %v", line, delim, got, gerr, want, werr)
		}
	}
}
