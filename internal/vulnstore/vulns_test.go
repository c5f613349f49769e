package vulnstore_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/vuln"
	"github.com/periscope-oss/periscope/internal/vulnstore"
)

const vulnData = "../vuln/testdata/"

func readNVD(t *testing.T, path string) []vuln.Vulnerability {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var vs []vuln.Vulnerability
	if _, _, err := vuln.ReadNVD(f, path, func(v vuln.Vulnerability) error { vs = append(vs, v); return nil }); err != nil {
		t.Fatal(err)
	}
	return vs
}

func readOSV(t *testing.T, path string) []vuln.Advisory {
	t.Helper()
	var as []vuln.Advisory
	if _, err := vuln.ReadOSV(path, func(a vuln.Advisory) error { as = append(as, a); return nil }); err != nil {
		t.Fatal(err)
	}
	return as
}

func findVuln(t *testing.T, s *vulnstore.Store, id string) vuln.Vulnerability {
	t.Helper()
	vs, err := s.SearchVulns(context.Background(), vulnstore.VulnSearch{Query: id, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 {
		t.Fatalf("search %s: %d records", id, len(vs))
	}
	return vs[0]
}

// checkFTS runs FTS5's integrity check, which compares each external-
// content index with its table, and compares the contentless
// vulns_search_fts with vulns (SQLite; PostgreSQL's tsvectors are
// generated).
func checkFTS(t *testing.T, s *vulnstore.Store) {
	t.Helper()
	if !s.SyncsTextIndex() {
		return
	}
	for _, tbl := range []string{"vulns_search", "vuln_exploits", "vuln_advisories"} {
		if _, err := s.Core().DB().Exec(`INSERT INTO ` + tbl + `_fts (` + tbl + `_fts) VALUES ('integrity-check')`); err != nil {
			t.Errorf("%s text index: %v", tbl, err)
		}
	}
	checkVulnIndex(t, s)
}

// checkVulnIndex compares vulns_search_fts with a reference index built
// from vulns now (external content, rebuilt): for every term of either,
// the same CVEs must match, under rowids that encode their current
// publication date and id.
func checkVulnIndex(t *testing.T, s *vulnstore.Store) {
	t.Helper()
	db := s.Core().DB()
	for _, q := range []string{
		`CREATE VIRTUAL TABLE ref_fts USING fts5(title, description, content='vulns', content_rowid='id', tokenize='porter unicode61')`,
		`INSERT INTO ref_fts (ref_fts) VALUES ('rebuild')`,
		`CREATE VIRTUAL TABLE temp.ref_terms USING fts5vocab(main, ref_fts, row)`,
		`CREATE VIRTUAL TABLE temp.new_terms USING fts5vocab(main, vulns_search_fts, row)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	defer db.Exec(`DROP TABLE temp.ref_terms; DROP TABLE temp.new_terms; DROP TABLE ref_fts`)
	rows, err := db.Query(`SELECT term FROM temp.ref_terms UNION SELECT term FROM temp.new_terms`)
	if err != nil {
		t.Fatal(err)
	}
	var terms []string
	for rows.Next() {
		var term string
		if err := rows.Scan(&term); err != nil {
			t.Fatal(err)
		}
		terms = append(terms, term)
	}
	rows.Close()
	keys := func(q, term string) []int64 {
		rows, err := db.Query(q, `"`+strings.ReplaceAll(term, `"`, `""`)+`"`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var ks []int64
		for rows.Next() {
			var k int64
			if err := rows.Scan(&k); err != nil {
				t.Fatal(err)
			}
			ks = append(ks, k)
		}
		return ks
	}
	matched := 0
	for _, term := range terms {
		want := keys(`SELECT ((MIN(MAX(published, 0), 4294967295) << 31) | id) AS k FROM vulns WHERE id IN (SELECT rowid FROM ref_fts WHERE ref_fts MATCH ?) ORDER BY k`, term)
		got := keys(`SELECT rowid FROM vulns_search_fts WHERE vulns_search_fts MATCH ? ORDER BY rowid`, term)
		if !slices.Equal(got, want) {
			t.Errorf("term %q: vulns_search_fts rowids %v, vulns %v", term, got, want)
			return
		}
		matched += len(want)
	}
	if len(terms) > 0 && matched == 0 {
		t.Errorf("%d terms and no match: the comparison shows nothing", len(terms))
	}
}

func TestUpsertVulnsIdempotentNewerWins(t *testing.T) {
	each(t, func(t *testing.T, s *vulnstore.Store) {
		ctx := context.Background()
		vs := readNVD(t, vulnData+"nvd/vunnel_full-page.json")
		st, err := s.UpsertVulns(ctx, vs)
		if err != nil {
			t.Fatal(err)
		}
		if st.Inserted != len(vs) || st.Updated != 0 || st.Unchanged != 0 {
			t.Fatalf("first ingest %+v, want %d inserted", st, len(vs))
		}
		st, err = s.UpsertVulns(ctx, vs)
		if err != nil {
			t.Fatal(err)
		}
		if st.Unchanged != len(vs) || st.Inserted+st.Updated != 0 {
			t.Fatalf("re-ingest %+v, want all unchanged", st)
		}
		// An older copy is ignored, a newer one replaces.
		old, newer := vs[0], vs[0]
		old.LastModified = old.LastModified.Add(-time.Hour)
		old.Description = "older text"
		newer.LastModified = newer.LastModified.Add(time.Hour)
		newer.Description = "newer text about zanzibar"
		if st, err = s.UpsertVulns(ctx, []vuln.Vulnerability{old}); err != nil || st.Unchanged != 1 {
			t.Fatalf("older: %+v %v", st, err)
		}
		if st, err = s.UpsertVulns(ctx, []vuln.Vulnerability{newer}); err != nil || st.Updated != 1 {
			t.Fatalf("newer: %+v %v", st, err)
		}
		got := findVuln(t, s, vs[0].CVEID)
		if got.Description != "newer text about zanzibar" {
			t.Fatalf("description %q", got.Description)
		}
		// The full-text index followed the update in the same transaction.
		hits, err := s.SearchVulns(ctx, vulnstore.VulnSearch{Query: "zanzib", Limit: 50})
		if err != nil || len(hits) != 1 || hits[0].CVEID != vs[0].CVEID {
			t.Fatalf("prefix search after update: %v %v", hits, err)
		}
		if hits, err = s.SearchVulns(ctx, vulnstore.VulnSearch{Query: "older text", Limit: 50}); err != nil || len(hits) != 0 {
			t.Fatalf("ignored text is searchable: %v %v", hits, err)
		}
		checkFTS(t, s)
	})
}

func TestVulnEnrichment(t *testing.T) {
	each(t, func(t *testing.T, s *vulnstore.Store) {
		ctx := context.Background()
		const id = "CVE-2024-3094" // xz backdoor: in the NVD testdata
		day := time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC)
		// Enrichment arrives before the NVD record: nothing is lost.
		if _, err := s.UpsertKEV(ctx, []vuln.KEVEntry{{CVEID: id, VulnerabilityName: "XZ Utils Embedded Malicious Code", ShortDescription: "backdoor",
			DateAdded: day, DueDate: day.AddDate(0, 0, 21), RequiredAction: "Apply mitigations"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpsertEPSS(ctx, []vuln.EPSSScore{{CVEID: id, EPSS: 0.8, Percentile: 0.99, ScoreDate: day}}); err != nil {
			t.Fatal(err)
		}
		// An older EPSS score does not replace a newer one.
		if st, err := s.UpsertEPSS(ctx, []vuln.EPSSScore{{CVEID: id, EPSS: 0.1, Percentile: 0.5, ScoreDate: day.AddDate(0, 0, -1)}}); err != nil || st.Unchanged != 1 {
			t.Fatalf("older epss: %+v %v", st, err)
		}
		stub := findVuln(t, s, id)
		if !stub.IsKEV || stub.Title != "XZ Utils Embedded Malicious Code" || !stub.IsExploitAvailable {
			t.Fatalf("kev-only record %+v", stub)
		}
		// Its dates are KEV's dateAdded, not zero beside real KEV dates;
		// its severity stays unknown (KEV has no CVSS).
		if !stub.Published.Equal(day) || !stub.LastModified.Equal(day) || stub.Severity != "" {
			t.Fatalf("kev-only record dates %v %v severity %q", stub.Published, stub.LastModified, stub.Severity)
		}
		st, err := s.UpsertVulns(ctx, readNVD(t, vulnData+"nvd/osvdev_CVE-2024-3094.json"))
		if err != nil || st.Updated != 1 {
			t.Fatalf("nvd after kev: %+v %v", st, err)
		}
		v := findVuln(t, s, id)
		if !v.IsKEV || !v.IsExploitAvailable || v.EPSSScore != 0.8 || v.EPSSPercentile != 0.99 ||
			!v.CISAExploitAdd.Equal(day) || v.CISARequiredAction != "Apply mitigations" || v.Severity != "critical" ||
			v.CVSSV3Score != 10 || v.Title != "XZ Utils Embedded Malicious Code" || len(v.CPEIDs) == 0 || v.Published.Equal(day) {
			t.Fatalf("enriched record %+v", v)
		}
		// Exploits flag a CVE; a changed exploit moves the flag.
		nvd := readNVD(t, vulnData+"nvd/osvdev_CVE-2022-36037.json")
		if _, err := s.UpsertVulns(ctx, nvd); err != nil {
			t.Fatal(err)
		}
		if findVuln(t, s, "CVE-2022-36037").IsExploitAvailable {
			t.Fatal("exploit flag before any exploit")
		}
		x := vuln.Exploit{EDBID: 51234, CVEID: "CVE-2022-36037", CVEIDs: []string{"CVE-2022-36037"}, Title: "libwebp heap overflow", DateAdded: day, DateUpdated: day}
		if st, err := s.UpsertExploits(ctx, []vuln.Exploit{x, x}); err != nil || st.Inserted != 1 || st.Unchanged != 1 {
			t.Fatalf("exploits: %+v %v", st, err)
		}
		if !findVuln(t, s, "CVE-2022-36037").IsExploitAvailable {
			t.Fatal("exploit flag not set")
		}
		x.CVEID, x.CVEIDs, x.DateUpdated = "", nil, day.AddDate(0, 0, 1)
		older := x
		older.DateUpdated, older.Title = day.AddDate(0, 0, -1), "older title"
		if st, err := s.UpsertExploits(ctx, []vuln.Exploit{older}); err != nil || st.Unchanged != 1 {
			t.Fatalf("older exploit: %+v %v", st, err)
		}
		if st, err := s.UpsertExploits(ctx, []vuln.Exploit{x}); err != nil || st.Updated != 1 {
			t.Fatalf("exploit update: %+v %v", st, err)
		}
		if findVuln(t, s, "CVE-2022-36037").IsExploitAvailable {
			t.Fatal("exploit flag kept after the exploit dropped the CVE")
		}
		xs, err := s.SearchExploits(ctx, vulnstore.VulnSearch{Query: "heap libweb", Limit: 50})
		if err != nil || len(xs) != 1 || xs[0].EDBID != 51234 {
			t.Fatalf("exploit text search: %v %v", xs, err)
		}
		checkFTS(t, s)
	})
}

func TestAdvisoriesAliasesAndSearch(t *testing.T) {
	each(t, func(t *testing.T, s *vulnstore.Store) {
		ctx := context.Background()
		as := append(readOSV(t, vulnData+"osv/go"), readOSV(t, vulnData+"osv/ghsa")...)
		st, err := s.UpsertAdvisories(ctx, as)
		if err != nil || st.Inserted != len(as) {
			t.Fatalf("advisories: %+v %v", st, err)
		}
		if st, err = s.UpsertAdvisories(ctx, as); err != nil || st.Unchanged != len(as) {
			t.Fatalf("re-ingest advisories: %+v %v", st, err)
		}
		// Pick a Go advisory with a CVE alias and check the links both ways.
		var goAdv vuln.Advisory
		var cve string
		for _, a := range as {
			for _, al := range a.Aliases {
				if vuln.IsCVE(al) && a.Source == "go" && cve == "" {
					goAdv, cve = a, al
				}
			}
		}
		if cve == "" {
			t.Fatal("no Go advisory with a CVE alias in the testdata")
		}
		got, err := s.SearchAdvisories(ctx, vulnstore.VulnSearch{Query: cve, Limit: 50})
		if err != nil || !slices.ContainsFunc(got, func(a vuln.Advisory) bool { return a.ID == goAdv.ID }) {
			t.Fatalf("advisories for %s: %v %v", cve, got, err)
		}
		if _, err := s.UpsertVulns(ctx, []vuln.Vulnerability{{CVEID: cve, Description: "linked", Published: goAdv.Published, LastModified: goAdv.Modified}}); err != nil {
			t.Fatal(err)
		}
		vs, err := s.SearchVulns(ctx, vulnstore.VulnSearch{Query: goAdv.ID, Limit: 50})
		if err != nil || len(vs) != 1 || vs[0].CVEID != cve || !slices.Contains(vs[0].Advisories, goAdv.ID) {
			t.Fatalf("vulnerabilities for %s: %+v %v", goAdv.ID, vs, err)
		}
		eco, name := goAdv.Affected[0].Ecosystem, goAdv.Affected[0].Name
		vs, err = s.SearchVulns(ctx, vulnstore.VulnSearch{Query: goAdv.ID, Ecosystem: eco, Package: name, Limit: 50})
		if err != nil || len(vs) != 1 {
			t.Fatalf("vulnerabilities with package filter: %v %v", vs, err)
		}
		vs, err = s.SearchVulns(ctx, vulnstore.VulnSearch{Query: goAdv.ID, Ecosystem: "npm", Limit: 50})
		if err != nil || len(vs) != 0 {
			t.Fatalf("vulnerabilities with another ecosystem: %v %v", vs, err)
		}
		// Feed: the window, ids ignoring it, and the source filter.
		f := vulnstore.VulnFilter{Cutoff: goAdv.Published.Unix(), Limit: 100}
		got, total, err := s.FeedAdvisories(ctx, f)
		if err != nil || total == 0 || len(got) != total {
			t.Fatalf("feed window: %d %d %v", len(got), total, err)
		}
		for i := 1; i < len(got); i++ {
			if got[i].Published.After(got[i-1].Published) {
				t.Fatal("feed not newest first")
			}
		}
		f = vulnstore.VulnFilter{Cutoff: time.Now().Unix(), IDs: []string{goAdv.ID}, Limit: 100}
		if got, total, err = s.FeedAdvisories(ctx, f); err != nil || total != 1 || got[0].ID != goAdv.ID {
			t.Fatalf("feed by id: %v %d %v", got, total, err)
		}
		f = vulnstore.VulnFilter{Cutoff: 0, Source: "github", Limit: 100}
		if got, total, err = s.FeedAdvisories(ctx, f); err != nil || total != 5 {
			t.Fatalf("feed source=github: %d %v", total, err)
		}
		// Ranked text search with prefix matching.
		got, err = s.SearchAdvisories(ctx, vulnstore.VulnSearch{Query: "deserializ", Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SearchAdvisories(ctx, vulnstore.VulnSearch{Query: "cpe:2.3:a", Limit: 50}); err == nil {
			t.Fatal("malformed CPE accepted")
		}
		// A newer version replaces the text in the index.
		upd := goAdv
		upd.Modified = time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
		upd.Summary = "Wombat confusion"
		if st, err := s.UpsertAdvisories(ctx, []vuln.Advisory{upd}); err != nil || st.Updated != 1 {
			t.Fatalf("advisory update: %+v %v", st, err)
		}
		if got, err := s.SearchAdvisories(ctx, vulnstore.VulnSearch{Query: "wombat", Limit: 50}); err != nil || len(got) != 1 {
			t.Fatalf("search updated advisory: %v %v", got, err)
		}
		// Keywords: the page and the total from one text match, and the
		// total still counted past the last page.
		f = vulnstore.VulnFilter{Cutoff: 0, Terms: []string{"wombat"}, Limit: 100}
		all, n, err := s.FeedAdvisories(ctx, f)
		if err != nil || n == 0 || len(all) != n {
			t.Fatalf("feed keywords: %d of %d, %v", len(all), n, err)
		}
		f.Limit, f.Offset = 1, n-1
		if got, total, err = s.FeedAdvisories(ctx, f); err != nil || total != n || len(got) != 1 || got[0].ID != all[n-1].ID {
			t.Fatalf("feed keywords, last page: %v %d %v", got, total, err)
		}
		f.Offset = n + 5
		if got, total, err = s.FeedAdvisories(ctx, f); err != nil || total != n || len(got) != 0 {
			t.Fatalf("feed keywords, past the end: %v %d %v", got, total, err)
		}
		checkFTS(t, s)
	})
}

func TestCPEKey(t *testing.T) {
	for in, want := range map[string]string{
		"cpe:2.3:a:apache:log4j:2.14.1:*:*:*:*:*:*:*": "a:apache:log4j",
		"CPE:2.3:O:Linux:Linux_Kernel:*":              "o:linux:linux_kernel",
		"cpe:/a:openssl:openssl:1.0.1":                "a:openssl:openssl",
		"cpe:2.3:a:*:log4j":                           "",
		"cpe:2.3:x:apache:log4j":                      "",
		"apache log4j":                                "",
	} {
		got, ok := vulnstore.CPEKey(in)
		if got != want || ok != (want != "") {
			t.Errorf("CPEKey(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
}

func TestUpsertVulnsConcurrent(t *testing.T) {
	each(t, func(t *testing.T, s *vulnstore.Store) {
		vs := readNVD(t, vulnData+"nvd/vunnel_full-page.json")
		var wg sync.WaitGroup
		stats := make([]vulnstore.VulnStats, 4)
		errs := make([]error, 4)
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				stats[i], errs[i] = s.UpsertVulns(context.Background(), vs)
			}()
		}
		wg.Wait()
		var total vulnstore.VulnStats
		for i := range 4 {
			if errs[i] != nil {
				t.Fatalf("writer %d: %v", i, errs[i])
			}
			total.Add(stats[i])
		}
		if total.Inserted != len(vs) || total.Unchanged != 3*len(vs) || total.Updated != 0 {
			t.Fatalf("concurrent writers: %+v", total)
		}
	})
}

// FuzzCPEKey checks that a key is lower-case part:vendor:product and that
// keys are stable (the key of a key's CPE is the key).
func FuzzCPEKey(f *testing.F) {
	for _, s := range []string{"cpe:2.3:a:apache:log4j:2.14.1:*:*:*:*:*:*:*", "cpe:/o:linux:linux_kernel", "CPE:2.3:H:Cisco:ASA", "cpe:2.3:a:*:x", "cpe:2.3:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, ok := vulnstore.CPEKey(s)
		if !ok {
			return
		}
		if k != strings.ToLower(k) || strings.Count(k, ":") != 2 {
			t.Fatalf("CPEKey(%q) = %q", s, k)
		}
		if k2, ok := vulnstore.CPEKey("cpe:2.3:" + k); !ok || k2 != k {
			t.Fatalf("CPEKey(cpe:2.3:%s) = %q %v", k, k2, ok)
		}
	})
}

// A KEV entry titles and describes only what has no title or description
// (NVD records have no title): the text index follows it for a record it
// creates or completes, and a titled record keeps its text, later catalog
// names unsearchable.
func TestKEVTextIndexFollowsOnlyChangedText(t *testing.T) {
	each(t, func(t *testing.T, s *vulnstore.Store) {
		ctx := context.Background()
		nvd := readNVD(t, vulnData+"nvd/osvdev_CVE-2022-36037.json")
		if _, err := s.UpsertVulns(ctx, nvd); err != nil {
			t.Fatal(err)
		}
		day := time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC)
		id := nvd[0].CVEID
		entries := []vuln.KEVEntry{
			{CVEID: id, VulnerabilityName: "Quixotic Wombat Flaw", ShortDescription: "quixotic", DateAdded: day, DueDate: day},
			{CVEID: "CVE-2031-0001", VulnerabilityName: "Zephyrine Gadget Overflow", ShortDescription: "zephyrine overflow", DateAdded: day, DueDate: day},
		}
		search := func(q string) []string { return searchIDs(t, s, q, 10) }
		for round := range 2 { // the second round renames both: an update
			if round == 1 {
				entries[0].VulnerabilityName = "Yonder Wombat Flaw"
				entries[1].VulnerabilityName = "Yonder Gadget Overflow"
			}
			if _, err := s.UpsertKEV(ctx, entries); err != nil {
				t.Fatal(err)
			}
			if got := search("zephyrine"); !slices.Equal(got, []string{"CVE-2031-0001"}) {
				t.Errorf("round %d: KEV-created record: %v", round, got)
			}
			if got := search("quixotic"); !slices.Equal(got, []string{id}) {
				t.Errorf("round %d: the title the catalog gave: %v", round, got)
			}
			if got := search("yonder"); len(got) != 0 {
				t.Errorf("round %d: a later catalog name replaced a title: %v", round, got)
			}
			if got := search("multiselect"); !slices.Contains(got, id) {
				t.Errorf("round %d: the NVD description is no longer searchable: %v", round, got)
			}
			checkFTS(t, s)
		}
	})
}
