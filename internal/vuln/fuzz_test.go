package vuln

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func addFileSeeds(f *testing.F, pattern string, limit int) {
	paths, _ := filepath.Glob(pattern)
	for i, p := range paths {
		if i >= limit {
			break
		}
		b, err := os.ReadFile(p)
		if err == nil && len(b) < 64<<10 {
			f.Add(b)
		}
	}
}

func FuzzParseOSV(f *testing.F) {
	addFileSeeds(f, "testdata/osv/ghsa/*.json", 5)
	addFileSeeds(f, "testdata/osv/go/*.json", 5)
	f.Add([]byte(`{"id":"X-1","severity":[{"type":"CVSS_V4","score":"CVSS:4.0/AV:N"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ParseOSV(bytes.NewReader(data))
		if err != nil {
			return
		}
		if a.ID == "" {
			t.Fatal("accepted a record without id")
		}
		if _, err := json.Marshal(a); err != nil {
			t.Fatalf("cannot encode parsed advisory: %v", err)
		}
	})
}

func FuzzReadNVD(f *testing.F) {
	addFileSeeds(f, "testdata/nvd/osvdev_CVE-*.json", 4)
	f.Add([]byte(`{"vulnerabilities":[{"cve":{"id":"CVE-2020-0001"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, res, _ := ReadNVD(bytes.NewReader(data), "fuzz", func(v Vulnerability) error {
			if !cveIDPattern.MatchString(v.CVEID) {
				t.Fatalf("delivered bad id %q", v.CVEID)
			}
			return nil
		})
		if res.Skipped < len(res.Skips) {
			t.Fatal("skip count below kept skips")
		}
	})
}

func FuzzReadKEV(f *testing.F) {
	f.Add([]byte(`{"catalogVersion":"1","vulnerabilities":[{"cveID":"CVE-2020-0001","dateAdded":"2020-01-01","dueDate":"2020-02-01"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ReadKEV(bytes.NewReader(data), "fuzz", func(e KEVEntry) error {
			if e.DateAdded.IsZero() {
				t.Fatal("delivered entry without dateAdded")
			}
			return nil
		})
	})
}

func FuzzReadEPSS(f *testing.F) {
	addFileSeeds(f, "testdata/epss/*.csv", 1)
	f.Add([]byte("cve,epss,percentile\nCVE-2020-0001,0.1,0.2\n\"unterminated"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ReadEPSS(bytes.NewReader(data), "fuzz", func(s EPSSScore) error {
			if s.EPSS < 0 || s.EPSS > 1 || s.Percentile < 0 || s.Percentile > 1 {
				t.Fatalf("delivered out-of-range score %+v", s)
			}
			return nil
		})
	})
}

func FuzzReadExploitDB(f *testing.F) {
	addFileSeeds(f, "testdata/exploitdb/*.csv", 1)
	f.Add([]byte("id,file,description,date\n1,a,b,2020-01-01\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ReadExploitDB(bytes.NewReader(data), "fuzz", func(e Exploit) error {
			if e.EDBID <= 0 || (e.CVEID != "" && !strings.HasPrefix(e.CVEID, "CVE-")) {
				t.Fatalf("delivered bad exploit %+v", e)
			}
			return nil
		})
	})
}

// FuzzCanonicalID checks that a recognised id is canonical: recognised
// again as itself, and a CVE exactly when IsCVE says so.
func FuzzCanonicalID(f *testing.F) {
	for _, s := range []string{"CVE-2021-44228", "cve-2024-3094", "GHSA-5H86-8mv2-jq9f", "go-2022-0001", "PYSEC-2021-19", "openSUSE-SU-2024:1234-1", "GHSA-", "CVE-21-1", "log4j"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, ok := CanonicalID(s)
		if !ok {
			return
		}
		again, ok2 := CanonicalID(id)
		if !ok2 || again != id {
			t.Fatalf("CanonicalID(%q) = %q, then %q %v", s, id, again, ok2)
		}
		if strings.TrimSpace(id) != id || id == "" {
			t.Fatalf("CanonicalID(%q) = %q", s, id)
		}
	})
}
