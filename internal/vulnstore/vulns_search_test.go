package vulnstore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/vuln"
	"github.com/periscope-oss/periscope/internal/vulnstore"
)

// pgRefSearch is the vulnerability text search as PostgreSQL ran it before
// the narrow vulns_search table (migration 16): the newest 500 matches of
// vulns ranked by ts_rank.
const pgRefSearch = `SELECT v.cve_id FROM (SELECT * FROM vulns WHERE tsv @@ to_tsquery('english', $1) ORDER BY published DESC, id DESC LIMIT 500) v
	CROSS JOIN to_tsquery('english', $1) fq WHERE v.tsv @@ fq ORDER BY ts_rank(v.tsv, fq) DESC, v.id DESC LIMIT $2`

// sqliteRefSearch is the same on SQLite over an index of vulns built for
// the test (ref_fts, external content): the newest 500 matches by
// (published, id) ranked by bm25, title weighted 10:1.
const sqliteRefSearch = `SELECT v.cve_id FROM (SELECT id FROM vulns WHERE id IN (SELECT rowid FROM ref_fts WHERE ref_fts MATCH ?1)
		ORDER BY published DESC, id DESC LIMIT 500) w
	JOIN (SELECT rowid AS id, bm25(ref_fts, 10.0, 1.0) AS score FROM ref_fts WHERE ref_fts MATCH ?1) r ON r.id = w.id
	JOIN vulns v ON v.id = w.id ORDER BY r.score, v.id DESC LIMIT ?2`

