// Package darkweb is the domain logic of dark-web breach intelligence: the
// record, the normalisation of each of the fifteen search types, the
// encryption of sensitive fields and the blind indexes they are searched
// through, and the parsers of the breach layouts Periscope ingests. It
// touches no database (internal/darkwebstore keeps the rows).
package darkweb

import (
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/nyaruka/phonenumbers"
	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Type is a search type of POST /oem/darkweb/search.
type Type string

// The fifteen search types of the seed, plus the internal email_domain
// index the enterprise listings use.
const (
	Username       Type = "username"
	Name           Type = "name"
	Email          Type = "email"
	Hostname       Type = "hostname"
	MAC            Type = "mac_address"
	IP             Type = "ip_address"
	OrgAlias       Type = "org_alias"
	BIN            Type = "bin"
	CVE            Type = "cve"
	Domain         Type = "domain"
	Password       Type = "password"
	HashedPassword Type = "hashed_password"
	VIN            Type = "vin"
	Address        Type = "address"
	Phone          Type = "phone"
	// EmailDomain indexes an email's host and each parent down to the
	// registrable domain: the enterprise listings find an organization's
	// domain and subdomains through it. It is not a public search type.
	EmailDomain Type = "email_domain"
)

// Types lists the public search types in the seed's order.
var Types = []Type{Username, Name, Email, Hostname, MAC, IP, OrgAlias, BIN, CVE, Domain, Password, HashedPassword, VIN, Address, Phone}

// ParseType returns the search type named s.
func ParseType(s string) (Type, bool) {
	for _, t := range Types {
		if string(t) == s {
			return t, true
		}
	}
	return "", false
}

// MaxField bounds every field of a record, in bytes.
const MaxField = 4096

// ErrEmpty is returned by Normalize for a value that is empty once cleaned.
var ErrEmpty = errors.New("empty value")

// Normalizer turns raw values into the canonical form that is indexed and
// searched. The zero value uses region US for phone numbers without a
// country code.
type Normalizer struct {
	// Region is the ISO 3166 region assumed for national phone numbers.
	Region string
}

var fold = cases.Fold()

// CheckText refuses text that must never be stored: invalid UTF-8, NUL,
// other C0 controls but tab, DEL, C1 controls (U+0080–U+009F: what
// Windows-1252 text read as Latin-1 turns into), and (by construction of
// valid UTF-8) lone surrogates.
func CheckText(s string) error {
	if isASCII(s) {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c == 0 {
				return errors.New("NUL byte")
			} else if c < 0x20 && c != '\t' || c == 0x7f {
				return fmt.Errorf("control character U+%04X", c)
			}
		}
		return nil
	}
	return checkTextRunes(s)
}

// checkTextRunes is CheckText rune by rune, for text that is not all ASCII
// (and, in the tests, the reference for the ASCII path).
func checkTextRunes(s string) error {
	if !utf8.ValidString(s) {
		return errors.New("invalid UTF-8")
	}
	for _, r := range s {
		if r == 0 {
			return errors.New("NUL byte")
		}
		if r < 0x20 && r != '\t' || r >= 0x7f && r <= 0x9f {
			return fmt.Errorf("control character U+%04X", r)
		}
	}
	return nil
}

// Normalize returns the canonical form of v as a value of type t.
func (n Normalizer) Normalize(t Type, v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", ErrEmpty
	}
	if len(v) > MaxField {
		return "", fmt.Errorf("longer than %d bytes", MaxField)
	}
	if err := CheckText(v); err != nil {
		return "", err
	}
	switch t {
	case Email:
		return normEmail(v)
	case Username, Address, OrgAlias:
		return foldNFC(v), nil
	case Name:
		if isASCII(v) {
			return strings.Join(strings.Fields(strings.ToLower(v)), " "), nil
		}
		return strings.Join(strings.Fields(fold.String(norm.NFKC.String(v))), " "), nil
	case Domain, EmailDomain:
		return normDomain(v, t == Domain)
	case Hostname:
		return normHostname(v)
	case IP:
		a, err := netip.ParseAddr(strings.Trim(v, "[]"))
		if err != nil {
			return "", errors.New("not an IP address")
		}
		return a.Unmap().WithZone("").String(), nil
	case Phone:
		return n.normPhone(v)
	case VIN:
		return normVIN(v)
	case MAC:
		return normMAC(v)
	case BIN:
		return normBIN(v)
	case HashedPassword:
		h, _, err := NormalizeHash(v)
		return h, err
	case Password:
		return v, nil
	case CVE:
		c := strings.ToUpper(v)
		if !cveRE.MatchString(c) {
			return "", errors.New("not a CVE id (CVE-YYYY-NNNN)")
		}
		return c, nil
	}
	return "", fmt.Errorf("unknown type %q", t)
}

