package darkweb

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNormalize(t *testing.T) {
	n := Normalizer{Region: "US"}
	cases := []struct {
		t        Type
		in, want string
	}{
		{Email, " Alice.Smith@Example.COM ", "alice.smith@example.com"},
		{Username, "ÅSA_K", "åsa_k"},
		{Name, "Ｊｏｈｎ   DOE", "john doe"},
		{Domain, "mail.corp.example.co.uk", "example.co.uk"},
		{Domain, "bob@Sub.Example.org", "example.org"},
		{IP, "::ffff:192.0.2.10", "192.0.2.10"},
		{IP, "2001:DB8::1", "2001:db8::1"},
		{Phone, "(202) 555-0143", "+12025550143"},
		{Phone, "+44 20 7946 0958", "+442079460958"},
		{VIN, "1hgcm82633a004352", "1HGCM82633A004352"},
		{MAC, "00-1A-2b-3C-4d-5E", "001a2b3c4d5e"},
		{BIN, "4111 1111 1111 1111", "411111"},
		{BIN, "52000000", "52000000"},
		{HashedPassword, "5F4DCC3B5AA765D61D8327DEB882CF99", "5f4dcc3b5aa765d61d8327deb882cf99"},
		{Password, " Exact Pass ", "Exact Pass"},
		{Address, "1 Main ST", "1 main st"},
		{Hostname, "DESKTOP-AB12CD", "desktop-ab12cd"},
		{CVE, "cve-2021-44228", "CVE-2021-44228"},
	}
	for _, c := range cases {
		got, err := n.Normalize(c.t, c.in)
		if err != nil || got != c.want {
			t.Errorf("Normalize(%s, %q) = %q, %v; want %q", c.t, c.in, got, err, c.want)
		}
	}
	for _, bad := range []struct {
		t  Type
		in string
	}{{Email, "no-at-sign"}, {IP, "300.1.1.1"}, {VIN, "1HGCM82633A00435"}, {VIN, "IHGCM82633A004352"}, {MAC, "zz:zz"}, {BIN, "12"}, {CVE, "CVE-21-1"}, {Email, "a\x00@example.com"}, {Username, "bad\xff"}} {
		if got, err := n.Normalize(bad.t, bad.in); err == nil {
			t.Errorf("Normalize(%s, %q) = %q, want an error", bad.t, bad.in, got)
		}
	}
}

func TestVINCheckDigit(t *testing.T) {
	if d := VINCheckDigit("1HGCM82633A004352"); d != '3' {
		t.Fatalf("check digit %c, want 3", d)
	}
}

func TestHashTypes(t *testing.T) {
	for in, want := range map[string]string{
		strings.Repeat("a", 32): "md5", strings.Repeat("b", 40): "sha1", strings.Repeat("c", 64): "sha256",
		strings.Repeat("d", 128): "sha512", "$2b$10$abcdefghijklmnopqrstuv": "bcrypt", "$6$salt$x": "sha512crypt", "zz": "unknown",
	} {
		if _, got, _ := NormalizeHash(in); got != want {
			t.Errorf("NormalizeHash(%q) type %q, want %q", in, got, want)
		}
	}
}

func TestCleanReducesCards(t *testing.T) {
	r := Record{Email: "a@example.com", BIN: "4111-1111-1111-1111"}
	if err := (Normalizer{}).Clean(&r); err != nil {
		t.Fatal(err)
	}
	if r.BIN != "411111" || r.CardLast4 != "1111" || strings.Contains(r.Identity(), "4111111111111111") {
		t.Fatalf("card kept whole: %+v", r)
	}
	r = Record{Username: "bob", Password: "5555555555554444"}
	(Normalizer{}).Clean(&r)
	if r.Password != "" || r.BIN != "555555" || r.CardLast4 != "4444" {
		t.Fatalf("card in password kept: %+v", r)
	}
}

func TestTermsIndexDomainLevels(t *testing.T) {
	r := Record{Email: "x@a.b.example.co.uk", Password: "p", URL: "https://login.example.net/x"}
	n := Normalizer{}
	if err := n.Clean(&r); err != nil {
		t.Fatal(err)
	}
	got := map[Term]bool{}
	for _, tm := range n.Terms(&r) {
		got[tm] = true
	}
	for _, want := range []Term{{Email, "x@a.b.example.co.uk"}, {Domain, "example.co.uk"}, {EmailDomain, "a.b.example.co.uk"},
		{EmailDomain, "b.example.co.uk"}, {EmailDomain, "example.co.uk"}, {Domain, "example.net"}, {Hostname, "login.example.net"}, {Password, "p"}} {
		if !got[want] {
			t.Errorf("missing term %v in %v", want, got)
		}
	}
	if got[Term{EmailDomain, "co.uk"}] {
		t.Error("public suffix indexed")
	}
}

