package brand

import (
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// skeleton is a name folded to the characters it looks like, with the byte
// range of the original each folded byte came from.
type skeleton struct {
	text  []byte
	start []int32
	end   []int32
}

// confusables folds letters of other scripts that render like a Latin one.
var confusables = map[rune]byte{
	// Cyrillic
	'а': 'a', 'в': 'b', 'ь': 'b', 'с': 'c', 'ԁ': 'd', 'е': 'e', 'ё': 'e', 'ԍ': 'g',
	'һ': 'h', 'і': 'i', 'ї': 'i', 'ј': 'j', 'к': 'k', 'ӏ': 'l', 'м': 'm', 'н': 'h',
	'о': 'o', 'р': 'p', 'ԛ': 'q', 'ѕ': 's', 'т': 't', 'ѵ': 'v', 'ԝ': 'w', 'х': 'x',
	'у': 'y', 'п': 'n',
	// Greek
	'α': 'a', 'β': 'b', 'ε': 'e', 'η': 'n', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'ο': 'o',
	'ρ': 'p', 'τ': 't', 'υ': 'u', 'χ': 'x', 'ω': 'w',
	// Latin letters without a decomposition
	'ı': 'i', 'ɑ': 'a', 'ɡ': 'g', 'ɩ': 'i', 'ɪ': 'i', 'ʙ': 'b', 'ᴄ': 'c', 'ᴋ': 'k',
	'ᴍ': 'm', 'ᴏ': 'o', 'ʀ': 'r', 'ꜱ': 's', 'ᴜ': 'u', 'ᴠ': 'v', 'ᴡ': 'w', 'ᴢ': 'z',
	'ł': 'l', 'đ': 'd', 'ħ': 'h', 'ŧ': 't', 'ø': 'o', 'ƒ': 'f', 'ŋ': 'n', 'ĸ': 'k',
	'ə': 'e', 'ɫ': 'l', 'ɱ': 'm', 'ƿ': 'p', 'ʠ': 'q', 'ʂ': 's', 'ʐ': 'z', 'ƶ': 'z',
	'ɨ': 'i', 'ʉ': 'u', 'ɏ': 'y', 'ƴ': 'y', 'ʏ': 'y', 'ɓ': 'b', 'ɗ': 'd', 'ɖ': 'd',
}

// foldASCII folds ASCII characters that are commonly swapped for one another
// in look-alike names (0 for o, 1 and i for l, ...).
func foldASCII(c byte) byte {
	switch c {
	case '0':
		return 'o'
	case '1', 'i':
		return 'l'
	case '3':
		return 'e'
	case '4':
		return 'a'
	case '5':
		return 's'
	case '7':
		return 't'
	case '8':
		return 'b'
	}
	return c
}

// foldRune returns the skeleton byte of r, or '_' when it has none.
func foldRune(r rune) byte {
	if r < utf8.RuneSelf {
		c := byte(r)
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' {
			return foldASCII(c)
		}
		return '_'
	}
	if c, ok := confusables[r]; ok {
		return foldASCII(c)
	}
	// A precomposed letter folds to its base letter (é to e).
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	d := norm.NFD.Bytes(buf[:n])
	if len(d) > 0 && d[0] < utf8.RuneSelf && d[0] >= 'a' && d[0] <= 'z' {
		return foldASCII(d[0])
	}
	return '_'
}

// makeSkeleton folds s, then collapses the pairs rn, vv and cl that read as
// m, w and d.
func makeSkeleton(s string, sk *skeleton) {
	sk.text, sk.start, sk.end = sk.text[:0], sk.start[:0], sk.end[:0]
	for i, r := range s {
		c := foldRune(r)
		n := len(sk.text)
		if n > 0 {
			prev := sk.text[n-1]
			var pair byte
			switch {
			case prev == 'r' && c == 'n':
				pair = 'm'
			case prev == 'v' && c == 'v':
				pair = 'w'
			case prev == 'c' && c == 'l':
				pair = 'd'
			}
			if pair != 0 {
				sk.text[n-1] = pair
				sk.end[n-1] = int32(i + utf8.RuneLen(r))
				continue
			}
		}
		sk.text = append(sk.text, c)
		sk.start = append(sk.start, int32(i))
		sk.end = append(sk.end, int32(i+utf8.RuneLen(r)))
	}
}

// skeletonString returns the folded form of s.
func skeletonString(s string) string {
	var sk skeleton
	makeSkeleton(s, &sk)
	return string(sk.text)
}
