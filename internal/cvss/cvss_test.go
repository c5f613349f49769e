package cvss

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNVDScores checks every distinct v2, v3.0, v3.1 and v4.0 vector found
// in the recorded NVD files (testdata/nvd_scores.tsv, extracted from the
// API 2.0 responses and 1.1 feeds listed in testdata/README.md) against the
// baseScore NVD published with it.
func TestNVDScores(t *testing.T) {
	f, err := os.Open("testdata/nvd_scores.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for line := 1; sc.Scan(); line++ {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) < 2 {
			t.Fatalf("nvd_scores.tsv:%d: want vector<TAB>score", line)
		}
		want, err := strconv.ParseFloat(fields[1], 64)
		if err != nil {
			t.Fatalf("nvd_scores.tsv:%d: %v", line, err)
		}
		checkScore(t, fields[0], want)
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 190 {
		t.Fatalf("checked %d vectors, want the full recorded set (>= 190)", n)
	}
}

func checkScore(t *testing.T, vector string, want float64) {
	t.Helper()
	v, err := Parse(vector)
	if err != nil {
		t.Errorf("Parse(%q): %v", vector, err)
		return
	}
	if got := v.BaseScore(); got != want {
		t.Errorf("Parse(%q).BaseScore() = %v, want %v", vector, got, want)
	}
}