func TestKeyringSealOpen(t *testing.T) {
	k1, _ := NewKeyring(bytes.Repeat([]byte{1}, 32))
	k2, _ := NewKeyring(bytes.Repeat([]byte{2}, 32))
	r := Record{Email: "a@example.com", Password: "secret-pass"}
	blob, err := k1.Seal("id1", &r)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(blob, []byte("secret-pass")) || bytes.Contains(blob, []byte("a@example.com")) {
		t.Fatal("clear text in sealed blob")
	}
	var got Record
	if err := k1.Open("id1", blob, &got); err != nil || got.Password != "secret-pass" {
		t.Fatalf("open: %v %+v", err, got)
	}
	if err := k1.Open("id2", blob, &got); err == nil {
		t.Fatal("blob opened under another id")
	}
	if err := k2.Open("id1", blob, &got); err == nil {
		t.Fatal("blob opened with another key")
	}
	if bytes.Equal(k1.Index(Email, "a"), k1.Index(Username, "a")) {
		t.Fatal("index keys are not per type")
	}
	if k1.ID() == k2.ID() || bytes.Equal(k1.Check(), k2.Check()) {
		t.Fatal("key ids or checks collide")
	}
}

func TestKeyFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "dw.key")
	var logged string
	k, err := LoadOrCreateKey(p, true, func(path string) { logged = path })
	if err != nil || logged != p {
		t.Fatalf("create: %v (logged %q)", err, logged)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %o", fi.Mode().Perm())
	}
	k2, err := LoadOrCreateKey(p, true, nil)
	if err != nil || k2.ID() != k.ID() {
		t.Fatalf("reload: %v", err)
	}
	os.Chmod(p, 0o644)
	if _, err := LoadOrCreateKey(p, false, nil); err == nil {
		t.Fatal("world-readable key accepted")
	}
	if _, err := LoadOrCreateKey(filepath.Join(t.TempDir(), "none"), false, nil); err == nil {
		t.Fatal("missing key created without create")
	}
}

func collect(t *testing.T, parse func(Sink) error) ([]Record, []Reject) {
	t.Helper()
	var recs []Record
	var rejs []Reject
	err := parse(Sink{Record: func(r Record) error { recs = append(recs, r); return nil }, Reject: func(r Reject) { rejs = append(rejs, r) }})
	if err != nil {
		t.Fatal(err)
	}
	return recs, rejs
}

func TestParseCombolist(t *testing.T) {
	in := "alice@example.com:pa:ss\n" +
		"bob;hunter2\n" +
		"https://login.example.org:8443/auth:carol@example.net:pw1\n" +
		"https://www.example.com|dave|pw2\n" +
		"www.example.com erin pw3\n" +
		"nosep\n" +
		"latin\xe9:x\n" +
		strings.Repeat("a", MaxLine+10) + "\n" +
		"frank@example.com:\n" +
		"android://abc@com.example.app/:grace:pw4\n"
	recs, rejs := collect(t, func(s Sink) error {
		return ParseCombolist(strings.NewReader(in), Options{File: "c.txt", Breach: "Test"}, s)
	})
	if len(recs) != 6 {
		t.Fatalf("records %d: %+v", len(recs), recs)
	}
	if recs[0].Email != "alice@example.com" || recs[0].Password != "pa:ss" || recs[0].Breach != "Test" {
		t.Errorf("email:pass %+v", recs[0])
	}
	if recs[1].Username != "bob" || recs[1].Password != "hunter2" {
		t.Errorf("user;pass %+v", recs[1])
	}
	if recs[2].URL != "https://login.example.org:8443/auth" || recs[2].Email != "carol@example.net" || recs[2].Password != "pw1" {
		t.Errorf("url:login:pass %+v", recs[2])
	}
	if recs[3].Username != "dave" || recs[4].Username != "erin" || recs[5].Username != "grace" {
		t.Errorf("url forms %+v", recs[3:])
	}
	if len(rejs) != 4 || rejs[0].Line != 6 || rejs[1].Line != 7 || !strings.Contains(rejs[2].Reason, "longer") || rejs[3].Line != 9 {
		t.Fatalf("rejects %v", rejs)
	}
	recs, _ = collect(t, func(s Sink) error {
		return ParseCombolist(strings.NewReader("latin\xe9:x\n"), Options{File: "c.txt", Encoding: Latin1}, s)
	})
	if len(recs) != 1 || recs[0].Username != "latiné" {
		t.Fatalf("latin1: %+v", recs)
	}
}

