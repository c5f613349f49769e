package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/vuln"
	"github.com/periscope-oss/periscope/internal/vulningest"
	"github.com/periscope-oss/periscope/internal/vulnstore"
)

const vulnTestdata = "../vuln/testdata/"

// seedVulns loads every recorded feed sample, plus one vulnerability, one
// exploit and one advisory published two days before the test clock.
func seedVulns(t *testing.T, e *apitest.Env) {
	t.Helper()
	ctx := context.Background()
	in := &vulningest.Ingester{Store: e.Vulns}
	files, _ := filepath.Glob(vulnTestdata + "nvd/*.json")
	for _, f := range files {
		if _, err := in.IngestPath(ctx, vulningest.NVD, f, nil); err != nil {
			t.Fatal(err)
		}
	}
	for kind, p := range map[string]string{
		vulningest.KEV: "kev/known_exploited_vulnerabilities.json", vulningest.EPSS: "epss/vunnel_epss_scores_2025-02-20_first5rows.csv",
		vulningest.ExploitDB: "exploitdb/files_exploits_sample.csv",
	} {
		if _, err := in.IngestPath(ctx, kind, vulnTestdata+p, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"osv/go", "osv/ghsa"} {
		if _, err := in.IngestPath(ctx, vulningest.OSV, vulnTestdata+d, nil); err != nil {
			t.Fatal(err)
		}
	}
	recent := e.Clock.Now().Add(-48 * time.Hour)
	if _, err := e.Vulns.UpsertEPSS(ctx, []vuln.EPSSScore{{CVEID: "CVE-2023-4863", EPSS: 0.5, Percentile: 0.97, ScoreDate: recent}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Vulns.UpsertVulns(ctx, []vuln.Vulnerability{{CVEID: "CVE-2026-99999", Description: "Heap overflow in the quokka parser", Published: recent, LastModified: recent,
		CVSSV3Score: 9.8, CVSSV3Vector: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", Severity: "critical"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Vulns.UpsertExploits(ctx, []vuln.Exploit{{EDBID: 99999, CVEID: "CVE-2026-99999", CVEIDs: []string{"CVE-2026-99999"}, Title: "Quokka parser RCE", DateAdded: recent}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Vulns.UpsertAdvisories(ctx, []vuln.Advisory{{ID: "GHSA-qqqq-wwww-eeee", Aliases: []string{"CVE-2026-99999"}, Source: "github", Summary: "Quokka heap overflow",
		Severity: "critical", Published: recent, Modified: recent, Affected: []vuln.Affected{{Ecosystem: "PyPI", Name: "quokka"}}}}); err != nil {
		t.Fatal(err)
	}
}

type feedResult struct {
	Status   int    `json:"status"`
	Message  string `json:"message"`
	Metadata struct {
		TotalResults         int      `json:"total_results"`
		TotalVulnerabilities int      `json:"total_vulnerabilities"`
		TotalExploits        int      `json:"total_exploits"`
		TotalAdvisories      int      `json:"total_advisories"`
		Page                 int      `json:"page"`
		PerPage              int      `json:"per_page"`
		Days                 int      `json:"days"`
		CutoffEpoch          int64    `json:"cutoff_epoch"`
		Type                 string   `json:"type"`
		Keywords             []string `json:"keywords"`
		Severity             *string  `json:"severity"`
		KEV                  *bool    `json:"kev"`
		ExploitAvailable     *bool    `json:"exploit_available"`
	} `json:"metadata"`
	Vulnerabilities []struct {
		CVEID              string   `json:"cve_id"`
		Title              string   `json:"title"`
		PublishedDate      int64    `json:"published_date"`
		Severity           string   `json:"severity"`
		IsKEV              bool     `json:"is_kev"`
		IsExploitAvailable bool     `json:"is_exploit_available"`
		EPSSScore          float64  `json:"epss_score"`
		CISAExploitAdd     int64    `json:"cisa_exploit_add"`
		CVSSV3Score        float64  `json:"cvss_v3_score"`
		CPEIDs             []string `json:"cpe_ids"`
		Advisories         []string `json:"advisories"`
	} `json:"vulnerabilities"`
	Exploits []struct {
		EDBID int    `json:"edb_id"`
		CVEID string `json:"cve_id"`
	} `json:"exploits"`
	Advisories []struct {
		ID       string   `json:"id"`
		Aliases  []string `json:"aliases"`
		Severity string   `json:"severity"`
	} `json:"advisories"`
}

func TestVulnFeed(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		seedVulns(t, e)
		_, key := e.Account(periscope.Account{Company: "Feed Co", Plan: "free", CreditsPerMonth: 1000, MaxResultsPerRequest: 500})
		get := func(q string) feedResult {
			t.Helper()
			r := e.Do("GET", "/api/v1/vulnerability-intelligence/feed?"+q, key, nil)
			if r.Status != 200 {
				t.Fatalf("%s: %d %s", q, r.Status, r.Body)
			}
			if strings.Contains(string(r.Body), "null") {
				t.Errorf("%s: null in %s", q, r.Body)
			}
			var f feedResult
			if err := strictDecode(r.Body, &f); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			return f
		}
		// max_results_per_request caps the whole response: shared by the
		// three lists of type=all.
		_, small := e.Account(periscope.Account{Company: "Small Co", Plan: "free", CreditsPerMonth: 10, MaxResultsPerRequest: 6})
		for q, want := range map[string]int{"days=7&per_page=100": 2, "days=7&per_page=100&type=vulnerabilities": 6} {
			var f feedResult
			r := e.Do("GET", "/api/v1/vulnerability-intelligence/feed?"+q, small, nil)
			if err := strictDecode(r.Body, &f); err != nil || r.Status != 200 {
				t.Fatalf("%s: %d %v", q, r.Status, err)
			}
			if n := len(f.Vulnerabilities) + len(f.Exploits) + len(f.Advisories); f.Metadata.PerPage != want || n > 6 {
				t.Errorf("%s with a cap of 6: per_page %d (want %d), %d items", q, f.Metadata.PerPage, want, n)
			}
		}
		// A cap below three: the lists take their items in order while it
		// lasts, so the response never holds more than the cap.
		_, tiny := e.Account(periscope.Account{Company: "Tiny Co", Plan: "free", CreditsPerMonth: 10, MaxResultsPerRequest: 2})
		var tf feedResult
		if r := e.Do("GET", "/api/v1/vulnerability-intelligence/feed?days=7", tiny, nil); r.Status != 200 || strictDecode(r.Body, &tf) != nil ||
			len(tf.Vulnerabilities) != 1 || len(tf.Exploits) != 1 || len(tf.Advisories) != 0 || tf.Metadata.TotalAdvisories != 1 {
			t.Errorf("type=all with a cap of 2: %d %d/%d/%d items, %+v", r.Status, len(tf.Vulnerabilities), len(tf.Exploits), len(tf.Advisories), tf.Metadata)
		}
		// Default window: one day; the recent items are two days old.
		f := get("")
		if f.Metadata.Days != 1 || f.Metadata.PerPage != 20 || f.Metadata.Page != 1 || f.Metadata.Type != "all" || f.Metadata.TotalResults != 0 ||
			f.Metadata.CutoffEpoch != e.Clock.Now().Add(-24*time.Hour).Unix() || f.Metadata.Severity != nil {
			t.Errorf("default feed metadata %+v", f.Metadata)
		}
		f = get("days=3")
		if f.Metadata.TotalVulnerabilities != 1 || f.Metadata.TotalExploits != 1 || f.Metadata.TotalAdvisories != 1 || f.Metadata.TotalResults != 3 {
			t.Fatalf("3-day feed %+v", f.Metadata)
		}
		v := f.Vulnerabilities[0]
		if v.CVEID != "CVE-2026-99999" || !v.IsExploitAvailable || v.Severity != "critical" || len(v.Advisories) != 1 {
			t.Errorf("recent vulnerability %+v", v)
		}
		if f = get("days=3&type=exploits"); len(f.Vulnerabilities)+len(f.Advisories) != 0 || len(f.Exploits) != 1 || f.Metadata.Type != "exploits" {
			t.Errorf("type=exploits %+v", f)
		}
		if f = get("days=3&keywords=quokka"); f.Metadata.TotalResults != 3 || len(f.Metadata.Keywords) != 1 {
			t.Errorf("keyword quokka %+v", f.Metadata)
		}
		if f = get("days=3&keywords=quokka&page=2"); f.Metadata.TotalVulnerabilities != 1 || len(f.Vulnerabilities) != 0 {
			t.Errorf("keyword quokka past the last page %+v", f.Metadata)
		}
		if f = get("days=3&keywords=wombat"); f.Metadata.TotalResults != 0 {
			t.Errorf("keyword wombat %+v", f.Metadata)
		}
		// Ids ignore the window: the libwebp overflow is enriched from KEV.
		f = get("keywords=CVE-2023-4863&type=vulnerabilities")
		if len(f.Vulnerabilities) != 1 {
			t.Fatalf("id lookup: %+v", f)
		}
		if v := f.Vulnerabilities[0]; !v.IsKEV || !v.IsExploitAvailable || v.CVSSV3Score != 8.8 || v.CISAExploitAdd == 0 || v.Severity != "high" || v.EPSSScore != 0.5 || len(v.CPEIDs) == 0 {
			t.Errorf("CVE-2023-4863 %+v", v)
		}
		// Log4Shell: an exploit and KEV, found by CVE id in every list; a GHSA id finds its advisory and CVE;
		// EDB-50592 also names CVE-2021-45046, whose record is then listed too.
		f = get("keywords=cve-2021-44228,EDB-50592,GHSA-5h86-8mv2-jq9f")
		if f.Metadata.TotalExploits != 1 || f.Exploits[0].EDBID != 50592 || f.Metadata.TotalAdvisories < 1 || f.Metadata.TotalVulnerabilities != 2 {
			t.Errorf("mixed ids %+v", f.Metadata)
		}
		// An advisory id finds the exploits of the CVEs it aliases, and an
		// EDB id the vulnerability its exploit references, as the searches do.
		if f = get("keywords=GHSA-qqqq-wwww-eeee"); f.Metadata.TotalExploits != 1 || f.Exploits[0].EDBID != 99999 || f.Metadata.TotalVulnerabilities != 1 {
			t.Errorf("advisory id across lists %+v", f.Metadata)
		}
		if f = get("keywords=EDB-99999&type=vulnerabilities"); f.Metadata.TotalVulnerabilities != 1 || f.Vulnerabilities[0].CVEID != "CVE-2026-99999" {
			t.Errorf("EDB id to its CVE %+v", f.Metadata)
		}
		// Source, ecosystem and package narrow every list through advisories.
		if f = get("days=3&package=pypi/quokka"); f.Metadata.TotalResults != 3 {
			t.Errorf("package filter %+v", f.Metadata)
		}
		if f = get("days=3&ecosystem=go"); f.Metadata.TotalResults != 0 {
			t.Errorf("ecosystem go %+v", f.Metadata)
		}
		if f = get("days=3&source=github&type=advisories"); f.Metadata.TotalAdvisories != 1 {
			t.Errorf("source github %+v", f.Metadata)
		}
		// Paging: each list on its own.
		ids := "CVE-2024-3094,CVE-2023-4863,CVE-2022-36037"
		p1, p2 := get("type=vulnerabilities&per_page=2&keywords="+ids), get("type=vulnerabilities&per_page=2&page=2&keywords="+ids)
		if p1.Metadata.TotalVulnerabilities != 3 || len(p1.Vulnerabilities) != 2 || len(p2.Vulnerabilities) != 1 || p2.Vulnerabilities[0].CVEID == p1.Vulnerabilities[0].CVEID {
			t.Errorf("paging %+v / %+v", p1.Vulnerabilities, p2.Vulnerabilities)
		}

		used := credits(t, e, key)
		bad := []struct{ q, want string }{
			{"days=0", "days must be between 1 and 7"},
			{"days=8", "days must be between 1 and 7"},
			{"days=1.5", "days must be an integer"},
			{"per_page=0", "per_page must be between 1 and 100"},
			{"per_page=101", "per_page must be between 1 and 100"},
			{"page=0", "page must be between 1"},
			{"type=cves", "type must be vulnerabilities, exploits, advisories or all"},
			{"keywords=" + strings.Repeat("a,", 21), "at most 20"},
			{"keywords=" + url.QueryEscape("%%,--"), "no letters or digits"},
			{"package=django", "package must be ecosystem/name"},
			{"package=/django", "package must be ecosystem/name"},
			{"ecosystem=npm&package=pypi/django", "is not in ecosystem"},
			{"keywords=" + strings.Repeat("x", 600), "at most 512 characters"},
		}
		for _, c := range bad {
			r := e.Do("GET", "/api/v1/vulnerability-intelligence/feed?"+c.q, key, nil)
			if r.Status != 400 || !strings.Contains(string(r.Body), c.want) {
				t.Errorf("%.60s: %d %s, want 400 with %q", c.q, r.Status, r.Body, c.want)
			}
		}
		if after := credits(t, e, key); after != used {
			t.Errorf("bad requests charged %d credits", after-used)
		}
	})
}

func TestOEMVulnFeed(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		seedVulns(t, e)
		keys := profiles(e)
		post := func(body any) feedResult {
			t.Helper()
			r := e.Do("POST", "/api/v1/oem/vulnerability-intelligence/feed", keys["oem"], body)
			if r.Status != 200 {
				t.Fatalf("%v: %d %s", body, r.Status, r.Body)
			}
			var f feedResult
			r.JSON(t, &f)
			return f
		}
		all := "CVE-2024-3094,CVE-2022-36037,CVE-2021-44228,CVE-2026-99999,CVE-2023-4863"
		f := post(map[string]any{"keywords": all, "type": "vulnerabilities", "query_tags": map[string]string{"tenant": "t1"}})
		if f.Metadata.TotalVulnerabilities != 5 || f.Metadata.Severity == nil || *f.Metadata.Severity != "" || f.Metadata.KEV == nil || *f.Metadata.KEV {
			t.Fatalf("unfiltered %+v", f.Metadata)
		}
		f = post(map[string]any{"keywords": strings.Split(all, ","), "kev": true, "severity": "HIGH", "days": 7, "per_page": 100, "page": 1})
		if f.Metadata.TotalVulnerabilities != 1 || *f.Metadata.Severity != "high" || !*f.Metadata.KEV || *f.Metadata.ExploitAvailable {
			t.Errorf("kev+high %+v", f.Metadata)
		}
		for _, v := range f.Vulnerabilities {
			if !v.IsKEV || v.Severity != "high" {
				t.Errorf("kev+high returned %+v", v)
			}
		}
		if f = post(map[string]any{"keywords": all, "exploit_available": true, "type": "vulnerabilities"}); f.Metadata.TotalVulnerabilities != 3 {
			t.Errorf("exploit_available %+v", f.Metadata)
		}
		if f = post(map[string]any{"days": 3, "severity": "low"}); f.Metadata.TotalResults != 0 {
			t.Errorf("severity low %+v", f.Metadata)
		}
		for _, c := range []struct {
			body any
			want string
		}{
			{map[string]any{"days": 9}, "days must be between 1 and 7"},
			{map[string]any{"days": "3"}, "days must be an integer"},
			{map[string]any{"per_page": 1000}, "per_page must be between 1 and 100"},
			{map[string]any{"severity": "urgent"}, "severity must be"},
			{map[string]any{"kev": "yes"}, "kev must be a boolean"},
			{map[string]any{"type": "all", "keywords": 5}, "keywords must be"},
			{map[string]any{"package": "npm"}, "package must be ecosystem/name"},
		} {
			r := e.Do("POST", "/api/v1/oem/vulnerability-intelligence/feed", keys["oem"], c.body)
			if r.Status != 400 || !strings.Contains(string(r.Body), c.want) {
				t.Errorf("%v: %d %s, want 400 with %q", c.body, r.Status, r.Body, c.want)
			}
		}
		// Entitlements: OEM routes need the OEM module and credits.
		if r := e.Do("POST", "/api/v1/oem/vulnerability-intelligence/feed", keys["enterprise"], map[string]any{}); r.Status != 403 || r.ErrorCode() != "oem_required" {
			t.Errorf("enterprise key: %d %s", r.Status, r.Body)
		}
		if r := e.Do("POST", "/api/v1/oem/vulnerability-intelligence/feed", keys["oem-spent"], map[string]any{}); r.Status != 403 || r.ErrorCode() != "oem_credits_exhausted" {
			t.Errorf("spent key: %d %s", r.Status, r.Body)
		}
	})
}

