package jsontext

import (
	"bytes"
	"encoding/json"
	"testing"
)

func encoded(t *testing.T, s string, escapeHTML bool) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func check(t *testing.T, s string) {
	for _, html := range []bool{false, true} {
		if got, want := AppendString(nil, s, html), encoded(t, s, html); !bytes.Equal(got, want) {
			t.Errorf("%q (escapeHTML %v): got %s, want %s", s, html, got, want)
		}
	}
}

func TestMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `q"b\s`, "<a href='x'>&amp;</a>", "\x00\x01\x1f\x7f\b\f\n\r\t",
		"\u2028\u2029", "bad \xff\xfe", "\xed\xa0\x80", "émile 日本 🙂", "end\xe2\x82"} {
		check(t, s)
	}
}

func FuzzMatchesEncodingJSON(f *testing.F) {
	f.Add("<&>\"\\\u2028\xff")
	f.Fuzz(func(t *testing.T, s string) { check(t, s) })
}
