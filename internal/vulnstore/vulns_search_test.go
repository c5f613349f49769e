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

// pgRefWindow is the window of the vulnerability text search as
// PostgreSQL chose it before the narrow vulns_search table (migration 16):
// the newest 500 matches of vulns.
const pgRefWindow = `SELECT v.id, v.published, v.cve_id, v.title, v.description FROM vulns v
	WHERE v.tsv @@ to_tsquery('english', $1) ORDER BY published DESC, id DESC LIMIT 500`

// sqliteRefWindow is the same on SQLite over an index of vulns built for
// the test (ref_fts, external content): the newest 500 matches by
// (published, id).
const sqliteRefWindow = `SELECT v.id, v.published, v.cve_id, v.title, v.description FROM vulns v
	WHERE v.id IN (SELECT rowid FROM ref_fts WHERE ref_fts MATCH ?1) ORDER BY published DESC, id DESC LIMIT 500`

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
			ref, fqOf := pgRefWindow, queryOf
			if s.SyncsTextIndex() {
				checkVulnIndex(t, s)
				ref, fqOf = sqliteRefWindow, sqliteQueryOf
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
					rows, err := db.Query(ref, fqOf(q))
					if err != nil {
						t.Fatal(err)
					}
					var window [][5]any
					for rows.Next() {
						var id, pub int64
						var cve, title, desc string
						if err := rows.Scan(&id, &pub, &cve, &title, &desc); err != nil {
							t.Fatal(err)
						}
						window = append(window, [5]any{id, pub, cve, title, desc})
					}
					rows.Close()
					want := vulnstore.RankVulnWindow(window, q, limit)
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