var cveRE = regexp.MustCompile(`^CVE-\d{4}-\d{4,7}$`)

func normEmail(v string) (string, error) {
	v = strings.Trim(v, "<>\"' ")
	local, host, ok := strings.Cut(v, "@")
	if !ok || local == "" || host == "" || strings.Contains(host, "@") || strings.ContainsAny(v, " \t,;:") {
		return "", errors.New("not an email address")
	}
	h, err := normHostname(host)
	if err != nil || !strings.Contains(h, ".") {
		return "", errors.New("not an email address: bad domain")
	}
	return foldNFC(local) + "@" + h, nil
}

// isASCII reports whether s is ASCII: NFC and NFKC leave ASCII text as it
// is and case-folding it is lower-casing it, so the fast paths below give
// what x/text's transformers give, at a fraction of their cost.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// foldNFC case-folds the NFC form of v.
func foldNFC(v string) string {
	if isASCII(v) {
		return strings.ToLower(v)
	}
	return fold.String(norm.NFC.String(v))
}

// plainHost reports whether v is a host name that IDNA lookup returns as
// it is: lower-case letters, digits and hyphens in labels of 1 to 63
// bytes, none starting or ending with a hyphen or with hyphens in its
// third and fourth places (as punycode's xn-- labels have, which IDNA
// checks).
func plainHost(v string) bool {
	if v == "" || len(v) > 253 {
		return false
	}
	for len(v) > 0 {
		l, rest, _ := strings.Cut(v, ".")
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' || len(l) >= 4 && l[2] == '-' && l[3] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
		v = rest
	}
	return true
}

// normHostname lower-cases and IDNA-encodes a host name.
func normHostname(v string) (string, error) {
	v = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(v)), ".")
	if v == "" {
		return "", ErrEmpty
	}
	if plainHost(v) {
		return v, nil
	}
	a, err := idna.Lookup.ToASCII(v)
	if err != nil {
		// Machine names from stealer logs (DESKTOP-AB12CD) are not DNS
		// names; keep them lower-cased when they are plain.
		if !hostLabelRE.MatchString(v) {
			return "", errors.New("not a host name")
		}
		a = v
	}
	a = strings.TrimSuffix(a, ".")
	if a == "" || strings.HasPrefix(a, ".") || strings.HasSuffix(a, ".") || strings.Contains(a, "..") {
		return "", errors.New("not a host name")
	}
	return a, nil
}

var hostLabelRE = regexp.MustCompile(`^[\p{L}\p{N}_.-]{1,253}$`)

// normDomain returns the registrable domain of v (the public-suffix list's
// eTLD+1) when registrable is set, else the host itself.
func normDomain(v string, registrable bool) (string, error) {
	if i := strings.LastIndexByte(v, '@'); i >= 0 {
		v = v[i+1:]
	}
	h, err := normHostname(v)
	if err != nil {
		return "", err
	}
	if !strings.Contains(h, ".") {
		return "", errors.New("not a domain name")
	}
	if !registrable {
		return h, nil
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(h)
	if err != nil {
		return "", fmt.Errorf("not a registrable domain: %w", err)
	}
	return d, nil
}

// DomainLevels returns host and each parent down to its registrable
// domain (a.b.example.co.uk → a.b.example.co.uk, b.example.co.uk,
// example.co.uk).
func DomainLevels(host string) []string {
	reg, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return nil
	}
	out := []string{host}
	for h := host; h != reg; {
		_, rest, ok := strings.Cut(h, ".")
		if !ok {
			break
		}
		h = rest
		out = append(out, h)
	}
	return out
}

