package vuln

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func collectOSV(t *testing.T, path string) ([]Advisory, Result) {
	t.Helper()
	var out []Advisory
	res, err := ReadOSV(path, func(a Advisory) error { out = append(out, a); return nil })
	if err != nil {
		t.Fatalf("ReadOSV(%s): %v", path, err)
	}
	return out, res
}

func TestOSVGoDir(t *testing.T) {
	advs, res := collectOSV(t, "testdata/osv/go")
	if res.Skipped != 0 || len(advs) != 62 {
		t.Fatalf("got %d advisories, %d skipped (%v); want 62, 0", len(advs), res.Skipped, res.Skips)
	}
	for _, a := range advs {
		if a.Source != "go" || !strings.HasPrefix(a.ID, "GO-") {
			t.Errorf("%s: source %q, want go", a.ID, a.Source)
		}
		if len(a.Affected) == 0 || a.Affected[0].Ecosystem != "Go" {
			t.Errorf("%s: affected %+v", a.ID, a.Affected)
		}
	}
	first := advs[0]
	want := Advisory{
		ID:        "GO-2020-0001",
		Aliases:   []string{"CVE-2020-36567", "GHSA-6vm3-jj99-7229"},
		Source:    "go",
		Published: time.Date(2021, 4, 14, 20, 4, 52, 0, time.UTC),
	}
	if first.ID != want.ID || !cmp.Equal(first.Aliases, want.Aliases) || !first.Published.Equal(want.Published) {
		t.Errorf("first advisory = %s %v %v, want %s %v %v", first.ID, first.Aliases, first.Published, want.ID, want.Aliases, want.Published)
	}
}

