package darkweb

import (
	"strings"
	"testing"
)

func TestHashTypeDetection(t *testing.T) {
	hex := func(n int, c string) string { return strings.Repeat(c, n) }
	for _, c := range []struct {
		in, declared, wantHash, wantType string
	}{
		{hex(32, "A"), "", hex(32, "a"), "md5"},
		{hex(32, "a"), "NTLM", hex(32, "a"), "ntlm"},
		{hex(32, "a"), "nt", hex(32, "a"), "ntlm"},
		{hex(32, "a"), "MD5", hex(32, "a"), "md5"},
		{"$NT$" + hex(32, "B"), "", hex(32, "b"), "ntlm"},
		{"$NT$" + hex(32, "b"), "md5", hex(32, "b"), "ntlm"},
		{hex(40, "c"), "", hex(40, "c"), "sha1"},
		{hex(40, "c"), "ntlm", hex(40, "c"), "sha1"}, // the shape wins over a wrong declaration
		{hex(40, "c"), "mysql", "*" + hex(40, "c"), "mysql41"},
		{"*" + hex(40, "D"), "", "*" + hex(40, "d"), "mysql41"},
		{hex(64, "e"), "", hex(64, "e"), "sha256"},
		{hex(128, "f"), "", hex(128, "f"), "sha512"},
		{"$2b$10$abcdefghijklmnopqrstuuQWERTYUIOPASDFGHJKLZXCVBNM0123", "", "$2b$10$abcdefghijklmnopqrstuuQWERTYUIOPASDFGHJKLZXCVBNM0123", "bcrypt"},
		{"$2y$12$x", "md5", "$2y$12$x", "bcrypt"},
		{"$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA", "", "$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA", "argon2"},
		{"$7$C6..../....SodiumChloride$kBGj9fHznVYFQMEn/qDCfrDevf9YDtcDdKvEqHJLV8D", "", "$7$C6..../....SodiumChloride$kBGj9fHznVYFQMEn/qDCfrDevf9YDtcDdKvEqHJLV8D", "scrypt"},
		{"$scrypt$ln=16,r=8,p=1$c2FsdA$aGFzaA", "", "$scrypt$ln=16,r=8,p=1$c2FsdA$aGFzaA", "scrypt"},
		{"$y$j9T$salt$hash", "", "$y$j9T$salt$hash", "yescrypt"},
		{"$6$salt$x", "", "$6$salt$x", "sha512crypt"},
		{"$5$salt$x", "", "$5$salt$x", "sha256crypt"},
		{"$1$salt$x", "", "$1$salt$x", "md5crypt"},
		{"$apr1$salt$x", "", "$apr1$salt$x", "apr1"},
		{"$P$BsaltHASH", "", "$P$BsaltHASH", "phpass"},
		{"pbkdf2_sha256$260000$salt$hash", "", "pbkdf2_sha256$260000$salt$hash", "pbkdf2"},
		{"zz", "", "zz", "unknown"},
		{"c2FsdGVkaGFzaA==", "whirlpool", "c2FsdGVkaGFzaA==", "unknown"}, // an unknown declaration is not kept
		{"c2FsdGVkaGFzaA==", "sha1", "c2FsdGVkaGFzaA==", "sha1"},         // nothing contradicts it
	} {
		h, typ, err := NormalizeHashAs(c.in, c.declared)
		if err != nil || h != c.wantHash || typ != c.wantType {
			t.Errorf("NormalizeHashAs(%q, %q) = %q, %q, %v; want %q, %q", c.in, c.declared, h, typ, err, c.wantHash, c.wantType)
		}
	}
	// A search for the prefixed form finds the stored one.
	if v, err := (Normalizer{}).Normalize(HashedPassword, "$NT$"+hex(32, "A")); err != nil || v != hex(32, "a") {
		t.Fatalf("search normalisation %q %v", v, err)
	}
}

func TestHashTypeFromSource(t *testing.T) {
	ntlm := strings.Repeat("8846f7eaee8fb117ad06bdd830b7586c", 1)
	parse := func(kind, in string, o Options) []Record {
		t.Helper()
		var recs []Record
		sink := Sink{Record: func(r Record) error {
			if err := (Normalizer{}).Clean(&r); err != nil {
				t.Fatal(err)
			}
			recs = append(recs, r)
			return nil
		}, Reject: func(r Reject) { t.Fatalf("reject %v", r) }}
		var err error
		switch kind {
		case "csv":
			err = ParseCSV(strings.NewReader(in), o, sink)
		case "dehashed":
			err = ParseDeHashed(strings.NewReader(in), o, sink)
		}
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	for _, c := range []struct {
		name, kind, in string
		o              Options
		want           string
	}{
		{"column named ntlm", "csv", "email,NTLM\na@example.com," + ntlm + "\n", Options{}, "ntlm"},
		{"column nt_hash", "csv", "email,nt_hash\na@example.com," + ntlm + "\n", Options{}, "ntlm"},
		{"--map col=ntlm", "csv", "email,h\na@example.com," + ntlm + "\n", Options{Map: map[string]string{"h": "ntlm"}}, "ntlm"},
		{"hash_type column", "csv", "email,hash,hash_type\na@example.com," + ntlm + ",NTLM\n", Options{}, "ntlm"},
		{"plain hash column", "csv", "email,hash\na@example.com," + ntlm + "\n", Options{}, "md5"},
		{"--hash-type", "csv", "email,hash\na@example.com," + ntlm + "\n", Options{HashType: "ntlm"}, "ntlm"},
		{"--hash-type loses to a column", "csv", "email,hash,hash_type\na@example.com," + ntlm + ",md5\n", Options{HashType: "ntlm"}, "md5"},
		{"DeHashed hash_type", "dehashed", `{"email":"a@example.com","hashed_password":"` + ntlm + `","hash_type":"ntlm"}` + "\n", Options{}, "ntlm"},
		{"DeHashed $NT$", "dehashed", `{"email":"a@example.com","hashed_password":"$NT$` + ntlm + `"}` + "\n", Options{}, "ntlm"},
		{"DeHashed v2 bcrypt", "dehashed", `{"email":["a@example.com"],"hashed_password":["$2a$10$abcdefghijklmnopqrstuv"]}` + "\n", Options{}, "bcrypt"},
	} {
		recs := parse(c.kind, c.in, c.o)
		if len(recs) != 1 || recs[0].HashType != c.want || len(recs[0].HashedPassword) != 1 {
			t.Errorf("%s: %+v, want hash_type %s", c.name, recs, c.want)
		}
	}
	if CanonicalHashType("NT-Hash") != "ntlm" || CanonicalHashType("whirlpool") != "" {
		t.Fatal("CanonicalHashType")
	}
}