func TestVulnSearches(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		seedVulns(t, e)
		keys := profiles(e)
		type rec struct {
			CVEID string `json:"cve_id"`
			ID    string `json:"id"`
			EDBID int    `json:"edb_id"`
		}
		search := func(method, path, key string, body any) []rec {
			t.Helper()
			r := e.Do(method, path, key, body)
			if r.Status != 200 {
				t.Fatalf("%s %s %v: %d %s", method, path, body, r.Status, r.Body)
			}
			var out struct {
				Response []rec `json:"response"`
			}
			if err := strictDecode(r.Body, &out); err != nil || out.Response == nil {
				t.Fatalf("%s: %v %s", path, err, r.Body)
			}
			return out.Response
		}
		const oem = "/api/v1/oem/vulnerability-intelligence/"
		const pub = "/api/v1/vulnerability-intelligence/"
		cases := []struct {
			method, path string
			body         any
			want         string // the first record's id
			n            int    // -1: any number >= 1
		}{
			{"POST", oem + "vulnerability-search", map[string]any{"query": "cve-2024-3094", "no_cache": true, "query_tags": map[string]any{"a": 1}}, "CVE-2024-3094", 1},
			{"POST", oem + "vulnerability-search", map[string]any{"query": "GHSA-qqqq-wwww-eeee"}, "CVE-2026-99999", 1},
			{"POST", oem + "vulnerability-search", map[string]any{"query": "cpe:2.3:a:tukaani:xz:5.6.0:*:*:*:*:*:*:*"}, "CVE-2024-3094", 1},
			{"POST", oem + "vulnerability-search", map[string]any{"query": "quokka pars"}, "CVE-2026-99999", 1},
			{"POST", oem + "vulnerability-search", map[string]any{"query": "quokka", "package": "npm/quokka"}, "", 0},
			{"POST", oem + "advisories-search", map[string]any{"query": "CVE-2024-23334"}, "GHSA-5h86-8mv2-jq9f", -1},
			{"POST", oem + "advisories-search", map[string]any{"query": "heap overflow", "ecosystem": "pypi"}, "GHSA-qqqq-wwww-eeee", 1},
			{"POST", oem + "exploits-search", map[string]any{"query": "CVE-2021-44228"}, "50592", 1},
			{"GET", pub + "vulnerability-search?query=CVE-2026-99999", nil, "CVE-2026-99999", 1},
			{"POST", pub + "vulnerability-search", map[string]any{"query": "quokka"}, "CVE-2026-99999", 1},
			{"GET", pub + "advisories-search?query=GHSA-qqqq-wwww-eeee", nil, "GHSA-qqqq-wwww-eeee", 1},
			{"POST", pub + "advisories-search?query=quokka", nil, "GHSA-qqqq-wwww-eeee", 1},
			// Ecosystem or package alone lists advisories, newest first (issue 17).
			{"GET", pub + "advisories-search?ecosystem=pypi&package=PyPI/quokka", nil, "GHSA-qqqq-wwww-eeee", 1},
			{"GET", pub + "advisories-search?ecosystem=PyPI", nil, "GHSA-qqqq-wwww-eeee", -1},
			{"POST", oem + "advisories-search", map[string]any{"package": "PyPI/quokka"}, "GHSA-qqqq-wwww-eeee", 1},
			{"GET", pub + "advisories-search?package=npm/quokka", nil, "", 0},
			{"GET", pub + "exploits-search?query=log4j", nil, "50592", 1},
			{"POST", pub + "exploits-search", map[string]any{"query": "EDB-99999"}, "99999", 1},
		}
		for _, c := range cases {
			key := keys["free"]
			if strings.HasPrefix(c.path, oem) {
				key = keys["oem"]
			}
			got := search(c.method, c.path, key, c.body)
			if c.n >= 0 && len(got) != c.n || c.n < 0 && len(got) == 0 {
				t.Errorf("%s %s %v: %d records %+v", c.method, c.path, c.body, len(got), got)
				continue
			}
			if len(got) > 0 {
				first := got[0].CVEID
				if strings.Contains(c.path, "advisories") {
					first = got[0].ID
				} else if strings.Contains(c.path, "exploits") {
					first = fmt.Sprint(got[0].EDBID)
				}
				if first != c.want {
					t.Errorf("%s %s %v: first %q, want %q", c.method, c.path, c.body, first, c.want)
				}
			}
		}

		used := credits(t, e, keys["free"])
		for _, c := range []struct {
			method, path string
			body         any
			status       int
			want         string
		}{
			{"GET", pub + "vulnerability-search", nil, 400, "query is required"},
			{"GET", pub + "vulnerability-search?query=a", nil, 400, "at least 2 characters"},
			{"GET", pub + "vulnerability-search?query=" + strings.Repeat("a", 600), nil, 400, "at most 512"},
			{"POST", pub + "advisories-search", map[string]any{"query": "  "}, 400, "query is required"},
			{"GET", pub + "advisories-search?ecosystem=%20", nil, 400, "query is required when neither ecosystem nor package"},
			{"GET", pub + "vulnerability-search?ecosystem=PyPI", nil, 400, "query is required"},
			{"POST", pub + "advisories-search", map[string]any{"query": "django", "package": "django"}, 400, "ecosystem/name"},
			{"POST", pub + "advisories-search", map[string]any{"query": 42}, 400, "query must be a string"},
			{"POST", pub + "exploits-search", map[string]any{"query": "!!"}, 400, "letters or digits"},
			{"POST", pub + "vulnerability-search", map[string]any{"query": "cpe:2.3:a"}, 400, "CPE"},
			{"POST", pub + "vulnerability-search", `{"query": "x` + strings.Repeat("y", 2<<20) + `"}`, 413, "larger than"},
			{"DELETE", pub + "vulnerability-search", nil, 405, "not allowed"},
			// A NUL would reach PostgreSQL, which fails on it: a 400 first.
			{"POST", pub + "vulnerability-search", map[string]any{"query": "cpe:2.3:a:foo\u0000:bar"}, 400, "query must be UTF-8 text without NUL"},
			{"POST", pub + "advisories-search", map[string]any{"query": "quokka", "package": "pypi/q\u0000"}, 400, "package must be UTF-8 text"},
			{"GET", pub + "feed?source=gh%00", nil, 400, "source must be UTF-8 text"},
			{"GET", pub + "feed?ecosystem=py%00", nil, 400, "ecosystem must be UTF-8 text"},
			{"GET", pub + "feed?keywords=ab%ff", nil, 400, "keywords must be UTF-8 text"},
			// Characters, not bytes: 513 CJK characters are 1,539 bytes.
			{"GET", pub + "vulnerability-search?query=" + url.QueryEscape(strings.Repeat("漏", 513)), nil, 400, "at most 512"},
		} {
			r := e.Do(c.method, c.path, keys["free"], c.body)
			if r.Status != c.status || !strings.Contains(string(r.Body), c.want) {
				t.Errorf("%s %.70s: %d %.200s, want %d with %q", c.method, c.path, r.Status, r.Body, c.status, c.want)
			}
		}
		if after := credits(t, e, keys["free"]); after != used {
			t.Errorf("failed searches charged %d credits", after-used)
		}
		// A word longer than the 64 characters searched is cut between
		// characters, never inside one (PostgreSQL refuses broken UTF-8).
		if r := e.Do("GET", pub+"vulnerability-search?query="+url.QueryEscape(strings.Repeat("漏", 70)), keys["free"], nil); r.Status != 200 {
			t.Errorf("a long CJK word: %d %.200s", r.Status, r.Body)
		}
		// OEM searches draw on the OEM pool and land in the audit log.
		r := e.Do("POST", "/api/v1/oem/account/audit-logs", keys["oem"], map[string]any{})
		if r.Status != 200 || !strings.Contains(string(r.Body), "vulnerability-intelligence/vulnerability-search") {
			t.Errorf("audit log: %d %.300s", r.Status, r.Body)
		}
		if r := e.Do("POST", oem+"vulnerability-search", keys["free"], map[string]any{"query": "xz"}); r.Status != 403 {
			t.Errorf("free key on OEM search: %d", r.Status)
		}
		// The extension searches also take form fields (curl -d query=…);
		// the OEM ones take JSON only.
		form := func(path, body string) apitest.Response {
			req, _ := http.NewRequest("POST", e.HTTP.URL+path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("X-API-KEY", keys["oem"])
			return e.Send(req)
		}
		if r := form(pub+"vulnerability-search", "query=CVE-2026-99999"); r.Status != 200 || !strings.Contains(string(r.Body), `"cve_id":"CVE-2026-99999"`) {
			t.Errorf("form search: %d %.200s", r.Status, r.Body)
		}
		if r := form(pub+"advisories-search", "query=a"); r.Status != 400 || !strings.Contains(string(r.Body), "at least 2 characters") {
			t.Errorf("form search, short query: %d %.200s", r.Status, r.Body)
		}
		if r := form(oem+"vulnerability-search", "query=CVE-2026-99999"); r.Status != 415 {
			t.Errorf("form on an OEM search: %d %.200s", r.Status, r.Body)
		}
	})
}

