package typo

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want Name
		err  error
	}{
		{in: "google.com", want: Name{Label: "google", Suffix: "com"}},
		{in: "WWW.Example.CO.UK.", want: Name{Subdomain: "www", Label: "example", Suffix: "co.uk"}},
		{in: "bücher.de", want: Name{Label: "bücher", Suffix: "de"}},
		{in: "xn--bcher-kva.de", want: Name{Label: "bücher", Suffix: "de"}},
		{in: "a.b.paypal.com", want: Name{Subdomain: "a.b", Label: "paypal", Suffix: "com"}},
		{in: "", err: ErrEmpty},
		{in: "  . ", err: ErrEmpty},
		{in: "co.uk", err: ErrPublicSuffix},
		{in: "com", err: ErrPublicSuffix},
		{in: strings.Repeat("a", 200) + ".com", err: ErrInvalid},
		{in: strings.Repeat("a", 64) + ".com", err: ErrInvalid},
		{in: strings.Repeat("abcdefghi.", 26) + "com", err: ErrInvalid},
		{in: "pаypal.com", err: ErrMixedScript}, // Cyrillic а
		{in: "exa mple.com", err: ErrInvalid},
		{in: "-acme.com", err: ErrInvalid},
		{in: "a..com", err: ErrInvalid},
		{in: "\xff.com", err: ErrInvalid},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if !errors.Is(err, tt.err) {
			t.Errorf("Parse(%q) error = %v, want %v", tt.in, err, tt.err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestGenerateErrors(t *testing.T) {
	for _, in := range []string{"", "co.uk", strings.Repeat("x", 200) + ".com", "gооgle.com"} {
		if _, err := Generate(in, Options{}); err == nil {
			t.Errorf("Generate(%q) succeeded, want an error", in)
		}
	}
	if _, err := Generate("acme.com", Options{Fuzzers: []string{"nope"}}); !errors.Is(err, ErrFuzzer) {
		t.Errorf("unknown fuzzer: err = %v, want ErrFuzzer", err)
	}
}

func TestGenerateSelectedFuzzers(t *testing.T) {
	got, err := Generate("www.acme.co.uk", Options{Fuzzers: []string{"omission", "various", "tld-swap"}, TLDs: []string{"com", "co.uk", "bad..tld"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Candidate{
		{Omission, "www.acm.co.uk"}, {Omission, "www.ace.co.uk"}, {Omission, "www.ame.co.uk"}, {Omission, "www.cme.co.uk"},
		{TLDSwap, "www.acme.com"},
		{Various, "www-acme.co.uk"}, {Various, "www.acme.uk"}, {Various, "www.acmeco.uk"}, {Various, "wwwacme.co.uk"},
	}
	less := func(a, b Candidate) bool { return a.Fuzzer+a.Domain < b.Fuzzer+b.Domain }
	_ = less
	if diff := cmp.Diff(sortCands(want), got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func sortCands(cs []Candidate) []Candidate {
	out := append([]Candidate(nil), cs...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j].Fuzzer < out[i].Fuzzer || out[j].Fuzzer == out[i].Fuzzer && out[j].Domain < out[i].Domain {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestDomainToASCII(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"google.com", "google.com", true},
		{"bücher.de", "xn--bcher-kva.de", true},
		{"gооgle.com", "xn--ggle-55da.com", true},
		{"ab--cd.com", "", false},
		{"-ab.com", "", false},
		{"ab-.com", "", false},
		{"a.c", "", false},
		{"ab.c", "", false},
		{"xn--bcher-kva.de", "xn--bcher-kva.de", true},
		{"xn--zz.de", "", false},
		{strings.Repeat("ü", 60) + ".de", "", false},
		{"a\u0301b.com", "xn--ab-cfa.com", false}, // not NFC
		{"ᄀ\u1161.com", "", false},                // Hangul jamo that compose
	}
	e := newEncoder()
	for _, tt := range tests {
		got, ok := e.domainToASCII(tt.in)
		if ok != tt.ok || ok && got != tt.want {
			t.Errorf("domainToASCII(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestPunycode(t *testing.T) {
	// RFC 3492 section 7.1 samples, lower-cased.
	tests := map[string]string{
		"bücher":    "bcher-kva",
		"他们为什么不说中文": "ihqwcrb4cv8a8dqg056pqjye",
		"пример":    "e1afmkfd",
		"3年b組金八先生":  "3b-ww4c5e180e575a65lsy2b",
		"ひとつ屋根の下2":  "2-u9tlzr9756bt3uc0v",
		"mañana":    "maana-pta",
		"ﬀ":         "",
		"почемужеонинеговорятпорусски": "b1abfaaepdrnnbgefbadotcwatmq2g4l",
	}
	for in, want := range tests {
		if want == "" {
			continue
		}
		if got := string(appendPunycode(nil, in)); got != want {
			t.Errorf("punycode(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReadWordList(t *testing.T) {
	got, err := ReadWordList(strings.NewReader("// comment\n# another\n\nLogin\nlogin\n secure \nco.uk\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"login", "secure", "co.uk"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	_, err = ReadWordList(strings.NewReader("ok\nbad word\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad entry: err = %v, want an error naming line 2", err)
	}
}

func TestWriteCSV(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCSV(&b, []Candidate{{Original, "a.com"}, {Addition, "ab.com"}}); err != nil {
		t.Fatal(err)
	}
	if want := "fuzzer,domain\n*original,a.com\naddition,ab.com\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func FuzzGenerate(f *testing.F) {
	for _, s := range []string{"google.com", "bücher.de", "www.example.co.uk", "my-bank.com", "co.uk", "", "a.b", "xn--p1ai", "пример.рф", "ab--c.com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if len(in) > 300 {
			return
		}
		cs, err := Generate(in, Options{Dictionary: []string{"login"}, TLDs: []string{"net", "co.uk"}})
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, c := range cs {
			if seen[c.Domain] {
				t.Fatalf("duplicate %q", c.Domain)
			}
			seen[c.Domain] = true
			if !utf8.ValidString(c.Domain) || !isASCII(c.Domain) || !validASCIIDomain(c.Domain) {
				t.Fatalf("invalid candidate %q from %q", c.Domain, in)
			}
		}
	})
}

func BenchmarkGenerateGoogle(b *testing.B) {
	opts := goldenOptions(b)
	b.ReportAllocs()
	var n int
	for b.Loop() {
		cs, err := Generate("google.com", opts)
		if err != nil {
			b.Fatal(err)
		}
		n = len(cs)
	}
	b.ReportMetric(float64(n), "candidates")
}