func TestOSVGHSA(t *testing.T) {
	advs, res := collectOSV(t, "testdata/osv/ghsa")
	if res.Skipped != 0 || len(advs) != 5 {
		t.Fatalf("got %d, skipped %v", len(advs), res.Skips)
	}
	byID := map[string]Advisory{}
	for _, a := range advs {
		byID[a.ID] = a
		if a.Source != "github" {
			t.Errorf("%s: source %q", a.ID, a.Source)
		}
	}
	tests := []struct {
		id, vector, severity, alias string
		score                       float64
	}{
		// v3.1 is preferred over v4.0 when both are present.
		{"GHSA-3f63-hfp8-52jq", "CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:H/A:H", "high", "CVE-2023-50447", 8.1},
		{"GHSA-23rx-79r7-6cpx", "CVSS:3.1/AV:L/AC:L/PR:L/UI:R/S:C/C:H/I:H/A:H", "high", "CVE-2024-23683", 8.2},
		{"GHSA-5h86-8mv2-jq9f", "CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:N/A:N", "medium", "CVE-2024-23334", 5.9},
		{"GHSA-8qpw-xqxj-h4r2", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:L/A:L", "medium", "CVE-2024-23829", 6.5},
		{"GHSA-53ph-2r2x-vqw8", "CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:U/C:H/I:H/A:H", "high", "CVE-2024-23898", 8.8},
	}
	for _, tt := range tests {
		a := byID[tt.id]
		if a.CVSSVector != tt.vector || a.Severity != tt.severity || a.CVSSScore != tt.score {
			t.Errorf("%s: vector %q score %v severity %q; want %q %v %q", tt.id, a.CVSSVector, a.CVSSScore, a.Severity, tt.vector, tt.score, tt.severity)
		}
		if len(a.Aliases) == 0 || a.Aliases[0] != tt.alias {
			t.Errorf("%s: aliases %v, want %s", tt.id, a.Aliases, tt.alias)
		}
	}
	jenkins := byID["GHSA-53ph-2r2x-vqw8"]
	if len(jenkins.Affected) != 3 || !cmp.Equal(jenkins.Affected[2].Versions, []string{"2.441"}) ||
		!cmp.Equal(jenkins.Affected[0].Ranges, []Range{{Type: "ECOSYSTEM", Events: []Event{{Introduced: "2.217"}, {Fixed: "2.426.3"}}}}) {
		t.Errorf("jenkins affected = %+v", jenkins.Affected)
	}
}

func TestOSVBadRecords(t *testing.T) {
	good, err := os.ReadFile("testdata/osv/ghsa/GHSA-23rx-79r7-6cpx.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string]string{
		"a_good.json":      string(good),
		"b_truncated.json": string(good[:len(good)/2]),
		"c_badvector.json": strings.Replace(string(good), "CVSS:3.1/AV:L", "CVSS:3.1/AV:Q", 1),
		"d_noid.json":      `{"summary":"no id"}`,
		"e_badtime.json":   `{"id":"GO-1","published":"yesterday"}`,
		"f_wrongtype.json": `{"id":"GO-2","aliases":"CVE-1"}`,
		"notes.txt":        "ignored",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	advs, res := collectOSV(t, dir)
	if len(advs) != 1 || advs[0].ID != "GHSA-23rx-79r7-6cpx" {
		t.Fatalf("got %d advisories, want only the good one", len(advs))
	}
	wantReasons := []string{"truncated JSON at line", "invalid CVSS vector", `missing "id"`, `bad "published" timestamp`, "field aliases: a string where a list belongs (line 1"}
	if res.Skipped != len(wantReasons) {
		t.Fatalf("skipped %d, want %d: %v", res.Skipped, len(wantReasons), res.Skips)
	}
	for i, want := range wantReasons {
		if !strings.Contains(res.Skips[i].Reason, want) || !strings.HasPrefix(res.Skips[i].Source, dir) {
			t.Errorf("skip %d = %v, want reason containing %q", i, res.Skips[i], want)
		}
	}
}

func TestAdvisorySource(t *testing.T) {
	tests := []struct{ id, dbs, want string }{
		{"GHSA-xxxx-yyyy-zzzz", "", "github"},
		{"GO-2024-0001", "", "go"},
		{"PYSEC-2021-1", "", "pypa"},
		{"RUSTSEC-2020-0001", "", "rustsec"},
		{"OSV-2020-111", "", "oss-fuzz"},
		{"XYZ-1", "MyDB", "mydb"},
		{"XYZ-1", "", "osv"},
	}
	for _, tt := range tests {
		if got := AdvisorySource(tt.id, tt.dbs); got != tt.want {
			t.Errorf("AdvisorySource(%q, %q) = %q, want %q", tt.id, tt.dbs, got, tt.want)
		}
	}
}

func TestJSONListsNeverNull(t *testing.T) {
	for _, v := range []any{Vulnerability{References: []Reference{{URL: "u"}}}, Advisory{Affected: []Affected{{Ranges: []Range{{}}}}}, KEVEntry{}, Exploit{}} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("null")) {
			t.Errorf("%T encodes null: %s", v, b)
		}
	}
	b, _ := json.Marshal(Vulnerability{})
	var m map[string]any
	json.Unmarshal(b, &m)
	for _, k := range []string{"cve_id", "title", "description", "published_date", "last_modified_date", "cvss_v3_score", "cvss_v3_vector", "cvss_v2_score", "cvss_v2_vector", "severity", "cwes", "cpe_ids", "epss_score", "epss_percentile", "is_exploit_available", "is_kev", "vuln_status", "source_identifier", "cisa_exploit_add", "cisa_action_due", "cisa_required_action", "references"} {
		if _, ok := m[k]; !ok {
			t.Errorf("vulnerability JSON lacks %q", k)
		}
	}
	if len(m) != 22 {
		t.Errorf("vulnerability JSON has %d fields, want the 22 of the vulnerability object (internal/api/openapi/vuln.json)", len(m))
	}
}

func readNVDFile(t *testing.T, path string) ([]Vulnerability, NVDPage, Result) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Vulnerability
	page, res, err := ReadNVD(f, path, func(v Vulnerability) error { out = append(out, v); return nil })
	if err != nil {
		t.Fatalf("ReadNVD(%s): %v", path, err)
	}
	return out, page, res
}

func TestNVDFiles(t *testing.T) {
	paths, _ := filepath.Glob("testdata/nvd/*.json")
	if len(paths) != 19 {
		t.Fatalf("found %d NVD files, want 19", len(paths))
	}
	total := 0
	for _, p := range paths {
		vs, page, res := readNVDFile(t, p)
		if res.Skipped != 0 {
			t.Errorf("%s: skipped %v", p, res.Skips)
		}
		if page.TotalResults == 0 {
			t.Errorf("%s: no totalResults in envelope", p)
		}
		for _, v := range vs {
			if v.Description == "" || v.Published.IsZero() || v.LastModified.IsZero() {
				t.Errorf("%s: %s lacks description or dates", p, v.CVEID)
			}
		}
		total += len(vs)
	}
	if total != 68 {
		t.Errorf("read %d CVEs, want 68", total)
	}
}

