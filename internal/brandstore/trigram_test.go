package brandstore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/brand"
	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// storeFindings stores n findings of o, alternating typosquatting and
// potential phishing, as the listing benchmark of periscope-bench does.
func storeFindings(tb testing.TB, s *brandstore.Store, o periscope.Organization, n int, now int64) {
	tb.Helper()
	batch := make([]brandstore.Finding, 0, 5000)
	for i := range n {
		kind := brand.TypoSquatting
		if i%2 == 1 {
			kind = brand.PotentialPhishing
		}
		batch = append(batch, brandstore.Finding{
			OrganizationID: o.ID, AccountID: o.AccountID, Kind: kind,
			Domain: fmt.Sprintf("brand%d-%d.example", i%1000, i), BaseDomain: fmt.Sprintf("brand%d.com", i%1000),
			Fuzzer: "replacement", Score: 20 + i%80, Reason: "generated",
			DNS:      host.DNS{A: []string{fmt.Sprintf("198.51.100.%d", i%250)}},
			LastSeen: now - int64(i%365)*86400,
		})
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := s.UpsertFindings(context.Background(), batch); err != nil {
				tb.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}

// The substring filter answers exactly what a LIKE over every finding
// answers, for short, long, upper-case, quoted and wildcard-bearing q, and
// forgets the names of findings deleted with their organization.
func TestSubstringFilterMatchesLikeScan(t *testing.T) {
	each(t, func(t *testing.T, s *brandstore.Store) {
		ctx := context.Background()
		o := brandOrg(t, s)
		storeFindings(t, s, o, 600, 1_800_000_000)
		odd := []brandstore.Finding{
			{OrganizationID: o.ID, AccountID: o.AccountID, Kind: brand.TypoSquatting, Domain: `we"ird_10%.example`, BaseDomain: "brand1.com", Score: 50, LastSeen: 1},
			{OrganizationID: o.ID, AccountID: o.AccountID, Kind: brand.TypoSquatting, Domain: "xn--bcher-kva.example", BaseDomain: "brand2.com", Score: 50, LastSeen: 1},
		}
		if _, err := s.UpsertFindings(ctx, odd); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"brand8-", "BRAND8-", "nd1", "d1", "-", "1%", "_10", `"ird`, `we"ird_10%`, "brand1.com", "kva.ex", "zzz", "rand5-5", ".example"} {
			for _, kind := range []string{brand.TypoSquatting, brand.PotentialPhishing} {
				lq := brandstore.ListQuery{AccountID: o.AccountID, Kind: kind, Q: q, Limit: 1000}
				got, total, err := s.Findings(ctx, lq)
				if err != nil {
					t.Fatalf("q %q: %v", q, err)
				}
				all, _, err := s.Findings(ctx, brandstore.ListQuery{AccountID: o.AccountID, Kind: kind, Limit: 1000})
				if err != nil {
					t.Fatal(err)
				}
				var want []string
				for _, f := range all {
					if strings.Contains(f.Domain, strings.ToLower(q)) || strings.Contains(f.BaseDomain, strings.ToLower(q)) {
						want = append(want, f.Domain)
					}
				}
				var names []string
				for _, f := range got {
					names = append(names, f.Domain)
				}
				if !slices.Equal(names, want) || total != len(want) {
					t.Errorf("q %q %s: %d of %d found, want %d", q, kind, len(names), total, len(want))
				}
			}
		}
		// A second organization's findings, deleted with it, leave the
		// filter (and on SQLite the trigram table) as they were.
		_, before, err := s.Findings(ctx, brandstore.ListQuery{AccountID: o.AccountID, Kind: brand.TypoSquatting, Q: "brand8-"})
		if err != nil {
			t.Fatal(err)
		}
		o2 := periscope.Organization{AccountID: o.AccountID, Name: "second"}
		if err := s.Core().CreateOrganization(ctx, &o2); err != nil {
			t.Fatal(err)
		}
		storeFindings(t, s, o2, 100, 1_800_000_000)
		if _, during, err := s.Findings(ctx, brandstore.ListQuery{AccountID: o.AccountID, Kind: brand.TypoSquatting, Q: "brand8-"}); err != nil || during == before {
			t.Fatalf("the second organization's findings are not listed: %d, %v", during, err)
		}
		if err := s.Core().DeleteOrganization(ctx, o.AccountID, o2.ID); err != nil {
			t.Fatal(err)
		}
		if _, after, err := s.Findings(ctx, brandstore.ListQuery{AccountID: o.AccountID, Kind: brand.TypoSquatting, Q: "brand8-"}); err != nil || after != before {
			t.Errorf("after deleting the second organization: %d found, want %d (%v)", after, before, err)
		}
		if s.Core().Engine() == "sqlite" {
			if _, err := s.Core().DB().ExecContext(ctx, "INSERT INTO brand_findings_grams (brand_findings_grams) VALUES ('integrity-check')"); err != nil {
				t.Errorf("trigram table: %v", err)
			}
		}
	})
}

// BenchmarkFindingsSubstring compares, in one run over 50,000 findings of
// one organization, the substring-filtered typosquatting page with the
// LIKE scanning the listing index ("before": SQLite without the trigram
// table, PostgreSQL with its trigram indexes dropped) and with the trigram
// indexes of migration 14 ("after"); and the unfiltered pages.
func BenchmarkFindingsSubstring(b *testing.B) {
	for _, e := range storetest.Engines() {
		b.Run(e, func(b *testing.B) {
			ctx := context.Background()
			s := brandstore.New(storetest.Open(b, e, brandstore.Migrations()))
			o := brandOrg(b, s)
			storeFindings(b, s, o, 50_000, s.Core().Now().Unix())
			if err := s.Core().VacuumAnalyze(ctx, "brand_findings"); err != nil {
				b.Fatal(err)
			}
			filtered := brandstore.ListQuery{AccountID: o.AccountID, Kind: brand.TypoSquatting, Q: "brand8-", From: 1_767_225_600, Limit: 10, RawJSON: true}
			page := brandstore.ListQuery{AccountID: o.AccountID, Kind: brand.TypoSquatting, Limit: 10, RawJSON: true}
			phish := brandstore.ListQuery{AccountID: o.AccountID, Kind: brand.PotentialPhishing, Limit: 1000, RawJSON: true}
			run := func(name string, s *brandstore.Store, q brandstore.ListQuery) {
				b.Run(name, func(b *testing.B) {
					for b.Loop() {
						if _, _, err := s.Findings(ctx, q); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
			if e == "postgres" {
				if _, err := s.Core().DB().ExecContext(ctx, "DROP INDEX brand_findings_domain_trgm, brand_findings_base_trgm"); err != nil {
					b.Fatal(err)
				}
			}
			run("q/before", s.WithoutTrigrams(), filtered)
			if e == "postgres" {
				if _, err := s.Core().DB().ExecContext(ctx, `CREATE INDEX brand_findings_domain_trgm ON brand_findings USING gin (domain public.gin_trgm_ops);
					CREATE INDEX brand_findings_base_trgm ON brand_findings USING gin (base_domain public.gin_trgm_ops); ANALYZE brand_findings`); err != nil {
					b.Fatal(err)
				}
			}
			run("q/after", s, filtered)
			run("page/before", s.WithoutTrigrams(), page)
			run("page/after", s, page)
			run("phishing1000/before", s.WithoutTrigrams(), phish)
			run("phishing1000/after", s, phish)
		})
	}
}

// The kept counts equal a walk of the findings through inserts, updates
// that change a finding's kind, and an organization's deletion.
func TestFindingCountsMatchAWalk(t *testing.T) {
	each(t, func(t *testing.T, s *brandstore.Store) {
		ctx := context.Background()
		o := brandOrg(t, s)
		check := func(when string) {
			t.Helper()
			for _, kind := range []string{brand.TypoSquatting, brand.PotentialPhishing} {
				q := brandstore.ListQuery{AccountID: o.AccountID, Kind: kind, Limit: 1}
				_, kept, err := s.Findings(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				_, walked, err := s.WithoutTrigrams().Findings(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if kept != walked {
					t.Errorf("%s, %s: kept count %d, walk %d", when, kind, kept, walked)
				}
			}
		}
		check("empty")
		storeFindings(t, s, o, 300, 1_800_000_000)
		check("stored")
		storeFindings(t, s, o, 300, 1_800_000_000) // the same findings again: unchanged
		check("stored twice")
		// The same domains with their kinds swapped.
		var swap []brandstore.Finding
		for i := range 40 {
			kind := brand.PotentialPhishing
			if i%2 == 1 {
				kind = brand.TypoSquatting
			}
			swap = append(swap, brandstore.Finding{OrganizationID: o.ID, AccountID: o.AccountID, Kind: kind,
				Domain: fmt.Sprintf("brand%d-%d.example", i%1000, i), BaseDomain: fmt.Sprintf("brand%d.com", i%1000), Score: 90, LastSeen: 1_800_000_001})
		}
		if _, err := s.UpsertFindings(ctx, swap); err != nil {
			t.Fatal(err)
		}
		check("kinds swapped")
		o2 := periscope.Organization{AccountID: o.AccountID, Name: "second"}
		if err := s.Core().CreateOrganization(ctx, &o2); err != nil {
			t.Fatal(err)
		}
		storeFindings(t, s, o2, 50, 1_800_000_000)
		check("second organization")
		if err := s.Core().DeleteOrganization(ctx, o.AccountID, o2.ID); err != nil {
			t.Fatal(err)
		}
		check("second organization deleted")
	})
}
