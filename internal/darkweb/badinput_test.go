package darkweb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// parseFile runs the parser of kind on a testdata file and returns what
// it found and its error.
func parseFile(t *testing.T, kind, path string, o Options) ([]Record, []Reject, error) {
	t.Helper()
	var recs []Record
	var rejs []Reject
	sink := Sink{Record: func(r Record) error { recs = append(recs, r); return nil }, Reject: func(r Reject) { rejs = append(rejs, r) }}
	o.File = path
	if kind == "stealer" {
		return recs, rejs, ParseStealer(path, o, sink)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	switch kind {
	case "combolist":
		err = ParseCombolist(f, o, sink)
	case "breach-csv":
		err = ParseCSV(f, o, sink)
	case "dehashed":
		err = ParseDeHashed(f, o, sink)
	case "breaches":
		err = ParseBreaches(f, o, func(BreachInfo) error { return nil }, sink.Reject)
	default:
		t.Fatalf("kind %q", kind)
	}
	return recs, rejs, err
}

func TestBinaryFilesRefusedWhole(t *testing.T) {
	for _, c := range []struct {
		kind, file, want string
	}{
		{"combolist", "combo.zip", "zip archive"},
		{"combolist", "junk.bin", "NUL byte at offset"},
		{"breach-csv", "junk.bin", "NUL byte at offset"},
		{"dehashed", "combo.zip", "zip archive"},
		{"breaches", "junk.bin", "NUL byte"},
		{"combolist", "control.txt", "control bytes"},
		{"combolist", "utf16.txt", "UTF-16 text"},
	} {
		t.Run(c.kind+"/"+c.file, func(t *testing.T) {
			recs, rejs, err := parseFile(t, c.kind, filepath.Join("testdata/bad", c.file), Options{Breach: "B"})
			if !errors.Is(err, ErrBinary) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "nothing stored") {
				t.Fatalf("err %v, want ErrBinary naming %q", err, c.want)
			}
			if len(recs) != 0 || len(rejs) != 0 {
				t.Fatalf("a refused file yielded %d records, %d rejects", len(recs), len(rejs))
			}
		})
	}
}

func TestBinaryStealerFileRejectedOthersRead(t *testing.T) {
	root := t.TempDir()
	good, bad := filepath.Join(root, "good"), filepath.Join(root, "bad")
	os.MkdirAll(good, 0o755)
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(good, "Passwords.txt"), []byte("URL: https://mail.example.com/\nUsername: a@example.com\nPassword: pw1\n"), 0o644)
	junk, err := os.ReadFile("testdata/bad/junk.bin")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(bad, "Passwords.txt"), junk, 0o644)
	recs, rejs, err := parseFile(t, "stealer", root, Options{})
	if !errors.Is(err, ErrIncomplete) || len(recs) != 1 || len(rejs) != 1 || rejs[0].File != filepath.Join(bad, "Passwords.txt") || !strings.Contains(rejs[0].Reason, "binary") {
		t.Fatalf("err %v, records %d, rejects %v", err, len(recs), rejs)
	}
}

func TestGzipReadThrough(t *testing.T) {
	recs, rejs, err := parseFile(t, "combolist", "testdata/bad/combo.txt.gz", Options{Breach: "B"})
	if err != nil || len(recs) != 2000 || len(rejs) != 0 {
		t.Fatalf("gzip: err %v, %d records, rejects %v", err, len(recs), rejs)
	}
	if recs[1999].Email != "user2000@example.com" || recs[1999].Password != "password2000" {
		t.Fatalf("last record %+v", recs[1999])
	}
}

func TestTruncatedFiles(t *testing.T) {
	for _, c := range []struct {
		kind, file string
		records    int
		line       int // of the rejected tail
	}{
		{"dehashed", "truncated.json", 2, 4},
		{"dehashed", "truncated-entries.json", 2, 4}, // the end of the file
		{"dehashed", "truncated.ndjson", 2, 3},
		{"combolist", "truncated.txt.gz", -1, -1},
	} {
		t.Run(c.file, func(t *testing.T) {
			recs, rejs, err := parseFile(t, c.kind, filepath.Join("testdata/bad", c.file), Options{Breach: "B"})
			if !errors.Is(err, ErrIncomplete) {
				t.Fatalf("err %v, want ErrIncomplete", err)
			}
			if len(rejs) != 1 || !strings.Contains(rejs[0].Reason, "truncated") {
				t.Fatalf("rejects %v", rejs)
			}
			if c.records < 0 {
				// The gzip stream is cut mid-file: every complete line
				// before the cut is a record and the cut line the reject.
				if len(recs) < 100 || len(recs) >= 2000 || rejs[0].Line != len(recs)+1 {
					t.Fatalf("%d records, reject %v", len(recs), rejs[0])
				}
				for i, r := range recs {
					if want := "password" + itoa(i+1); r.Password != want {
						t.Fatalf("record %d password %q, want %q", i+1, r.Password, want)
					}
				}
				return
			}
			if len(recs) != c.records || rejs[0].Line != c.line || !strings.Contains(err.Error(), filepath.Join("testdata/bad", c.file)) {
				t.Fatalf("%d records, reject %v, err %v", len(recs), rejs[0], err)
			}
			if recs[0].Email != "alice@example.com" || recs[1].Email != "bob@example.com" {
				t.Fatalf("records %+v", recs)
			}
		})
	}
}

