package scan

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/periscope-oss/periscope/internal/host"
)

// benchInput repeats the lines of file until it has n lines.
func benchInput(b *testing.B, file string, n int) []byte {
	b.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.SplitAfter(bytes.TrimSpace(src), []byte("\n"))
	var buf bytes.Buffer
	for i := 0; i < n; i++ {
		l := lines[i%len(lines)]
		buf.Write(bytes.TrimRight(l, "\n"))
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

func runBench(b *testing.B, parse func(io.Reader, func(host.Host) error) (Stats, error), in []byte, lines int) {
	b.SetBytes(int64(len(in)))
	b.ResetTimer()
	for b.Loop() {
		st, err := parse(bytes.NewReader(in), func(host.Host) error { return nil })
		if err != nil || st.Records != lines {
			b.Fatalf("stats %+v err %v", st, err)
		}
	}
	b.ReportMetric(float64(lines*b.N)/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkHTTPX parses 100,000 httpx lines (the 6 DefectDojo lines and the
// authored ones, repeated; about 450 bytes a line).
func BenchmarkHTTPX(b *testing.B) {
	const n = 100_000
	in := benchInput(b, "testdata/defectdojo_httpx_many_vuln.jsonl", n)
	runBench(b, ParseHTTPX, in, n)
}

// BenchmarkNative parses 100,000 exported host objects (about 1 KB each).
func BenchmarkNative(b *testing.B) {
	const n = 100_000
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	for i := 0; i < n; i++ {
		enc.Encode(host.Host{
			Host: fmt.Sprintf("h%d.example.com", i), IPAddress: "192.0.2.1",
			DNS:             host.DNS{A: []string{"192.0.2.1"}},
			NetworkServices: []host.Service{{Port: 443, Protocol: "tcp", Service: "https", Product: "nginx", FirstSeen: 1, LastSeen: 2}},
			Web:             []string{"Nginx"}, HTTPStatusCode: 200, HTTPTitle: "Welcome", FirstSeen: 1, LastSeen: 2,
		})
	}
	enc.Flush()
	runBench(b, ParseNative, buf.Bytes(), n)
}