// The ranked text search reads a narrow table (PostgreSQL vulns_search,
// SQLite vulns_search_fts in date order): it must answer what the search
// over vulns answers, with more matches than the ranked window and after
// updates of text and dates.
func TestNarrowTextSearchMatchesWideRows(t *testing.T) {
	each(t, func(t *testing.T, s *vulnstore.Store) {
		ctx := context.Background()
		base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
		words := []string{"overflow", "injection", "traversal", "bypass"}
		mk := func(round int) []vuln.Vulnerability {
			var vs []vuln.Vulnerability
			for i := range 1200 {
				desc := fmt.Sprintf("A %s in component %d", words[i%len(words)], i%37)
				if i%3 == 0 {
					desc += " allows remote overflow overflow"
				}
				if round == 1 && i%5 == 0 {
					desc = "rewritten zanzibar " + desc
				}
				vs = append(vs, vuln.Vulnerability{
					CVEID:        fmt.Sprintf("CVE-2024-%05d", 10000+i),
					Title:        map[bool]string{true: "Overflow in parser", false: ""}[i%11 == 0],
					Description:  desc,
					Published:    base.Add(time.Duration((i*7919)%1200+round*i%3) * time.Hour),
					LastModified: base.Add(time.Duration(round+1) * 24 * 365 * time.Hour),
				})
			}
			return vs
		}
		db := s.Core().DB()
		for round := range 2 {
			if _, err := s.UpsertVulns(ctx, mk(round)); err != nil {
				t.Fatal(err)
			}
			ref, fqOf := pgRefSearch, queryOf
			if s.SyncsTextIndex() {
				checkVulnIndex(t, s)
				ref, fqOf = sqliteRefSearch, sqliteQueryOf
				for _, q := range []string{
					`CREATE VIRTUAL TABLE ref_fts USING fts5(title, description, content='vulns', content_rowid='id', tokenize='porter unicode61')`,
					`INSERT INTO ref_fts (ref_fts) VALUES ('rebuild')`,
				} {
					if _, err := db.Exec(q); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				var diff int
				if err := db.QueryRow(`SELECT COUNT(*) FROM vulns v FULL JOIN vulns_search n ON n.id = v.id
				WHERE v.id IS NULL OR n.id IS NULL OR n.published <> v.published OR n.tsv <> v.tsv`).Scan(&diff); err != nil {
					t.Fatal(err)
				}
				if diff != 0 {
					t.Fatalf("round %d: %d rows of vulns_search differ from vulns", round, diff)
				}
			}
			for _, q := range []string{"overflow", "injection", "remote overflow", "parser", "zanzibar", "component"} {
				for _, limit := range []int{1, 20, 100} {
					got := searchIDs(t, s, q, limit)
					var want []string
					rows, err := db.Query(ref, fqOf(q), limit)
					if err != nil {
						t.Fatal(err)
					}
					for rows.Next() {
						var id string
						if err := rows.Scan(&id); err != nil {
							t.Fatal(err)
						}
						want = append(want, id)
					}
					rows.Close()
					if round == 0 && q == "zanzibar" {
						if len(want) != 0 {
							t.Fatalf("zanzibar before the rewrite: %v", want)
						}
					} else if len(want) == 0 {
						t.Fatalf("round %d %q: the reference found nothing", round, q)
					}
					if !slices.Equal(got, want) {
						t.Errorf("round %d %q limit %d:\n got %v\nwant %v", round, q, limit, got, want)
					}
				}
			}
			if s.SyncsTextIndex() {
				if _, err := db.Exec(`DROP TABLE ref_fts`); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

// sqliteQueryOf is queryOf in FTS5's syntax.
func sqliteQueryOf(q string) string {
	if q == "remote overflow" {
		return `("remote" "overflow"*)`
	}
	return `("` + q + `"*)`
}

// queryOf is the tsquery the store builds for plain words: whole words,
// the last also a prefix, all required.
func queryOf(q string) string {
	if q == "remote overflow" {
		return "(remote & overflow:*)"
	}
	return "(" + q + ":*)"
}

// sqliteRefAdvisories is the filtered advisory text search as SQLite ran
// it before ranking on the FTS5 rowids: every match joined to its row.
const sqliteRefAdvisories = `SELECT a.adv_id FROM (SELECT rowid AS rid, bm25(vuln_advisories_fts, 10.0, 1.0) AS score FROM vuln_advisories_fts WHERE vuln_advisories_fts MATCH ?) f
	JOIN vuln_advisories a ON a.id = f.rid
	WHERE EXISTS (SELECT 1 FROM vuln_advisory_packages p WHERE p.advisory_id = a.id AND (? = '' OR p.ecosystem = ? OR p.ecosystem_base = ?) AND (? = '' OR p.name = ?))
	ORDER BY f.score, a.id DESC LIMIT ?`

// On SQLite an advisory text search with an ecosystem or package ranks the
// FTS5 rowids before reading a row: it must answer what the join of every
// match answered.
func TestAdvisoryFilteredTextSearchMatchesJoin(t *testing.T) {
	each(t, func(t *testing.T, s *vulnstore.Store) {
		if !s.SyncsTextIndex() {
			t.Skip("PostgreSQL search is unchanged here")
		}
		ctx := context.Background()
		as := append(readOSV(t, vulnData+"osv/go"), readOSV(t, vulnData+"osv/ghsa")...)
		if _, err := s.UpsertAdvisories(ctx, as); err != nil {
			t.Fatal(err)
		}
		ecos := map[string]bool{}
		var pkg, pkgEco string
		for _, a := range as {
			for _, p := range a.Affected {
				ecos[strings.ToLower(p.Ecosystem)] = true
				if pkg == "" && strings.ToLower(p.Ecosystem) == "go" {
					pkg, pkgEco = strings.ToLower(p.Name), "go"
				}
			}
		}
		if len(ecos) < 3 || pkg == "" {
			t.Fatalf("testdata: ecosystems %v, package %q", ecos, pkg)
		}
		type search struct{ eco, pkg string }
		var searches []search
		for e := range ecos {
			searches = append(searches, search{eco: e})
		}
		searches = append(searches, search{pkg: pkg}, search{eco: pkgEco, pkg: pkg})
		nonEmpty := 0
		for _, q := range []string{"vulnerability", "denial of service", "attacker", "in", "remote code", "request"} {
			fq := `("` + strings.ReplaceAll(q, " ", `" "`) + `"*)`
			for _, sr := range searches {
				for _, limit := range []int{1, 3, 20} {
					hits, err := s.SearchAdvisories(ctx, vulnstore.VulnSearch{Query: q, Ecosystem: sr.eco, Package: sr.pkg, Limit: limit})
					if err != nil {
						t.Fatal(err)
					}
					var got, want []string
					for _, h := range hits {
						got = append(got, h.ID)
					}
					rows, err := s.Core().DB().Query(sqliteRefAdvisories, fq, sr.eco, sr.eco, sr.eco, sr.pkg, sr.pkg, limit)
					if err != nil {
						t.Fatal(err)
					}
					for rows.Next() {
						var id string
						if err := rows.Scan(&id); err != nil {
							t.Fatal(err)
						}
						want = append(want, id)
					}
					rows.Close()
					if len(want) > 0 {
						nonEmpty++
					}
					if !slices.Equal(got, want) {
						t.Errorf("%q %+v limit %d:\n got %v\nwant %v", q, sr, limit, got, want)
					}
				}
			}
		}
		if nonEmpty < 10 {
			t.Errorf("only %d searches found anything: the comparison shows little", nonEmpty)
		}
	})
}

// On PostgreSQL, OptimizeVulns puts vulns_search in date order after a
// load that left it scattered (the search walks it newest first), and the
// search answers the same.
func TestOptimizeOrdersNarrowTableByDate(t *testing.T) {
	each(t, func(t *testing.T, s *vulnstore.Store) {
		if s.SyncsTextIndex() {
			t.Skip("SQLite's vulns_search_fts is in date order by its rowids")
		}
		ctx := context.Background()
		base := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
		var vs []vuln.Vulnerability
		for i := range 3000 {
			vs = append(vs, vuln.Vulnerability{
				CVEID:        fmt.Sprintf("CVE-2020-%05d", 10000+i),
				Description:  fmt.Sprintf("A heap overflow in module %d", i%53),
				Published:    base.Add(time.Duration((i*7919)%3000) * time.Hour),
				LastModified: base,
			})
		}
		// Out of date order, in several transactions, as a load goes.
		for c := range slices.Chunk(vs, 700) {
			if _, err := s.UpsertVulns(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		db := s.Core().DB()
		outOfOrder := func() int {
			var n int
			if err := db.QueryRow(`SELECT COUNT(*) FROM (SELECT published, lag(published) OVER (ORDER BY ctid) AS prev FROM vulns_search) x
				WHERE published < prev`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		search := func() []string { return searchIDs(t, s, "overflow module", 50) }
		before := search()
		if n := outOfOrder(); n < 100 {
			t.Fatalf("the load left only %d rows out of date order: the test shows nothing", n)
		}
		if err := s.OptimizeVulns(ctx); err != nil {
			t.Fatal(err)
		}
		if n := outOfOrder(); n != 0 {
			t.Errorf("after OptimizeVulns %d rows of vulns_search are out of date order", n)
		}
		if after := search(); len(before) != 50 || !slices.Equal(after, before) {
			t.Errorf("search after ordering: %v, before %v", after, before)
		}
	})
}

// A feed keyword within a date window reads only the window's matches on
// SQLite (a rowid range of vulns_search_fts): every match published at or
// after the cutoff, and nothing before it, on both engines.
func TestFeedKeywordWindowMatchesScan(t *testing.T) {
	each(t, func(t *testing.T, s *vulnstore.Store) {
		ctx := context.Background()
		base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
		words := []string{"overflow", "injection", "traversal", "bypass"}
		var vs []vuln.Vulnerability
		for i := range 600 {
			vs = append(vs, vuln.Vulnerability{
				CVEID:        fmt.Sprintf("CVE-2024-%05d", 20000+i),
				Description:  fmt.Sprintf("A %s in component %d", words[i%len(words)], i%37),
				Published:    base.Add(time.Duration((i*7919)%600) * time.Hour),
				LastModified: base,
			})
		}
		if _, err := s.UpsertVulns(ctx, vs); err != nil {
			t.Fatal(err)
		}
		boundary := vs[5].Published.Unix() // a cutoff equal to a CVE's date
		for _, cutoff := range []int64{-5, 0, base.Unix(), boundary, boundary + 1, base.Add(300 * time.Hour).Unix(), base.Add(10000 * time.Hour).Unix()} {
			for _, w := range []string{"overflow", "injection", "component"} {
				var want []string
				for _, v := range vs {
					if v.Published.Unix() >= cutoff && strings.Contains(v.Description, w) {
						want = append(want, v.CVEID)
					}
				}
				slices.Sort(want)
				var got []string
				for off := 0; ; off += 100 {
					page, total, err := s.FeedVulns(ctx, vulnstore.VulnFilter{Cutoff: cutoff, Terms: []string{w}, Limit: 100, Offset: off})
					if err != nil {
						t.Fatal(err)
					}
					if total != len(want) {
						t.Errorf("cutoff %d %q: total %d, want %d", cutoff, w, total, len(want))
					}
					for _, v := range page {
						got = append(got, v.CVEID)
					}
					if len(page) < 100 {
						break
					}
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("cutoff %d %q: %d CVEs, want %d", cutoff, w, len(got), len(want))
				}
			}
		}
	})
}

// searchIDs runs a vulnerability text search and returns the CVE ids found,
// in order.
func searchIDs(t *testing.T, s *vulnstore.Store, q string, limit int) []string {
	t.Helper()
	hits, err := s.SearchVulns(context.Background(), vulnstore.VulnSearch{Query: q, Limit: limit})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.CVEID)
	}
	return ids
}
