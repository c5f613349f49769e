package textenc

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain ascii", "plain ascii"},
		{"caf\u00e9 – ok", "caf\u00e9 – ok"},                                   // valid UTF-8 unchanged
		{"Joomla \x96 SQL", "Joomla – SQL"},                                    // Windows-1252 en dash
		{"\x93quoted\x94", "“quoted”"},                                         // curly quotes
		{"M\xfcller", "Müller"},                                                // Latin-1 letter
		{"a\x81b\x8dc\x8fd\x90e\x9df", "a\ufffdb\ufffdc\ufffdd\ufffde\ufffdf"}, // undefined in 1252
		{"nul\x00byte", "nul\ufffdbyte"},
		{"\xe2\x82", "â‚"},         // a cut UTF-8 sequence is legacy bytes
		{"\xef\xbf\xbd", "\ufffd"}, // a real U+FFFD stays
		{"mixed é and \xe9", "mixed é and é"},
	} {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := string(Bytes([]byte(tc.in))); got != tc.want {
			t.Errorf("Bytes(%q) = %q, want %q", tc.in, got, tc.want)
		}
		for name, r := range map[string]io.Reader{
			"whole":   NewReader(strings.NewReader(tc.in)),
			"onebyte": NewReader(iotest.OneByteReader(strings.NewReader(tc.in))),
		} {
			got, err := io.ReadAll(r)
			if err != nil || string(got) != tc.want {
				t.Errorf("NewReader(%q) %s = %q, %v; want %q", tc.in, name, got, err, tc.want)
			}
		}
	}
}

// TestReaderSplitSequence checks that a UTF-8 sequence cut by the
// reader's buffer boundary is kept whole.
func TestReaderSplitSequence(t *testing.T) {
	in := strings.Repeat("x", 32<<10-1) + "–" + "\x96"
	got, err := io.ReadAll(NewReader(strings.NewReader(in)))
	if err != nil {
		t.Fatal(err)
	}
	if want := String(in); string(got) != want || !strings.HasSuffix(want, "––") {
		t.Errorf("split sequence decoded as %q", got[len(got)-8:])
	}
}

// TestExploitDBLegacy decodes the legacy Exploit-DB index, whose text is
// Windows-1252: every line ends valid, and the known titles read right.
func TestExploitDBLegacy(t *testing.T) {
	b, err := os.ReadFile("../vuln/testdata/exploitdb-gpl/files_legacy_2014-05-27_first2000.csv")
	if err != nil {
		t.Fatal(err)
	}
	if utf8.Valid(b) {
		t.Fatal("sample is valid UTF-8; the test needs its legacy bytes")
	}
	got, err := io.ReadAll(NewReader(bytes.NewReader(b)))
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.Valid(got) || bytes.ContainsRune(got, utf8.RuneError) {
		t.Errorf("decoded file invalid or holds U+FFFD")
	}
	if n := bytes.Count(got, []byte("\n")); n != bytes.Count(b, []byte("\n")) {
		t.Errorf("lines changed: %d", n)
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{"", "abc", "\x96", "\xe2\x82", "é\x00\x81"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		if !Valid(out) {
			t.Fatalf("String(%q) = %q is not clean", s, out)
		}
		if Valid(s) && out != s {
			t.Fatalf("clean %q changed to %q", s, out)
		}
		got, err := io.ReadAll(NewReader(iotest.OneByteReader(strings.NewReader(s))))
		if err != nil || string(got) != out {
			t.Fatalf("reader %q, String %q", got, out)
		}
	})
}
