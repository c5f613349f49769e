package scan

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/host"
)

// fuzzParser checks that parse never panics and that every emitted host
// has a normalised name and encodes to JSON.
func fuzzParser(f *testing.F, parse func(io.Reader, func(host.Host) error) (Stats, error), seeds ...string) {
	for _, pattern := range seeds {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		st, _ := parse(strings.NewReader(string(in)), func(h host.Host) error {
			n, err := host.Normalize(h.Host)
			if err != nil || n.Host != h.Host {
				t.Fatalf("emitted host %q is not normalised (%v)", h.Host, err)
			}
			if _, err := h.MarshalJSON(); err != nil {
				t.Fatalf("host does not encode: %v", err)
			}
			return nil
		})
		if st.Rejected < len(st.Rejects) || len(st.Rejects) > MaxRejects {
			t.Fatalf("inconsistent stats %+v", st)
		}
	})
}

func FuzzHTTPX(f *testing.F)   { fuzzParser(f, ParseHTTPX, "testdata/*httpx*") }
func FuzzNmap(f *testing.F)    { fuzzParser(f, ParseNmap, "testdata/*nmap*.xml") }
func FuzzMasscan(f *testing.F) { fuzzParser(f, ParseMasscan, "testdata/*masscan*") }
func FuzzNaabu(f *testing.F)   { fuzzParser(f, ParseNaabu, "testdata/*naabu*") }
func FuzzPDNS(f *testing.F)    { fuzzParser(f, ParsePDNS, "testdata/pdns*") }
func FuzzNative(f *testing.F)  { fuzzParser(f, ParseNative, "testdata/pdns*") }