func TestVulnMetrics(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		seedVulns(t, e)
		if err := e.Vulns.PutVulnSyncState(context.Background(), vulnstore.SyncState{Source: "kev", URL: "https://example.invalid/kev.json",
			LastAttempt: 1795000000, LastSuccess: 1795000000, Records: 7}); err != nil {
			t.Fatal(err)
		}
		if err := e.Vulns.PutVulnSyncState(context.Background(), vulnstore.SyncState{Source: "osv:PyPI", LastAttempt: 1795000000, LastError: "HTTP 503"}); err != nil {
			t.Fatal(err)
		}
		r := e.Do("GET", "/metrics", "", nil)
		body := string(r.Body)
		for _, want := range []string{
			`periscope_vuln_records{kind="kev"} 1404`,
			`periscope_vuln_sync_last_success_timestamp_seconds{source="kev"} 1.795e+09`,
			`periscope_vuln_sync_last_run_ok{source="kev"} 1`,
			`periscope_vuln_sync_last_run_ok{source="osv:PyPI"} 0`,
			// Not the KEV count: sync records come from the sync state.
			`periscope_vuln_sync_records{source="kev"} 7`,
			`periscope_vuln_metrics_error 0`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
		// The record counts are kept for a minute: a new KEV entry shows
		// only once it has passed.
		if _, err := e.Vulns.UpsertKEV(context.Background(), []vuln.KEVEntry{{CVEID: "CVE-2099-0001", VulnerabilityName: "new",
			DateAdded: e.Clock.Now(), DueDate: e.Clock.Now()}}); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			advance time.Duration
			want    string
		}{{30 * time.Second, `periscope_vuln_records{kind="kev"} 1404`}, {31 * time.Second, `periscope_vuln_records{kind="kev"} 1405`}} {
			e.Clock.Advance(c.advance)
			if body := string(e.Do("GET", "/metrics", "", nil).Body); !strings.Contains(body, c.want) {
				t.Errorf("after %v more: /metrics lacks %q", c.advance, c.want)
			}
		}
	})
}
