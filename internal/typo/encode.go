package typo

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// encoder turns generated Unicode names into validated ASCII names. Most
// candidates differ from a valid name by a few letters from the glyph
// tables, so it validates rune by rune with a cache and punycode-encodes
// directly, and falls back to the full IDNA2008 check (golang.org/x/net/idna)
// for anything outside that fast path.
type encoder struct {
	simple map[rune]bool
	buf    []byte
}

func newEncoder() *encoder {
	return &encoder{simple: make(map[rune]bool, 256), buf: make([]byte, 0, 256)}
}

// domainToASCII returns the ASCII form of a Unicode domain and whether it is
// a valid host name: labels of 1 to 63 octets (the last at least 2), letters,
// digits and inner hyphens, no "--" in positions 3 and 4 except in A-labels,
// valid IDNA2008 U-labels, 4 to 253 octets in all.
func (e *encoder) domainToASCII(d string) (string, bool) {
	if isASCII(d) {
		return d, validASCIIDomain(d)
	}
	b := e.buf[:0]
	rest := d
	for {
		label, tail, more := strings.Cut(rest, ".")
		last := !more
		if isASCII(label) {
			if !validASCIILabel(label, last) {
				return "", false
			}
			b = append(b, label...)
		} else {
			start := len(b)
			var ok bool
			b, ok = e.appendULabel(b, label)
			if !ok || len(b)-start > 63 {
				return "", false
			}
		}
		if last {
			break
		}
		b = append(b, '.')
		rest = tail
	}
	e.buf = b
	if len(b) < 4 || len(b) > 253 {
		return "", false
	}
	return string(b), true
}

// validASCIIDomain checks a name that is already all ASCII.
func validASCIIDomain(d string) bool {
	if len(d) < 4 || len(d) > 253 {
		return false
	}
	rest := d
	for {
		label, tail, more := strings.Cut(rest, ".")
		if !validASCIILabel(label, !more) {
			return false
		}
		if !more {
			return true
		}
		rest = tail
	}
}

// validASCIILabel checks one ASCII label; the last label of a name (the top
// level) must have at least two characters.
func validASCIILabel(l string, last bool) bool {
	min := 1
	if last {
		min = 2
	}
	if len(l) < min || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		if c := l[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	if len(l) >= 4 && l[2] == '-' && l[3] == '-' {
		if !strings.HasPrefix(l, "xn--") {
			return false
		}
		// An A-label must decode to a valid U-label.
		u, err := idna.Registration.ToUnicode(l)
		if err != nil || u == l {
			return false
		}
		back, err := idna.Registration.ToASCII(u)
		return err == nil && back == l
	}
	return true
}

// appendULabel validates a non-ASCII label and appends its A-label.
func (e *encoder) appendULabel(b []byte, label string) ([]byte, bool) {
	n := 0
	fast := true
	for _, r := range label {
		if r < utf8.RuneSelf {
			if !ldh(r) {
				return b, false
			}
		} else if !e.isSimple(r) {
			fast = false
		}
		n++
	}
	if !fast {
		a, err := idna.Registration.ToASCII(label)
		if err != nil || strings.Contains(a, ".") {
			return b, false
		}
		return append(b, a...), true
	}
	// Hyphen rules apply to the U-label as well (RFC 5891 4.2.3.1).
	if label[0] == '-' || label[len(label)-1] == '-' {
		return b, false
	}
	if n >= 4 {
		rs := []rune(label)
		if rs[2] == '-' && rs[3] == '-' {
			return b, false
		}
	}
	b = append(b, "xn--"...)
	return appendPunycode(b, label), true
}

// isSimple reports whether r is valid in any position of a label on its
// own: IDNA2008-valid, a left-to-right letter, not a combining mark, and not
// part of a script whose letters compose under NFC (Hangul jamo).
func (e *encoder) isSimple(r rune) bool {
	if v, ok := e.simple[r]; ok {
		return v
	}
	v := unicode.IsLetter(r) &&
		(unicode.In(r, unicode.Latin, unicode.Greek, unicode.Cyrillic, unicode.Armenian, unicode.Georgian, unicode.Han, unicode.Hiragana, unicode.Katakana)) &&
		!unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me)
	if v {
		_, err := idna.Registration.ToASCII(string(r))
		v = err == nil
	}
	e.simple[r] = v
	return v
}

// Punycode parameters from RFC 3492 section 5.
const (
	pcBase        = 36
	pcTMin        = 1
	pcTMax        = 26
	pcSkew        = 38
	pcDamp        = 700
	pcInitialBias = 72
	pcInitialN    = 128
)

// appendPunycode appends the RFC 3492 encoding of s (without the xn--
// prefix). s must be valid UTF-8 and short, as DNS labels are.
func appendPunycode(b []byte, s string) []byte {
	var rs [64]rune
	runes := rs[:0]
	basic := 0
	for _, r := range s {
		runes = append(runes, r)
		if r < 0x80 {
			b = append(b, byte(r))
			basic++
		}
	}
	h := basic
	if basic > 0 {
		b = append(b, '-')
	}
	n, delta, bias := rune(pcInitialN), 0, pcInitialBias
	for h < len(runes) {
		m := rune(0x7fffffff)
		for _, r := range runes {
			if r >= n && r < m {
				m = r
			}
		}
		delta += int(m-n) * (h + 1)
		n = m
		for _, r := range runes {
			if r < n {
				delta++
			}
			if r != n {
				continue
			}
			q := delta
			for k := pcBase; ; k += pcBase {
				t := k - bias
				if t < pcTMin {
					t = pcTMin
				} else if t > pcTMax {
					t = pcTMax
				}
				if q < t {
					break
				}
				b = append(b, pcDigit(t+(q-t)%(pcBase-t)))
				q = (q - t) / (pcBase - t)
			}
			b = append(b, pcDigit(q))
			bias = pcAdapt(delta, h+1, h == basic)
			delta = 0
			h++
		}
		delta++
		n++
	}
	return b
}

func pcDigit(d int) byte {
	if d < 26 {
		return byte('a' + d)
	}
	return byte('0' + d - 26)
}

func pcAdapt(delta, numPoints int, first bool) int {
	if first {
		delta /= pcDamp
	} else {
		delta /= 2
	}
	delta += delta / numPoints
	k := 0
	for delta > ((pcBase-pcTMin)*pcTMax)/2 {
		delta /= pcBase - pcTMin
		k += pcBase
	}
	return k + (pcBase-pcTMin+1)*delta/(delta+pcSkew)
}