func (n Normalizer) normPhone(v string) (string, error) {
	region := n.Region
	if region == "" {
		region = "US"
	}
	if e, ok := nanpE164(v, region); ok {
		return e, nil
	}
	return libPhone(v, region)
}

// libPhone is the E.164 form libphonenumber gives v, or else its digits.
func libPhone(v, region string) (string, error) {
	p, err := phonenumbers.Parse(v, region)
	if err == nil && phonenumbers.IsPossibleNumber(p) {
		return phonenumbers.Format(p, phonenumbers.E164), nil
	}
	// Not a number the library can place: keep its digits so the same
	// text still finds it.
	var b strings.Builder
	for _, r := range v {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	if b.Len() < 5 || b.Len() > 17 {
		return "", errors.New("not a phone number")
	}
	return b.String(), nil
}

// nanpE164 returns the E.164 form of a North American number written as
// +1 and ten digits, or (region US) as ten digits, with nothing between
// the digits but spaces, dots, hyphens and parentheses; ok is false for
// anything else, which goes to libphonenumber. For these inputs the
// library's answer is always +1 and the ten digits (country code 1; an
// area code starting 2-9 leaves no national prefix to strip; ten digits
// are a possible length), and its regular expressions cost about 12 µs
// a number, a fifth of the CPU of ingesting a full record. Tests compare
// it with the library on random inputs of that shape and by fuzzing.
func nanpE164(v, region string) (string, bool) {
	if len(v) > 64 {
		return "", false // the library refuses inputs over 250 bytes
	}
	var d [11]byte
	n, plus := 0, false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= '0' && c <= '9':
			if n == len(d) {
				return "", false
			}
			d[n] = c
			n++
		case c == '+' && i == 0:
			plus = true
		case c == ' ' || c == '-' || c == '.' || c == '(' || c == ')':
		default:
			return "", false
		}
	}
	var nsn []byte
	switch {
	case plus && n == 11 && d[0] == '1':
		nsn = d[1:11]
	case !plus && n == 10 && region == "US":
		nsn = d[:10]
	default:
		return "", false
	}
	if nsn[0] < '2' {
		return "", false
	}
	return "+1" + string(nsn), true
}

// vinValues are the transliteration values of ISO 3779 check digits.
var vinWeights = [17]int{8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2}

func vinValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'A' && c <= 'H':
		return int(c-'A') + 1
	case c >= 'J' && c <= 'N':
		return int(c-'J') + 1
	case c == 'P':
		return 7
	case c == 'R':
		return 9
	case c >= 'S' && c <= 'Z':
		return int(c-'S') + 2
	}
	return -1
}

// VINCheckDigit returns the ISO 3779 (North American) check digit of a
// 17-character VIN, or 0 when a character is not allowed.
func VINCheckDigit(v string) byte {
	if len(v) != 17 {
		return 0
	}
	sum := 0
	for i := 0; i < 17; i++ {
		x := vinValue(v[i])
		if x < 0 {
			return 0
		}
		sum += x * vinWeights[i]
	}
	if r := sum % 11; r == 10 {
		return 'X'
	} else {
		return byte('0' + r)
	}
}

func normVIN(v string) (string, error) {
	v = strings.ToUpper(strings.ReplaceAll(strings.ReplaceAll(v, " ", ""), "-", ""))
	if len(v) != 17 {
		return "", errors.New("a VIN has 17 characters")
	}
	for i := 0; i < 17; i++ {
		if vinValue(v[i]) < 0 {
			return "", errors.New("a VIN has no I, O or Q and only letters and digits")
		}
	}
	return v, nil
}