// TestSharedNVDFiles checks every record (not only distinct vectors) of the
// real NVD files in the repository: the API 2.0 responses of
// ../vuln/testdata/nvd and the first 100 records of each NVD 1.1 feed file
// in testdata/nvd (testdata/README.md).
func TestSharedNVDFiles(t *testing.T) {
	type cvssData struct {
		VectorString string  `json:"vectorString"`
		BaseScore    float64 `json:"baseScore"`
	}
	var doc struct {
		Vulnerabilities []struct {
			CVE struct {
				Metrics map[string][]struct {
					CVSSData *cvssData `json:"cvssData"`
				} `json:"metrics"`
			} `json:"cve"`
		} `json:"vulnerabilities"`
		Items []struct {
			Impact struct {
				V3 *struct {
					CVSS cvssData `json:"cvssV3"`
				} `json:"baseMetricV3"`
				V2 *struct {
					CVSS cvssData `json:"cvssV2"`
				} `json:"baseMetricV2"`
			} `json:"impact"`
		} `json:"CVE_Items"`
	}
	n := 0
	for _, dir := range []string{"../vuln/testdata/nvd", "testdata/nvd"} {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			doc.Vulnerabilities, doc.Items = nil, nil
			if err := json.Unmarshal(b, &doc); err != nil {
				return err
			}
			for _, v := range doc.Vulnerabilities {
				for _, ms := range v.CVE.Metrics {
					for _, m := range ms {
						if m.CVSSData != nil {
							checkScore(t, m.CVSSData.VectorString, m.CVSSData.BaseScore)
							n++
						}
					}
				}
			}
			for _, it := range doc.Items {
				if it.Impact.V3 != nil {
					checkScore(t, it.Impact.V3.CVSS.VectorString, it.Impact.V3.CVSS.BaseScore)
					n++
				}
				if it.Impact.V2 != nil {
					checkScore(t, it.Impact.V2.CVSS.VectorString, it.Impact.V2.CVSS.BaseScore)
					n++
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n < 300 {
		t.Errorf("checked only %d NVD vector/score pairs", n)
	}
	t.Logf("checked %d NVD vector/score pairs", n)
}

// TestV4Examples checks CVSS v4.0 vectors with the scores published in the
// FIRST CVSS v4.0 examples document and reference calculator.
func TestV4Examples(t *testing.T) {
	tests := []struct {
		vector string
		want   float64
	}{
		{"CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:H/SI:H/SA:H", 10.0},
		{"CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:N/VI:N/VA:N/SC:N/SI:N/SA:N", 0.0},
		{"CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N", 9.3},
		{"CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:N/VI:N/VA:N/SC:H/SI:H/SA:H", 7.9},
		{"CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:H/SI:H/SA:H/E:U", 9.1},
		{"CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:H/SI:H/SA:H/MVI:L/MSA:S", 9.8},
		{"CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:L/VI:L/VA:L/SC:N/SI:N/SA:N", 6.9},
		{"CVSS:4.0/AV:L/AC:L/AT:P/PR:L/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N", 7.3},
		{"CVSS:4.0/AV:N/AC:L/AT:P/PR:N/UI:P/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N", 7.7},
		{"CVSS:4.0/AV:N/AC:L/AT:P/PR:N/UI:P/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N/E:U", 5.2},
		{"CVSS:4.0/AV:N/AC:L/AT:P/PR:N/UI:N/VC:H/VI:L/VA:L/SC:N/SI:N/SA:N", 8.3},
		{"CVSS:4.0/AV:N/AC:L/AT:P/PR:N/UI:N/VC:H/VI:L/VA:L/SC:N/SI:N/SA:N/CR:H/IR:L/AR:L/MAV:N/MAC:H/MVC:H/MVI:L/MVA:L", 8.1},
		{"CVSS:4.0/AV:L/AC:L/AT:N/PR:N/UI:A/VC:L/VI:N/VA:N/SC:N/SI:N/SA:N", 4.6},
		{"CVSS:4.0/AV:N/AC:L/AT:N/PR:L/UI:N/VC:N/VI:L/VA:N/SC:N/SI:N/SA:N", 5.3},
		{"CVSS:4.0/AV:N/AC:L/AT:N/PR:L/UI:N/VC:L/VI:L/VA:L/SC:N/SI:N/SA:N/E:X", 5.3},
		// From NVD (CVE-2024-47177), every optional metric spelled out as X.
		{"CVSS:4.0/AV:N/AC:L/AT:P/PR:N/UI:N/VC:N/VI:N/VA:H/SC:N/SI:N/SA:N/E:X/CR:X/IR:X/AR:X/MAV:X/MAC:X/MAT:X/MPR:X/MUI:X/MVC:X/MVI:X/MVA:X/MSC:X/MSI:X/MSA:X/S:X/AU:X/R:X/V:X/RE:X/U:X", 8.2},
	}
	for _, tt := range tests {
		checkScore(t, tt.vector, tt.want)
	}
}

func TestV3AndV2Known(t *testing.T) {
	tests := []struct {
		vector string
		want   float64
	}{
		{"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", 9.8},
		{"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H", 10.0},
		{"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:N", 0.0},
		{"CVSS:3.1/AV:P/AC:H/PR:H/UI:R/S:U/C:L/I:N/A:N", 1.6},
		// Metric order is free in v3; temporal metrics do not change the base score.
		{"CVSS:3.1/A:H/I:H/C:H/S:U/UI:N/PR:N/AC:L/AV:N/E:U/RL:O", 9.8},
		{"AV:N/AC:L/Au:N/C:C/I:C/A:C", 10.0},
		{"(AV:N/AC:L/Au:N/C:P/I:P/A:P)", 7.5},
		{"AV:L/AC:H/Au:M/C:N/I:N/A:N", 0.0},
		{"CVSS:2.0/AV:N/AC:M/Au:N/C:P/I:N/A:N", 4.3},
	}
	for _, tt := range tests {
		checkScore(t, tt.vector, tt.want)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		vector string
		want   error
	}{
		{"", ErrEmpty},
		{"   ", ErrEmpty},
		{"CVSS:3.2/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", ErrBadPrefix},
		{"CVSS:5.0/AV:N", ErrBadPrefix},
		{"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H/ZZ:H", ErrUnknownMetric},
		{"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H/Au:N", ErrUnknownMetric},
		{"CVSS:3.1/AV:N/AV:L/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", ErrDuplicateMetric},
		{"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H", ErrMissingMetric},
		{"CVSS:3.1/AV:X/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", ErrBadValue},
		{"CVSS:3.1/AV:n/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", ErrBadValue},
		{"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H/", ErrMalformed},
		{"CVSS:3.1/AV:N//AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", ErrMalformed},
		{"CVSS:3.1/AVN/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", ErrMalformed},
		{"AV:N/AC:L/Au:N/C:P/I:P", ErrMissingMetric},
		{"AV:N/AC:L/Au:N/C:P/I:P/A:P/E:X", ErrBadValue},
		{"CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N", ErrMissingMetric},
		{"CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:S/SA:N", ErrBadValue},
		{"CVSS:4.0/AV:N/AC:L/PR:N/UI:N/C:H/I:H/A:H", ErrUnknownMetric},
		{"not a vector", ErrMalformed},
	}
	for _, tt := range tests {
		_, err := Parse(tt.vector)
		if !errors.Is(err, tt.want) {
			t.Errorf("Parse(%q) error = %v, want %v", tt.vector, err, tt.want)
		}
	}
}

func TestVersionMetricString(t *testing.T) {
	tests := []struct {
		in      string
		version Version
		canon   string
	}{
		{"CVSS:3.1/C:H/AV:N/AC:L/PR:N/UI:N/S:U/I:H/A:H", V31, "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"},
		{"CVSS:3.0/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", V30, "CVSS:3.0/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"},
		{" (AV:N/AC:L/Au:N/C:P/I:P/A:P) ", V2, "AV:N/AC:L/Au:N/C:P/I:P/A:P"},
		{"CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N/U:Amber", V40, "CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N/U:Amber"},
	}
	for _, tt := range tests {
		v, err := Parse(tt.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.in, err)
		}
		if v.Version() != tt.version {
			t.Errorf("Parse(%q).Version() = %v, want %v", tt.in, v.Version(), tt.version)
		}
		if got := v.String(); got != tt.canon {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.in, got, tt.canon)
		}
		if av, ok := v.Metric("AV"); !ok || av != "N" {
			t.Errorf("Parse(%q).Metric(AV) = %q, %v", tt.in, av, ok)
		}
	}
	var zero Vector
	if zero.BaseScore() != 0 || zero.String() != "" || zero.Version() != 0 {
		t.Error("zero Vector should score 0 and print empty")
	}
}

func TestSeverity(t *testing.T) {
	tests := []struct {
		score float64
		want  string
	}{
		{0, "none"}, {0.1, "low"}, {3.9, "low"}, {4.0, "medium"}, {6.9, "medium"},
		{7.0, "high"}, {8.9, "high"}, {9.0, "critical"}, {10, "critical"}, {-1, "none"},
	}
	for _, tt := range tests {
		if got := Severity(tt.score); got != tt.want {
			t.Errorf("Severity(%v) = %q, want %q", tt.score, got, tt.want)
		}
	}
	v2, _ := Parse("AV:N/AC:L/Au:N/C:C/I:C/A:C")
	if got := v2.Severity(); got != "high" {
		t.Errorf("v2 10.0 severity = %q, want high (v2 has no critical)", got)
	}
	v31, _ := Parse("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H")
	if got := v31.Severity(); got != "critical" {
		t.Errorf("v3.1 9.8 severity = %q, want critical", got)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H",
		"CVSS:3.0/AV:L/AC:H/PR:H/UI:N/S:C/C:L/I:L/A:L",
		"AV:N/AC:L/Au:N/C:P/I:P/A:P",
		"CVSS:4.0/AV:N/AC:L/AT:P/PR:N/UI:N/VC:N/VI:N/VA:H/SC:N/SI:N/SA:N/E:U/MSI:S",
		"CVSS:4.0/AV:P/AC:H/AT:P/PR:H/UI:A/VC:L/VI:N/VA:N/SC:L/SI:L/SA:N/CR:L/IR:M",
		"", "CVSS:", "//", "AV:",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Parse(s)
		if err != nil {
			return
		}
		score := v.BaseScore()
		if score < 0 || score > 10 || score != score {
			t.Fatalf("Parse(%q).BaseScore() = %v, out of range", s, score)
		}
		again, err := Parse(v.String())
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", v.String(), s, err)
		}
		if again.BaseScore() != score {
			t.Fatalf("canonical form %q scores %v, original %q scores %v", v.String(), again.BaseScore(), s, score)
		}
	})
}

var benchVectors = []string{
	"AV:N/AC:L/Au:N/C:P/I:P/A:P",
	"CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N",
	"CVSS:4.0/AV:N/AC:L/AT:P/PR:N/UI:N/VC:H/VI:L/VA:L/SC:N/SI:N/SA:N/CR:H/IR:L/AR:L/MAV:N/MAC:H/MVC:H/MVI:L/MVA:L",
}

func BenchmarkParseAndScore(b *testing.B) {
	for _, s := range benchVectors {
		name := s[:8]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				v, err := Parse(s)
				if err != nil {
					b.Fatal(err)
				}
				_ = v.BaseScore()
			}
		})
	}
}