func TestNVDRecord(t *testing.T) {
	vs, _, _ := readNVDFile(t, "testdata/nvd/osvdev_CVE-2023-4863.json")
	if len(vs) != 1 {
		t.Fatalf("got %d", len(vs))
	}
	v := vs[0]
	if v.CVEID != "CVE-2023-4863" || !v.IsKEV || v.Title != "Google Chromium WebP Heap-Based Buffer Overflow Vulnerability" ||
		!v.CISAExploitAdd.Equal(time.Date(2023, 9, 13, 0, 0, 0, 0, time.UTC)) || !v.CISAActionDue.Equal(time.Date(2023, 10, 4, 0, 0, 0, 0, time.UTC)) ||
		!strings.HasPrefix(v.CISARequiredAction, "Apply mitigations per vendor instruction") {
		t.Errorf("KEV fields wrong: %+v", v)
	}
	if v.CVSSV3Vector != "CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:U/C:H/I:H/A:H" || v.CVSSV3Score != 8.8 || v.Severity != "high" {
		t.Errorf("cvss: %q %v %q", v.CVSSV3Vector, v.CVSSV3Score, v.Severity)
	}
	if !cmp.Equal(v.CWEs, []string{"CWE-787"}) {
		t.Errorf("cwes = %v", v.CWEs)
	}
	if len(v.CPEIDs) == 0 || !strings.HasPrefix(v.CPEIDs[0], "cpe:2.3:") || len(v.References) == 0 {
		t.Errorf("cpes %v refs %d", v.CPEIDs, len(v.References))
	}

	single, _, _ := readNVDFile(t, "testdata/nvd/vunnel_single-entry.json")
	want := Vulnerability{
		CVEID:            "CVE-2022-1576",
		SourceIdentifier: "contact@wpscan.com",
		Published:        time.Date(2022, 7, 11, 13, 15, 8, 503e6, time.UTC),
		LastModified:     time.Date(2024, 11, 21, 6, 41, 0, 133e6, time.UTC),
		VulnStatus:       "Modified",
		CVSSV3Vector:     "CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:U/C:N/I:H/A:N",
		CVSSV3Score:      6.5,
		CVSSV2Vector:     "AV:N/AC:M/Au:N/C:N/I:P/A:N",
		CVSSV2Score:      4.3,
		Severity:         "medium",
		CWEs:             []string{"CWE-352"},
	}
	got := single[0]
	got.Description, got.CPEIDs, got.References = "", nil, nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CVE-2022-1576 mismatch (-want +got):\n%s", diff)
	}
}

func TestNVDv4Severity(t *testing.T) {
	vs, _, _ := readNVDFile(t, "testdata/nvd/osvdev_conversion_test.json")
	var v Vulnerability
	for _, x := range vs {
		if x.CVEID == "CVE-2025-4565" {
			v = x
		}
	}
	// NVD spells out every optional metric as X; the vector keeps them.
	if v.CVSSV4Score != 8.2 || v.CVSSV4Vector != "CVSS:4.0/AV:N/AC:L/AT:P/PR:N/UI:N/VC:N/VI:N/VA:H/SC:N/SI:N/SA:N/E:X/CR:X/IR:X/AR:X/MAV:X/MAC:X/MAT:X/MPR:X/MUI:X/MVC:X/MVI:X/MVA:X/MSC:X/MSI:X/MSA:X/S:X/AU:X/R:X/V:X/RE:X/U:X" {
		t.Errorf("v4 = %q %v", v.CVSSV4Vector, v.CVSSV4Score)
	}
	// v3.1 (5.3, medium) is preferred over v4.0 (8.2, high) for severity.
	if v.CVSSV3Score != 5.3 || v.Severity != "medium" {
		t.Errorf("v3.1 should set severity: %q %v %q", v.CVSSV3Vector, v.CVSSV3Score, v.Severity)
	}
}

