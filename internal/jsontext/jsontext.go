// Package jsontext appends JSON strings byte for byte as encoding/json
// writes them, for the answers that are written by hand on hot paths
// (host objects, dark-web records): '"', '\\' and control characters
// escaped, invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped, and '<',
// '>' and '&' escaped only when HTML escaping is asked for (as
// json.Marshal does; an Encoder with SetEscapeHTML(false) does not).
package jsontext

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// AppendString appends s as a quoted JSON string.
func AppendString(b []byte, s string, escapeHTML bool) []byte {
	b = append(b, '"')
	b = AppendChars(b, s, escapeHTML)
	return append(b, '"')
}

// AppendChars appends the escaped characters of s, without quotes.
func AppendChars(b []byte, s string, escapeHTML bool) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!escapeHTML || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(b, s[start:]...)
}
