package vuln

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkReadNVD parses a generated NVD API 2.0 document made of the
// 38 recorded CVEs of vunnel_full-page.json repeated 100 times (3,800
// records, about 16 MB) and reports records per second.
func BenchmarkReadNVD(b *testing.B) {
	raw, err := os.ReadFile("testdata/nvd/vunnel_full-page.json")
	if err != nil {
		b.Fatal(err)
	}
	var doc struct {
		Vulnerabilities []json.RawMessage `json:"vulnerabilities"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	buf.WriteString(`{"resultsPerPage":3800,"startIndex":0,"totalResults":3800,"vulnerabilities":[`)
	for i := 0; i < 100; i++ {
		for j, v := range doc.Vulnerabilities {
			if i > 0 || j > 0 {
				buf.WriteByte(',')
			}
			buf.Write(v)
		}
	}
	buf.WriteString("]}")
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	records := 0
	for b.Loop() {
		_, res, err := ReadNVD(bytes.NewReader(data), "bench", func(Vulnerability) error { return nil })
		if err != nil || res.Records != 3800 {
			b.Fatalf("%+v %v", res, err)
		}
		records += res.Records
	}
	b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkParseOSV parses the 67 recorded OSV files (62 Go, 5 GHSA).
func BenchmarkParseOSV(b *testing.B) {
	paths, _ := filepath.Glob("testdata/osv/*/*.json")
	var files [][]byte
	size := 0
	for _, p := range paths {
		d, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, d)
		size += len(d)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	records := 0
	for b.Loop() {
		for _, d := range files {
			if _, err := ParseOSV(bytes.NewReader(d)); err != nil {
				b.Fatal(err)
			}
			records++
		}
	}
	b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
}
