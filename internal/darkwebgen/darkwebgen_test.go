package darkwebgen

import (
	"bytes"
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/darkweb"
)

// TestEveryLayoutParses feeds each generated layout through its parser:
// every record parses and cleans, none is rejected.
func TestEveryLayoutParses(t *testing.T) {
	n := darkweb.Normalizer{}
	count := func(t *testing.T, parse func(darkweb.Sink) error) int {
		got := 0
		err := parse(darkweb.Sink{
			Record: func(r darkweb.Record) error {
				if err := n.Clean(&r); err != nil {
					t.Fatalf("clean %+v: %v", r, err)
				}
				if len(r.BIN) > 8 || strings.Contains(r.Identity(), "4111111111111111") {
					t.Fatalf("card kept whole: %+v", r)
				}
				if r.VIN != "" && darkweb.VINCheckDigit(r.VIN) != r.VIN[8] {
					t.Fatalf("bad VIN check digit %s", r.VIN)
				}
				got++
				return nil
			},
			Reject: func(r darkweb.Reject) { t.Fatalf("reject %s", r) },
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	g := New(7)
	var b bytes.Buffer
	g.Combolist(&b, 60)
	if c := count(t, func(s darkweb.Sink) error {
		return darkweb.ParseCombolist(bytes.NewReader(b.Bytes()), darkweb.Options{File: "c", Breach: "X"}, s)
	}); c != 60 {
		t.Fatalf("combolist %d", c)
	}
	for _, tsv := range []bool{false, true} {
		b.Reset()
		g.CSV(&b, 40, tsv)
		if c := count(t, func(s darkweb.Sink) error {
			return darkweb.ParseCSV(bytes.NewReader(b.Bytes()), darkweb.Options{File: "d"}, s)
		}); c != 40 {
			t.Fatalf("csv %d", c)
		}
	}
	b.Reset()
	g.ForumCSV(&b, 20)
	cves := 0
	if c := count(t, func(s darkweb.Sink) error {
		return darkweb.ParseCSV(bytes.NewReader(b.Bytes()), darkweb.Options{File: "f", Breach: "F", Map: map[string]string{"notes": "cve"}}, darkweb.Sink{
			Record: func(r darkweb.Record) error {
				if len(r.CVEs) == 1 {
					cves++
				}
				return s.Record(r)
			},
			Reject: s.Reject,
		})
	}); c != 20 || cves != 20 {
		t.Fatalf("forum csv: %d records, %d with one CVE", c, cves)
	}
	for _, v2 := range []bool{false, true} {
		b.Reset()
		g.DeHashed(&b, 30, v2)
		if c := count(t, func(s darkweb.Sink) error {
			return darkweb.ParseDeHashed(bytes.NewReader(b.Bytes()), darkweb.Options{File: "j"}, s)
		}); c != 30 {
			t.Fatalf("dehashed v2=%v %d", v2, c)
		}
	}
	dir := t.TempDir()
	g.Stealer(dir, 3, 5)
	if c := count(t, func(s darkweb.Sink) error { return darkweb.ParseStealer(dir, darkweb.Options{Breach: "S"}, s) }); c != 15 {
		t.Fatalf("stealer %d", c)
	}
	b.Reset()
	g.Breaches(&b)
	var infos []darkweb.BreachInfo
	darkweb.ParseBreaches(&b, darkweb.Options{File: "b"}, func(i darkweb.BreachInfo) error { infos = append(infos, i); return nil }, func(r darkweb.Reject) { t.Fatal(r) })
	if len(infos) != len(BreachNames()) {
		t.Fatalf("breaches %d", len(infos))
	}
	// Same seed, same output.
	var x, y bytes.Buffer
	New(3).CSV(&x, 10, false)
	New(3).CSV(&y, 10, false)
	if !bytes.Equal(x.Bytes(), y.Bytes()) {
		t.Fatal("not deterministic")
	}
}