func normMAC(v string) (string, error) {
	var b strings.Builder
	for _, r := range strings.ToLower(v) {
		switch {
		case r >= '0' && r <= '9', r >= 'a' && r <= 'f':
			b.WriteRune(r)
		case r == ':' || r == '-' || r == '.' || r == ' ':
		default:
			return "", errors.New("not a MAC address")
		}
	}
	if b.Len() != 12 {
		return "", errors.New("a MAC address has 12 hex digits")
	}
	return b.String(), nil
}

// digits returns the decimal digits of v when v holds only digits and
// separators (space, dash).
func digits(v string) (string, bool) {
	var b strings.Builder
	for _, r := range v {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == ' ' || r == '-':
		default:
			return "", false
		}
	}
	return b.String(), b.Len() > 0
}

func normBIN(v string) (string, error) {
	d, ok := digits(v)
	if !ok || len(d) < 6 {
		return "", errors.New("a BIN is 6 to 8 digits")
	}
	if len(d) > 8 {
		// A full card number: only its first six digits are a BIN.
		return d[:6], nil
	}
	return d, nil
}

// ReduceCard returns the BIN and last four digits of a card number, so a
// full number found in input is never stored whole. ok is false when v is
// not a 12–19 digit number passing the Luhn check.
func ReduceCard(v string) (bin, last4 string, ok bool) {
	d, isNum := digits(v)
	if !isNum || len(d) < 12 || len(d) > 19 || !luhn(d) {
		return "", "", false
	}
	return d[:6], d[len(d)-4:], true
}

func luhn(d string) bool {
	sum, dbl := 0, false
	for i := len(d) - 1; i >= 0; i-- {
		x := int(d[i] - '0')
		if dbl {
			if x *= 2; x > 9 {
				x -= 9
			}
		}
		sum += x
		dbl = !dbl
	}
	return sum%10 == 0
}

var hexRE = regexp.MustCompile(`^[0-9a-f]+$`)

// HashTypes are the hash_type values Periscope detects, in the order
// docs/ingest.md "Hash types" documents them.
var HashTypes = []string{"md5", "ntlm", "sha1", "sha256", "sha512", "mysql41", "bcrypt", "argon2", "scrypt", "yescrypt",
	"md5crypt", "apr1", "sha256crypt", "sha512crypt", "phpass", "pbkdf2", "unknown"}

// hashTypeNames maps the names sources give a hash type (a DeHashed
// hash_type, a hash_type column, --hash-type) to the canonical ones.
var hashTypeNames = map[string]string{
	"md5": "md5", "raw-md5": "md5",
	"ntlm": "ntlm", "nt": "ntlm", "nthash": "ntlm", "nt_hash": "ntlm", "nt-hash": "ntlm", "ntlmv1": "ntlm", "md4": "md4", "lm": "lm",
	"sha1": "sha1", "sha-1": "sha1", "raw-sha1": "sha1",
	"sha256": "sha256", "sha-256": "sha256", "raw-sha256": "sha256",
	"sha512": "sha512", "sha-512": "sha512", "raw-sha512": "sha512",
	"mysql41": "mysql41", "mysql": "mysql41", "mysql5": "mysql41", "mysql-sha1": "mysql41",
	"bcrypt": "bcrypt", "blowfish": "bcrypt",
	"argon2": "argon2", "argon2id": "argon2", "argon2i": "argon2", "argon2d": "argon2",
	"scrypt": "scrypt", "yescrypt": "yescrypt",
	"md5crypt": "md5crypt", "md5-crypt": "md5crypt", "md5_crypt": "md5crypt", "apr1": "apr1", "md5-apr1": "apr1",
	"sha256crypt": "sha256crypt", "sha256-crypt": "sha256crypt", "sha256_crypt": "sha256crypt",
	"sha512crypt": "sha512crypt", "sha512-crypt": "sha512crypt", "sha512_crypt": "sha512crypt",
	"phpass": "phpass", "wordpress": "phpass", "phpbb3": "phpass",
	"pbkdf2": "pbkdf2", "pbkdf2-sha256": "pbkdf2", "pbkdf2_sha256": "pbkdf2", "pbkdf2-sha1": "pbkdf2", "pbkdf2-sha512": "pbkdf2",
	"unknown": "unknown",
}

