package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/scan"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// periscope search runs the query language against the database: counts
// with facets, pages, exports, and one-line errors naming the position.
func TestSearchCommand(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			d := "--database=" + storetest.DSN(t, engine)
			dir := t.TempDir()
			in := filepath.Join(dir, "hosts.ndjson")
			f, err := os.Create(in)
			if err != nil {
				t.Fatal(err)
			}
			enc := scan.NewEncoder(f)
			for i := range 10 {
				cc := []string{"US", "DE"}[i%2]
				ip := fmt.Sprintf("203.0.113.%d", i+1)
				h := host.Host{Host: fmt.Sprintf("h%d.example.com", i), IPAddress: ip,
					IPMetadata:      host.IPMetadata{CountryCode: cc, ASN: 64500 + i%3},
					NetworkServices: []host.Service{{Port: 443, Service: "https", Product: "nginx"}}}
				if i < 3 {
					h.NetworkServices = append(h.NetworkServices, host.Service{Port: 22, Service: "ssh", Product: "OpenSSH"})
				}
				if err := enc.Encode(h); err != nil {
					t.Fatal(err)
				}
			}
			if err := enc.Flush(); err != nil {
				t.Fatal(err)
			}
			f.Close()
			if _, _, err := runCLI(t, "ingest", "hosts", in, d); err != nil {
				t.Fatal(err)
			}

			out, _, err := runCLI(t, "search", "port:443 -port:22", "--facets", "country:5,asn:1", "--count", d)
			if err != nil || !strings.Contains(out, "7 hosts match port:443 -port:22") || !strings.Contains(out, "country:") ||
				!strings.Contains(out, "4    DE") || !strings.Contains(out, "3    US") || strings.Contains(out, "HOST") {
				t.Errorf("count: %v\n%s", err, out)
			}
			out, _, err = runCLI(t, "search", "openssh", "--json", "--limit", "2", d)
			var got struct {
				Total   int         `json:"total"`
				Matches []host.Host `json:"matches"`
			}
			if err != nil || json.Unmarshal([]byte(out), &got) != nil || got.Total != 3 || len(got.Matches) != 2 || got.Matches[0].Host != "h0.example.com" {
				t.Errorf("json: %v\n%s", err, out)
			}
			file := filepath.Join(dir, "de.csv")
			_, errOut, err := runCLI(t, "search", "country:DE", "--export", file, "--format", "csv", d)
			rows := readCSV(t, file)
			if err != nil || !strings.Contains(errOut, "exported 5 hosts") || len(rows) != 6 || rows[1][0] != "h1.example.com" || rows[1][3] != "DE" {
				t.Errorf("export: %v %s %v", err, errOut, rows)
			}
			_, _, err = runCLI(t, "search", "contry:DE", d)
			if err == nil || err.Error() != "search: unknown field 'contry' at 1:1 (did you mean 'country'?)" {
				t.Errorf("bad query: %v", err)
			}
			if _, _, err := runCLI(t, "search", "port:22", "--export", file, "--format", "xml", d); err == nil {
				t.Errorf("bad format accepted")
			}
		})
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
