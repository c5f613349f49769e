// Package textenc decodes the text of every ingested feed and file one
// way, so that both engines store the same characters: SQLite keeps any
// bytes in a TEXT column, PostgreSQL refuses invalid UTF-8 and NUL, and a
// file that loads on one and aborts on the other makes the engines answer
// the same search differently.
//
// The rule, applied by String and NewReader alike:
//   - valid UTF-8 passes unchanged;
//   - each byte that does not start a valid UTF-8 sequence is read as
//     Windows-1252, the encoding of the legacy files met in practice
//     (Exploit-DB's files.csv writes "–" as 0x96); Windows-1252 is a
//     superset of the printable ISO-8859-1, so Latin-1 text decodes too;
//   - the five bytes Windows-1252 leaves undefined (0x81, 0x8D, 0x8F,
//     0x90, 0x9D) and NUL, which PostgreSQL cannot store in text, become
//     U+FFFD, the only place the replacement character appears.
//
// Every ingest path reads its input through NewReader (text formats) or
// passes decoded strings through String (fields of binary containers), so
// there is one decoding for every feed rather than one per feed.
package textenc

import (
	"io"
	"unicode/utf8"
)

// cp1252 maps the bytes 0x80–0x9F of Windows-1252; 0xA0–0xFF are the
// code points of the same value.
var cp1252 = [32]rune{
	'€', utf8.RuneError, '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', utf8.RuneError, 'Ž', utf8.RuneError,
	utf8.RuneError, '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', utf8.RuneError, 'ž', 'Ÿ',
}

// legacy is the character a byte that is not valid UTF-8 stands for.
func legacy(b byte) rune {
	switch {
	case b == 0:
		return utf8.RuneError
	case b < 0x80:
		return rune(b)
	case b < 0xA0:
		return cp1252[b-0x80]
	default:
		return rune(b)
	}
}

// clean reports whether b needs no decoding: valid UTF-8 without NUL.
func clean(b []byte) bool {
	for _, c := range b {
		if c == 0 {
			return false
		}
	}
	return utf8.Valid(b)
}

// Valid reports whether s passes String unchanged.
func Valid(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return false
		}
	}
	return utf8.ValidString(s)
}

// String decodes s by the package's rule.
func String(s string) string {
	if Valid(s) {
		return s
	}
	out, _ := decode(make([]byte, 0, len(s)+len(s)/4), []byte(s), true)
	return string(out)
}

// Bytes decodes b by the package's rule; it returns b itself when b is
// already clean.
func Bytes(b []byte) []byte {
	if clean(b) {
		return b
	}
	out, _ := decode(make([]byte, 0, len(b)+len(b)/4), b, true)
	return out
}

// decode appends the decoding of b to dst and returns how many bytes of b
// it consumed: all of them unless final is false and b ends in the first
// bytes of a sequence that may yet complete.
func decode(dst, b []byte, final bool) ([]byte, int) {
	i := 0
	for i < len(b) {
		c := b[i]
		if c != 0 && c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		if c == 0 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || n > 1 {
			dst = append(dst, b[i:i+n]...)
			i += n
			continue
		}
		if !final && !utf8.FullRune(b[i:]) {
			return dst, i
		}
		dst = utf8.AppendRune(dst, legacy(c))
		i++
	}
	return dst, i
}

// reader decodes a byte stream by the package's rule.
type reader struct {
	r    io.Reader
	in   []byte // bytes read, not yet decoded (an incomplete sequence)
	out  []byte // decoded bytes not yet returned
	buf  []byte
	err  error
	done bool
}

// NewReader returns a reader of r's bytes decoded by the package's rule.
// Valid UTF-8 is passed through with one copy.
func NewReader(r io.Reader) io.Reader {
	return &reader{r: r, buf: make([]byte, 32<<10)}
}

func (d *reader) Read(p []byte) (int, error) {
	for len(d.out) == 0 {
		if d.done {
			return 0, d.err
		}
		n, err := d.r.Read(d.buf)
		chunk := d.buf[:n]
		if len(d.in) > 0 {
			chunk = append(d.in, chunk...)
			d.in = nil
		}
		final := err != nil
		if final {
			d.done, d.err = true, err
		}
		if clean(chunk) {
			// The common case: nothing to decode. chunk may alias buf,
			// which the next Read overwrites, so it is copied out.
			d.out = append(d.out[:0], chunk...)
			continue
		}
		var used int
		d.out, used = decode(d.out[:0], chunk, final)
		if used < len(chunk) {
			d.in = append([]byte(nil), chunk[used:]...)
		}
	}
	n := copy(p, d.out)
	d.out = d.out[n:]
	return n, nil
}