// CanonicalHashType returns the canonical name of a declared hash type,
// or "" when the name is not one Periscope knows.
func CanonicalHashType(s string) string {
	return hashTypeNames[strings.ToLower(strings.TrimSpace(s))]
}

// hex32Types are the hash types 32 hex digits can be: their shape alone
// cannot tell them apart, so a declared one is believed.
var hex32Types = map[string]bool{"md5": true, "ntlm": true, "md4": true, "lm": true}

// modularCrypt are the prefixes of modular-crypt and framework hash
// strings, longest first where one prefixes another.
var modularCrypt = []struct{ prefix, typ string }{
	{"$2a$", "bcrypt"}, {"$2b$", "bcrypt"}, {"$2y$", "bcrypt"}, {"$2x$", "bcrypt"},
	{"$argon2id$", "argon2"}, {"$argon2i$", "argon2"}, {"$argon2d$", "argon2"},
	{"$scrypt$", "scrypt"}, {"$7$", "scrypt"}, {"$y$", "yescrypt"},
	{"$apr1$", "apr1"}, {"$1$", "md5crypt"}, {"$5$", "sha256crypt"}, {"$6$", "sha512crypt"},
	{"$P$", "phpass"}, {"$H$", "phpass"},
	{"$pbkdf2", "pbkdf2"}, {"pbkdf2_sha256$", "pbkdf2"}, {"pbkdf2_sha1$", "pbkdf2"},
}

// NormalizeHash returns a password hash in canonical form and the type
// its shape says: modular-crypt strings as written ($2a$/$2b$/$2y$
// bcrypt, $argon2id$ argon2, $7$/$scrypt$ scrypt, $y$ yescrypt, $1$
// md5crypt, $apr1$ apr1, $5$ sha256crypt, $6$ sha512crypt, $P$/$H$
// phpass, $pbkdf2… pbkdf2); hex lower-cased by length (32 md5, 40 sha1,
// 64 sha256, 128 sha512); "*" and 40 hex digits mysql41; "$NT$" and 32
// hex digits ntlm, stored without the prefix. 32 hex digits are md5
// unless the source declares otherwise (NormalizeHashAs). Anything else
// is kept as written with type "unknown".
func NormalizeHash(v string) (string, string, error) {
	return NormalizeHashAs(v, "")
}

// NormalizeHashAs is NormalizeHash with the type the source declares (a
// hash_type field or column, a column named after the type, --hash-type).
// The declared type is believed where the shape cannot contradict it (32
// hex digits: md5, ntlm, md4 or lm; a shape Periscope does not recognise);
// where the shape says otherwise the shape wins (a "ntlm" that is 40 hex
// digits is sha1).
func NormalizeHashAs(v, declared string) (string, string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", "", ErrEmpty
	}
	if err := CheckText(v); err != nil {
		return "", "", err
	}
	decl := CanonicalHashType(declared)
	for _, m := range modularCrypt {
		if strings.HasPrefix(v, m.prefix) {
			return v, m.typ, nil
		}
	}
	if len(v) == 36 && strings.EqualFold(v[:4], "$NT$") && hexRE.MatchString(strings.ToLower(v[4:])) {
		return strings.ToLower(v[4:]), "ntlm", nil
	}
	l := strings.ToLower(v)
	if len(l) == 41 && l[0] == '*' && hexRE.MatchString(l[1:]) {
		return l, "mysql41", nil
	}
	if hexRE.MatchString(l) {
		switch len(l) {
		case 32:
			if hex32Types[decl] {
				return l, decl, nil
			}
			return l, "md5", nil
		case 40:
			if decl == "mysql41" {
				return "*" + l, "mysql41", nil
			}
			return l, "sha1", nil
		case 64:
			return l, "sha256", nil
		case 128:
			return l, "sha512", nil
		}
		if decl != "" {
			return l, decl, nil
		}
		return l, "unknown", nil
	}
	if decl != "" {
		return v, decl, nil
	}
	return v, "unknown", nil
}