func TestParseCSV(t *testing.T) {
	in := "Email,Pass,Full Name,Phone,Extra\n" +
		"a@example.com,pw,\"Doe, Jane\",202-555-0100,x\n" +
		"b@example.com,pw2\n"
	recs, rejs := collect(t, func(s Sink) error {
		return ParseCSV(strings.NewReader(in), Options{File: "d.csv", Map: map[string]string{"Full Name": "name"}}, s)
	})
	if len(recs) != 1 || recs[0].Name != "Doe, Jane" || recs[0].Phone != "202-555-0100" || recs[0].Password != "pw" {
		t.Fatalf("records %+v", recs)
	}
	if len(rejs) != 1 || rejs[0].Line != 3 {
		t.Fatalf("rejects %v", rejs)
	}
	err := ParseCSV(strings.NewReader("foo,bar\n1,2\n"), Options{File: "x.csv"}, Sink{Record: func(Record) error { t.Fatal("record from headerless CSV"); return nil }})
	if err == nil || !strings.Contains(err.Error(), "no recognisable column") {
		t.Fatalf("headerless: %v", err)
	}
}

func TestParseDeHashed(t *testing.T) {
	v1 := `{"entries":[{"id":"1","email":"a@example.com","password":"p","hashed_password":"","database_name":"ExampleDB","phone":""}, {"email": 5}]}`
	recs, rejs := collect(t, func(s Sink) error { return ParseDeHashed(strings.NewReader(v1), Options{File: "v1.json"}, s) })
	if len(recs) != 1 || recs[0].Breach != "ExampleDB" || len(rejs) != 1 {
		t.Fatalf("v1: %+v %v", recs, rejs)
	}
	v2 := `{"email":["b@example.com"],"hashed_password":["` + strings.Repeat("a", 40) + `","` + strings.Repeat("b", 32) + `"],"database_name":"X"}` + "\n" + `not json` + "\n"
	recs, rejs = collect(t, func(s Sink) error { return ParseDeHashed(strings.NewReader(v2), Options{File: "v2.ndjson"}, s) })
	if len(recs) != 1 || len(recs[0].HashedPassword) != 2 || len(rejs) != 1 || rejs[0].Line != 2 {
		t.Fatalf("v2: %+v %v", recs, rejs)
	}
	if err := ParseDeHashed(strings.NewReader(`[{"email":"a@example.com"`), Options{File: "t.json"}, Sink{Record: func(Record) error { return nil }}); err == nil {
		t.Fatal("truncated JSON accepted")
	}
}

func TestParseStealer(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "log1")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "System.txt"), []byte("Computer Name: DESKTOP-TEST01\nIP: 198.51.100.7\nMAC: 00:11:22:33:44:55\nCountry: US\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "Passwords.txt"), []byte("URL: https://mail.example.com/login\nUsername: user@example.com\nPassword: pw1\n===============\nURL: android://hash@com.example.app/\nUSER: bob\nPASS: pw2\n\nURL: https://x.example.org\nUSER: nobody\n"), 0o644)
	recs, rejs := collect(t, func(s Sink) error { return ParseStealer(filepath.Dir(dir), Options{Breach: "Stealer"}, s) })
	if len(recs) != 2 || recs[0].Hostname != "DESKTOP-TEST01" || recs[0].IP != "198.51.100.7" || recs[1].URL != "android://hash@com.example.app/" {
		t.Fatalf("records %+v", recs)
	}
	if len(rejs) != 1 || rejs[0].Line != 9 {
		t.Fatalf("rejects %v", rejs)
	}
}

func TestParseBreaches(t *testing.T) {
	in := `[{"Name":"Example","Title":"Example","Domain":"example.com","BreachDate":"2020-01-02","AddedDate":"2020-02-01T00:00:00Z","PwnCount":10,"DataClasses":["Email addresses","Passwords"]},{"Title":"no name"},{"Name":"Bad","BreachDate":"02/01/2020"}]`
	var got []BreachInfo
	var rejs []Reject
	err := ParseBreaches(strings.NewReader(in), Options{File: "b.json"}, func(b BreachInfo) error { got = append(got, b); return nil }, func(r Reject) { rejs = append(rejs, r) })
	if err != nil || len(got) != 1 || got[0].PwnCount != 10 || len(rejs) != 2 {
		t.Fatalf("%v %+v %v", err, got, rejs)
	}
}

