package darkweb_test

import (
	"bytes"
	"compress/gzip"
	"testing"

	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/darkwebgen"
)

// BenchmarkParse measures each parser alone (no cleaning, no storage) on
// 20,000 generated records: ns/op is per file; records/s and MB/s are
// reported.
func BenchmarkParse(b *testing.B) {
	const n = 20000
	g := darkwebgen.New(7)
	layouts := []struct {
		name  string
		write func(*bytes.Buffer) error
		parse func(*bytes.Reader, darkweb.Sink) error
	}{
		{"combolist", func(w *bytes.Buffer) error { return g.Combolist(w, n) },
			func(r *bytes.Reader, s darkweb.Sink) error {
				return darkweb.ParseCombolist(r, darkweb.Options{File: "c", Breach: "B"}, s)
			}},
		{"csv", func(w *bytes.Buffer) error { return g.CSV(w, n, false) },
			func(r *bytes.Reader, s darkweb.Sink) error { return darkweb.ParseCSV(r, darkweb.Options{File: "c"}, s) }},
		{"dehashed-ndjson", func(w *bytes.Buffer) error { return g.DeHashed(w, n, true) },
			func(r *bytes.Reader, s darkweb.Sink) error {
				return darkweb.ParseDeHashed(r, darkweb.Options{File: "d"}, s)
			}},
		{"dehashed-v1-document", func(w *bytes.Buffer) error { return g.DeHashed(w, n, false) },
			func(r *bytes.Reader, s darkweb.Sink) error {
				return darkweb.ParseDeHashed(r, darkweb.Options{File: "d"}, s)
			}},
	}
	for _, l := range layouts {
		var raw bytes.Buffer
		if err := l.write(&raw); err != nil {
			b.Fatal(err)
		}
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(raw.Bytes())
		zw.Close()
		for _, in := range []struct {
			name string
			data []byte
		}{{"plain", raw.Bytes()}, {"gzip", gz.Bytes()}} {
			b.Run(l.name+"/"+in.name, func(b *testing.B) {
				b.SetBytes(int64(raw.Len()))
				recs := 0
				sink := darkweb.Sink{Record: func(darkweb.Record) error { recs++; return nil }, Reject: func(darkweb.Reject) {}}
				for i := 0; i < b.N; i++ {
					if err := l.parse(bytes.NewReader(in.data), sink); err != nil {
						b.Fatal(err)
					}
				}
				if recs != n*b.N {
					b.Fatalf("%d records of %d", recs, n*b.N)
				}
				b.ReportMetric(float64(recs)/b.Elapsed().Seconds(), "records/s")
			})
		}
	}
}