func itoa(i int) string {
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

func TestWrongShapeRecords(t *testing.T) {
	recs, rejs, err := parseFile(t, "dehashed", "testdata/bad/wrongshape.json", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Email != "alice@example.com" || recs[1].Password != "pw4" {
		t.Fatalf("records %+v", recs)
	}
	want := []struct {
		line   int
		reason string
	}{{3, "record 2: not a JSON object"}, {4, "record 3: not a JSON object"}, {5, `record 4: field "email"`}}
	if len(rejs) != len(want) {
		t.Fatalf("rejects %v", rejs)
	}
	for i, w := range want {
		if rejs[i].Line != w.line || !strings.Contains(rejs[i].Reason, w.reason) {
			t.Errorf("reject %d: %v, want line %d %q", i, rejs[i], w.line, w.reason)
		}
	}
	recs, rejs, err = parseFile(t, "dehashed", "testdata/bad/wrongshape.ndjson", Options{})
	if err != nil || len(recs) != 2 || len(rejs) != 2 || rejs[0].Line != 2 || rejs[1].Line != 3 || !strings.Contains(rejs[1].Reason, `field "email"`) {
		t.Fatalf("ndjson: %v %+v %v", err, recs, rejs)
	}
}

func TestLongLineRejectedRestRead(t *testing.T) {
	for _, kind := range []string{"combolist", "dehashed"} {
		path := "testdata/bad/longline.txt"
		if kind == "dehashed" {
			path = filepath.Join(t.TempDir(), "long.ndjson")
			os.WriteFile(path, []byte(`{"email":"alice@example.com","password":"pw1"}`+"\n"+`{"email":"x@example.com","password":"`+strings.Repeat("y", MaxLine)+`"}`+"\n"+`{"email":"bob@example.com","password":"pw2"}`+"\n"), 0o644)
		}
		recs, rejs, err := parseFile(t, kind, path, Options{Breach: "B"})
		if err != nil || len(recs) != 2 || len(rejs) != 1 || rejs[0].Line != 2 || !strings.Contains(rejs[0].Reason, "longer than 65536 bytes") {
			t.Fatalf("%s: err %v, %d records, rejects %v", kind, err, len(recs), rejs)
		}
		if recs[1].Email != "bob@example.com" {
			t.Fatalf("%s: line after the long one: %+v", kind, recs[1])
		}
	}
}

func TestCSVWithoutHeaderNamesColumns(t *testing.T) {
	recs, rejs, err := parseFile(t, "breach-csv", "testdata/bad/noheader.csv", Options{})
	if err == nil || len(recs) != 0 || len(rejs) != 0 {
		t.Fatalf("err %v, %d records", err, len(recs))
	}
	for _, want := range []string{"noheader.csv:1", `"col_a", "col_b", "col_c"`, "--map col=field", "nothing stored"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	recs, _, err = parseFile(t, "breach-csv", "testdata/bad/noheader.csv", Options{Map: map[string]string{"col_a": "email", "col_b": "password", "col_c": "skip"}})
	if err != nil || len(recs) != 1 || recs[0].Email != "alice@example.com" || recs[0].Password != "pw1" {
		t.Fatalf("with --map: %v %+v", err, recs)
	}
}

// TestEncodingEveryLayout checks --encoding on every line-based layout:
// UTF-8 (the default) rejects the Latin-1 lines with file:line, latin1
// and auto decode them.
func TestEncodingEveryLayout(t *testing.T) {
	for _, c := range []struct {
		kind, path string
		records    int // in each file
	}{
		{"combolist", "testdata/encoding/combo-latin1.txt", 2},
		{"breach-csv", "testdata/encoding/breach-latin1.csv", 1},
		{"dehashed", "testdata/encoding/dehashed-latin1.ndjson", 1},
		{"stealer", "testdata/encoding/stealer", 1},
	} {
		t.Run(c.kind, func(t *testing.T) {
			recs, rejs, err := parseFile(t, c.kind, c.path, Options{Breach: "B"})
			if c.kind == "breach-csv" {
				// The header is ASCII; the record line is rejected.
				if err != nil || len(recs) != 0 || len(rejs) != 1 || rejs[0].Line != 2 || !strings.Contains(rejs[0].Reason, "invalid UTF-8") {
					t.Fatalf("utf-8: %v %+v %v", err, recs, rejs)
				}
			} else if err != nil || len(recs) != 0 || len(rejs) < c.records || !strings.Contains(rejs[0].Reason, "invalid UTF-8") {
				t.Fatalf("utf-8: %v %+v %v", err, recs, rejs)
			}
			for _, enc := range []Encoding{Latin1, Windows1252, Auto} {
				recs, rejs, err := parseFile(t, c.kind, c.path, Options{Breach: "B", Encoding: enc})
				if err != nil || len(recs) != c.records || len(rejs) != 0 {
					t.Fatalf("%s: %v %+v %v", enc, err, recs, rejs)
				}
				r := recs[0]
				if r.Email != "josé@example.com" || r.Password != "contraseña" {
					t.Fatalf("%s: %+v", enc, r)
				}
				if c.kind == "breach-csv" || c.kind == "dehashed" {
					if r.Name != "José Müller" {
						t.Fatalf("%s: name %q", enc, r.Name)
					}
				}
				if c.kind == "stealer" && r.Hostname != "DESKTOP-TEST01" {
					t.Fatalf("%s: machine facts %+v", enc, r)
				}
			}
		})
	}
	// Windows-1252's own characters (0x80-0x9f) differ from Latin-1's C1
	// controls: latin1 decodes them to controls Clean refuses.
	recs, _, err := parseFile(t, "combolist", "testdata/encoding/combo-cp1252.txt", Options{Breach: "B", Encoding: Windows1252})
	if err != nil || len(recs) != 1 || recs[0].Password != "pay€“x”" {
		t.Fatalf("windows-1252: %v %+v", err, recs)
	}
	recs, _, err = parseFile(t, "combolist", "testdata/encoding/combo-cp1252.txt", Options{Breach: "B", Encoding: Auto})
	if err != nil || len(recs) != 1 || recs[0].Password != "pay€“x”" {
		t.Fatalf("auto: %v %+v", err, recs)
	}
	recs, _, err = parseFile(t, "combolist", "testdata/encoding/combo-cp1252.txt", Options{Breach: "B", Encoding: Latin1})
	if err != nil || len(recs) != 1 {
		t.Fatalf("latin1: %v %+v", err, recs)
	}
	if err := (Normalizer{}).Clean(&recs[0]); err == nil || !strings.Contains(err.Error(), "control character") {
		t.Fatalf("latin1 C1 controls kept: %v %q", err, recs[0].Password)
	}
}

// TestDeHashedDocumentOnOneLine reads an API answer written on one line
// far over MaxLine, as DeHashed's API writes them, and the same records
// in Latin-1 under each --encoding.
func TestDeHashedDocumentOnOneLine(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"balance":0,"entries":[`)
	for i := 1; i <= 3000; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"%d","email":"user%d@example.com","password":"pw-%d","database_name":"ExampleDB"}`, i, i, i)
	}
	b.WriteString(`],"success":true,"total":3000}`)
	if b.Len() < 4*MaxLine {
		t.Fatalf("document of %d bytes", b.Len())
	}
	var recs []Record
	var rejs []Reject
	sink := Sink{Record: func(r Record) error { recs = append(recs, r); return nil }, Reject: func(r Reject) { rejs = append(rejs, r) }}
	if err := ParseDeHashed(strings.NewReader(b.String()), Options{File: "v1.json"}, sink); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3000 || len(rejs) != 0 || recs[2999].Password != "pw-3000" || recs[0].Breach != "ExampleDB" {
		t.Fatalf("%d records, rejects %v", len(recs), rejs)
	}
	// A byte-order mark before the document is skipped.
	recs, rejs = nil, nil
	if err := ParseDeHashed(strings.NewReader("\xef\xbb\xbf"+b.String()), Options{File: "bom.json"}, sink); err != nil || len(recs) != 3000 {
		t.Fatalf("with a BOM: %v, %d records", err, len(recs))
	}
	// A cut one-line answer keeps the records before the cut.
	recs, rejs = nil, nil
	cut := b.String()[:b.Len()/2]
	err := ParseDeHashed(strings.NewReader(cut), Options{File: "cut.json"}, sink)
	if !errors.Is(err, ErrIncomplete) || len(recs) < 1000 || len(recs) >= 3000 || len(rejs) != 1 || rejs[0].Line != 1 {
		t.Fatalf("cut: %v, %d records, rejects %v", err, len(recs), rejs)
	}
	latin := "[\n{\"email\":\"jos\xe9@example.com\",\"password\":\"contrase\xf1a\"},\n" + `{"email":"ascii@example.com","password":"pw"}` + "\n]\n"
	for _, c := range []struct {
		enc      Encoding
		records  int
		rejected int
	}{{UTF8, 1, 1}, {Latin1, 2, 0}, {Windows1252, 2, 0}, {Auto, 2, 0}} {
		recs, rejs = nil, nil
		if err := ParseDeHashed(strings.NewReader(latin), Options{File: "l.json", Encoding: c.enc}, sink); err != nil {
			t.Fatal(err)
		}
		if len(recs) != c.records || len(rejs) != c.rejected {
			t.Fatalf("%s: %+v %v", c.enc, recs, rejs)
		}
		if c.rejected > 0 && (rejs[0].Line != 2 || !strings.Contains(rejs[0].Reason, "invalid UTF-8")) {
			t.Fatalf("%s: reject %v", c.enc, rejs[0])
		}
		if c.rejected == 0 && (recs[0].Email != "josé@example.com" || recs[0].Password != "contraseña") {
			t.Fatalf("%s: %+v", c.enc, recs[0])
		}
	}
}