func TestMask(t *testing.T) {
	for in, want := range map[string]string{"hunter2": "h*****2", "ab": "**", "": "", "pässwörd": "p******d"} {
		if got := Mask(in); got != want {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"a@example.com", "192.0.2.1", "+1 202 555 0100", "1HGCM82633A004352", "00:11:22:33:44:55", "4111111111111111", "CVE-2021-1234", "Ｊｏｈｎ"} {
		f.Add(s)
	}
	n := Normalizer{}
	f.Fuzz(func(t *testing.T, s string) {
		for _, ty := range append(Types, EmailDomain) {
			out, err := n.Normalize(ty, s)
			if err != nil {
				continue
			}
			if !utf8.ValidString(out) || strings.ContainsRune(out, 0) {
				t.Fatalf("%s: invalid output %q", ty, out)
			}
			if ty != Password && ty != Phone {
				again, err := n.Normalize(ty, out)
				if err != nil || again != out {
					t.Fatalf("%s: not idempotent: %q → %q → %q (%v)", ty, s, out, again, err)
				}
			}
			if ty == BIN && len(out) > 8 {
				t.Fatalf("bin kept %d digits", len(out))
			}
		}
	})
}

func FuzzCombolist(f *testing.F) {
	f.Add("a@example.com:pw\nhttps://x.example.com:1/a:u:p\n")
	f.Fuzz(func(t *testing.T, s string) {
		ParseCombolist(strings.NewReader(s), Options{File: "f"}, Sink{Record: func(r Record) error {
			if !utf8.ValidString(r.Password) || !utf8.ValidString(r.Email+r.Username+r.URL) {
				t.Fatalf("invalid UTF-8 emitted: %+v", r)
			}
			return nil
		}})
	})
}

func FuzzCSVAndDeHashed(f *testing.F) {
	f.Add("email,password\na@example.com,pw\n")
	f.Add(`{"email":["a@example.com"],"password":"x"}` + "\n")
	f.Add("[\n" + `{"email":"a@example.com","password":"x"},` + "\n" + `{"email":"b@exa`)
	f.Add(`{"entries":[{"email":"a@example.com"},7,{"email":{"x":1}}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		check := Sink{Record: func(r Record) error {
			if err := (Normalizer{}).Clean(&r); err == nil {
				for _, v := range []string{r.Email, r.Username, r.Password, r.Name, r.Phone, r.BIN} {
					if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
						t.Fatalf("invalid text kept: %+v", r)
					}
				}
				if len(r.BIN) > 8 {
					t.Fatalf("bin %q", r.BIN)
				}
			}
			return nil
		}}
		ParseCSV(strings.NewReader(s), Options{File: "f"}, check)
		ParseDeHashed(strings.NewReader(s), Options{File: "f"}, check)
	})
}

func TestSealedRecordRoundTrip(t *testing.T) {
	k, err := NewKeyring(make([]byte, KeySize))
	if err != nil {
		t.Fatal(err)
	}
	in := Record{Email: "a@example.com", Username: "ä", Password: "p:w", HashedPassword: []string{"ab", "cd"}, HashType: "md5",
		Name: "Zoë", Phone: "+15550100", Country: "FR", CVEs: []string{"CVE-2024-0001"}, Breach: "clear-metadata"}
	blob, err := k.Seal("id1", &in)
	if err != nil {
		t.Fatal(err)
	}
	var out Record
	if err := k.Open("id1", blob, &out); err != nil {
		t.Fatal(err)
	}
	in.Breach = ""
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip: got %+v, want %+v", out, in)
	}
	if err := k.Open("id2", blob, &out); err == nil {
		t.Fatal("a blob opened under another id")
	}
	var bad Record
	if err := bad.decodeBinary([]byte{codecV1, 5, 'a'}); err == nil {
		t.Fatal("a truncated blob decoded")
	}
}

// Terms indexes a cleaned E.164 phone without parsing it again: that is
// only right if normalising it gives it back unchanged.
func TestTermsE164PhoneIsNormalised(t *testing.T) {
	var n Normalizer
	for _, raw := range []string{"(202) 555-0143", "+1 202 555 0199", "+44 20 7946 0958", "+33 1 99 00 12 34", "020 7946 0000"} {
		r := Record{Phone: raw, Email: "a@example.com"}
		if err := n.Clean(&r); err != nil {
			t.Fatal(err)
		}
		want, err := n.Normalize(Phone, r.Phone)
		if err != nil {
			t.Fatalf("%q: %v", r.Phone, err)
		}
		found := false
		for _, tm := range n.Terms(&r) {
			if tm.Type == Phone {
				found = tm.Value == want
			}
		}
		if !found {
			t.Fatalf("%q cleaned to %q: phone term is not %q", raw, r.Phone, want)
		}
	}
	if isE164("+0123456789") || isE164("+1202555") || !isE164("+12025550143") || isE164("12025550143") {
		t.Fatal("isE164")
	}
}