func TestNVDGzipAndBadInput(t *testing.T) {
	raw, err := os.ReadFile("testdata/nvd/vunnel_full-page.json")
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw)
	zw.Close()
	n := 0
	_, res, err := ReadNVD(bytes.NewReader(gz.Bytes()), "page.json.gz", func(Vulnerability) error { n++; return nil })
	if err != nil || n != 38 || res.Records != 38 {
		t.Fatalf("gzip: n=%d res=%+v err=%v", n, res, err)
	}

	// Corrupt gzip: valid header, garbage body.
	bad := append([]byte{}, gz.Bytes()[:20]...)
	bad = append(bad, bytes.Repeat([]byte{0xff}, 100)...)
	if _, _, err := ReadNVD(bytes.NewReader(bad), "bad.json.gz", func(Vulnerability) error { return nil }); err == nil {
		t.Error("corrupt gzip: want error")
	}

	// Truncated JSON: the records before the cut are delivered, then an error.
	n = 0
	_, res, err = ReadNVD(bytes.NewReader(raw[:len(raw)/2]), "cut.json", func(Vulnerability) error { n++; return nil })
	if err == nil || !strings.Contains(err.Error(), "cut.json at byte") {
		t.Errorf("truncated: err = %v", err)
	}
	if n == 0 || n >= 38 {
		t.Errorf("truncated: delivered %d records before the cut", n)
	}

	// Bad records are skipped with position and reason; the rest continue.
	doc := `{"totalResults":4,"vulnerabilities":[
		{"cve":{"id":"CVE-2024-0001","published":"2024-01-01T00:00:00.000","lastModified":"2024-01-02T00:00:00.000",
		        "metrics":{"cvssMetricV31":[{"type":"Primary","cvssData":{"vectorString":"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:Z","baseScore":9.8}}]}}},
		{"cve":{"id":"not-a-cve"}},
		{"cve":{"id":"CVE-2024-0003","published":12}},
		{"cve":{"id":"CVE-2024-0004","published":"2024-01-01T00:00:00.000","metrics":{"cvssMetricV2":[{"type":"Primary","cvssData":{"vectorString":"AV:N/AC:L/Au:N/C:P/I:P/A:P"}}]}}}
	]}`
	var got []Vulnerability
	page, res, err := ReadNVD(strings.NewReader(doc), "doc.json", func(v Vulnerability) error { got = append(got, v); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if page.TotalResults != 4 || len(got) != 1 || got[0].CVEID != "CVE-2024-0004" || got[0].CVSSV2Score != 7.5 || got[0].Severity != "high" {
		t.Errorf("got %+v", got)
	}
	wantSkips := []struct{ pos, reason string }{
		{"vulnerabilities[0]", "invalid CVSS vector"},
		{"vulnerabilities[1]", "bad CVE id"},
		{"vulnerabilities[2]", "field cve.published: a number where a string belongs"},
	}
	if len(res.Skips) != len(wantSkips) {
		t.Fatalf("skips = %v", res.Skips)
	}
	for i, w := range wantSkips {
		s := res.Skips[i]
		if !strings.HasPrefix(s.Pos, w.pos) || !strings.Contains(s.Reason, w.reason) || s.Source != "doc.json" {
			t.Errorf("skip %d = %v, want %s / %s", i, s, w.pos, w.reason)
		}
	}

	if _, _, err := ReadNVD(strings.NewReader(`{"CVE_data_type":"CVE","CVE_Items":[]}`), "feed-1.1.json", func(Vulnerability) error { return nil }); err == nil || !strings.Contains(err.Error(), "1.1") {
		t.Errorf("1.1 feed: err = %v, want a clear refusal", err)
	}

	stop := errors.New("stop")
	if _, _, err := ReadNVD(bytes.NewReader(raw), "x", func(Vulnerability) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("callback error not returned: %v", err)
	}
}

func TestKEV(t *testing.T) {
	f, err := os.Open("testdata/kev/known_exploited_vulnerabilities.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var entries []KEVEntry
	cat, res, err := ReadKEV(f, "kev.json", func(e KEVEntry) error { entries = append(entries, e); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if cat.CatalogVersion != "2025.08.25" || cat.Count != 1404 || len(entries) != 1404 || res.Skipped != 0 {
		t.Fatalf("catalog %+v, %d entries, skips %v", cat, len(entries), res.Skips)
	}
	e := entries[0]
	if e.CVEID != "CVE-2025-48384" || e.VendorProject != "Git" || !e.DateAdded.Equal(time.Date(2025, 8, 25, 0, 0, 0, 0, time.UTC)) ||
		!e.DueDate.Equal(time.Date(2025, 9, 15, 0, 0, 0, 0, time.UTC)) || e.KnownRansomwareCampaignUse != "Unknown" {
		t.Errorf("first entry = %+v", e)
	}

	bad := `{"catalogVersion":"x","vulnerabilities":[{"cveID":"CVE-2020-0001","dateAdded":"2020-13-01"},{"cveID":"CVE-2020-0002","dateAdded":"2020-01-01"},{"cveID":"nope","dateAdded":"2020-01-01"}]}`
	entries = nil
	_, res, err = ReadKEV(strings.NewReader(bad), "bad.json", func(e KEVEntry) error { entries = append(entries, e); return nil })
	if err != nil || len(entries) != 1 || res.Skipped != 2 || !strings.Contains(res.Skips[0].Reason, "dateAdded") || res.Skips[1].Pos[:18] != "vulnerabilities[2]" {
		t.Errorf("bad kev: entries %v skips %v err %v", entries, res.Skips, err)
	}
	if _, _, err := ReadKEV(strings.NewReader(bad[:60]), "cut.json", func(KEVEntry) error { return nil }); err == nil {
		t.Error("truncated kev: want error")
	}
}

// TestKEVCSV reads CISA's CSV form of the catalog: every entry equals the
// JSON form's.
func TestKEVCSV(t *testing.T) {
	read := func(path string) []KEVEntry {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var entries []KEVEntry
		_, res, err := ReadKEV(f, path, func(e KEVEntry) error { entries = append(entries, e); return nil })
		if err != nil || res.Skipped != 0 {
			t.Fatalf("%s: %v, skips %v", path, err, res.Skips)
		}
		return entries
	}
	fromJSON := read("testdata/kev/known_exploited_vulnerabilities.json")
	fromCSV := read("testdata/kev/known_exploited_vulnerabilities.csv.gz")
	if len(fromCSV) != 1404 {
		t.Fatalf("csv: %d entries, want 1404", len(fromCSV))
	}
	if d := cmp.Diff(fromJSON, fromCSV, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("csv entries differ from json (-json +csv):\n%.2000s", d)
	}
	bad := "cveID,dateAdded,cwes\nCVE-2020-0001,2020-13-01,\nnope,2020-01-01,\nCVE-2020-0002,2020-01-01,\"CWE-79, CWE-89\"\n"
	var entries []KEVEntry
	_, res, err := ReadKEV(strings.NewReader(bad), "bad.csv", func(e KEVEntry) error { entries = append(entries, e); return nil })
	if err != nil || len(entries) != 1 || res.Skipped != 2 || res.Skips[0].Pos != "line 2" || !strings.Contains(res.Skips[1].Reason, "bad CVE id") ||
		len(entries[0].CWEs) != 2 || entries[0].CWEs[1] != "CWE-89" {
		t.Errorf("bad csv: entries %+v skips %v err %v", entries, res.Skips, err)
	}
	if _, _, err := ReadKEV(strings.NewReader("id,name\n1,x\n"), "other.csv", func(KEVEntry) error { return nil }); err == nil || !strings.Contains(err.Error(), "cveid") {
		t.Errorf("csv without cveID: %v", err)
	}
}

func TestEPSS(t *testing.T) {
	raw, err := os.ReadFile("testdata/epss/vunnel_epss_scores_2025-02-20_first5rows.csv")
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw)
	zw.Close()
	for name, data := range map[string][]byte{"plain.csv": raw, "scores.csv.gz": gz.Bytes()} {
		var got []EPSSScore
		res, err := ReadEPSS(bytes.NewReader(data), name, func(s EPSSScore) error { got = append(got, s); return nil })
		if err != nil || res.Skipped != 0 || len(got) != 5 {
			t.Fatalf("%s: %d scores, res %+v, err %v", name, len(got), res, err)
		}
		date := time.Date(2025, 2, 20, 0, 0, 0, 0, time.UTC)
		want := EPSSScore{CVEID: "CVE-1999-0005", EPSS: 0.91963, Percentile: 0.99214, ModelVersion: "v2023.03.01", ScoreDate: date}
		if diff := cmp.Diff(want, got[4]); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", name, diff)
		}
	}

	bad := "#model_version:v1,score_date:2025-02-20T00:00:00+0000\ncve,epss,percentile\nCVE-2020-0001,0.5,0.9\nCVE-2020-0002,abc,0.1\nCVE-2020-0003,1.5,0.1\nCVE-2020-0004,0.1\nCVE-2020-0005,0.2,0.3\n"
	var got []EPSSScore
	res, err := ReadEPSS(strings.NewReader(bad), "bad.csv", func(s EPSSScore) error { got = append(got, s); return nil })
	if err != nil || len(got) != 2 || res.Skipped != 3 {
		t.Fatalf("got %v skips %v err %v", got, res.Skips, err)
	}
	if res.Skips[0].Pos != "line 4" || res.Skips[2].Pos != "line 6" {
		t.Errorf("skip positions = %v", res.Skips)
	}

	// Missing columns: the whole file is refused with a clear reason.
	_, err = ReadEPSS(strings.NewReader("cve,score\nCVE-2020-0001,0.5\n"), "nocol.csv", func(EPSSScore) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "epss, percentile") {
		t.Errorf("missing columns: err = %v", err)
	}
	if _, err := ReadEPSS(bytes.NewReader(append([]byte{0x1f, 0x8b}, []byte("garbage")...)), "bad.csv.gz", func(EPSSScore) error { return nil }); err == nil {
		t.Error("corrupt gzip: want error")
	}
}

func TestExploitDB(t *testing.T) {
	f, err := os.Open("testdata/exploitdb/files_exploits_sample.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []Exploit
	res, err := ReadExploitDB(f, "files_exploits_sample.csv", func(e Exploit) error { got = append(got, e); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || res.Skipped != 2 {
		t.Fatalf("got %d exploits, skips %v", len(got), res.Skips)
	}
	want := Exploit{
		EDBID:         50592,
		CVEID:         "CVE-2021-44228",
		CVEIDs:        []string{"CVE-2021-44228", "CVE-2021-45046"},
		Title:         "Apache Log4j 2 - Remote Code Execution (RCE)",
		Author:        "kozmer",
		Type:          "remote",
		Platform:      "java",
		DatePublished: time.Date(2021, 12, 14, 0, 0, 0, 0, time.UTC),
		DateAdded:     time.Date(2021, 12, 14, 0, 0, 0, 0, time.UTC),
		DateUpdated:   time.Date(2021, 12, 15, 0, 0, 0, 0, time.UTC),
		Verified:      true,
		Codes:         "CVE-2021-44228;CVE-2021-45046",
		SourceURL:     "https://github.com/kozmer/log4j-shell-poc",
		File:          "exploits/java/remote/50592.py",
	}
	if diff := cmp.Diff(want, got[0]); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if !strings.Contains(res.Skips[0].Reason, "bad id") || !strings.Contains(res.Skips[1].Reason, "bad date_published") {
		t.Errorf("skips = %v", res.Skips)
	}

	legacy := "id,file,description,date,author,platform,type,port\n1,platforms/windows/remote/1.c,\"MS Windows WebDAV - (ntdll.dll) Remote Exploit\",2003-03-23,kralor,windows,remote,80\n"
	got = nil
	res, err = ReadExploitDB(strings.NewReader(legacy), "files.csv", func(e Exploit) error { got = append(got, e); return nil })
	if err != nil || len(got) != 1 || got[0].Port != 80 || got[0].Platform != "windows" || got[0].Type != "remote" ||
		!got[0].DateAdded.Equal(time.Date(2003, 3, 23, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("legacy: %+v %v %v", got, res, err)
	}

	_, err = ReadExploitDB(strings.NewReader("id,title\n1,x\n"), "x.csv", func(Exploit) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "file, description") {
		t.Errorf("missing columns: err = %v", err)
	}
}

// TestSharedExploitDB runs the parser over real Exploit-DB indexes, in both
// of their layouts: the first 2,000 rows of the legacy files.csv and the
// whole shellcode index (GPL-2.0, kept apart from the embedded samples in
// testdata/exploitdb-gpl with the licence; testdata/README.md).
func TestSharedExploitDB(t *testing.T) {
	for _, tt := range []struct {
		path string
		rows int
	}{
		{"testdata/exploitdb-gpl/files_legacy_2014-05-27_first2000.csv", 2000},
		{"testdata/exploitdb-gpl/files_shellcodes_2023-09-09.csv", 1061},
	} {
		f, err := os.Open(tt.path)
		if err != nil {
			t.Fatal(err)
		}
		res, err := ReadExploitDB(f, tt.path, func(Exploit) error { return nil })
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if res.Records+res.Skipped != tt.rows || res.Skipped > tt.rows/100 {
			t.Errorf("%s: %d records, %d skipped (%v); want %d rows", tt.path, res.Records, res.Skipped, res.Skips[:min(5, len(res.Skips))], tt.rows)
		}
		t.Logf("%s: %d records, %d skipped", tt.path, res.Records, res.Skipped)
	}
}
