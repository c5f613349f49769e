package darkweb

import "testing"

// TestAutoIsTheSharedDecoding checks that --encoding auto decodes as every
// other ingest kind does (package textenc): a line mixing UTF-8 and a
// Windows-1252 byte keeps its UTF-8 characters, where decoding the whole
// line as Windows-1252 would turn "é" into "Ã©".
func TestAutoIsTheSharedDecoding(t *testing.T) {
	got, err := Auto.decode([]byte("renée@example.com:caf\xc3\xa9 \x96 m\xfcller"))
	if want := "renée@example.com:café – müller"; err != nil || got != want {
		t.Errorf("auto: %q, %v; want %q", got, err, want)
	}
	if _, err := UTF8.decode([]byte("caf\xe9")); err == nil {
		t.Error("utf-8 accepted a Latin-1 line")
	}
}
