package darkwebstore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// TestListingSeekBoundsTheScan checks that a listing page walked to from
// the page before it starts its scan at the kept position, and does not
// read every row before it: with the window's upper date bound beside the
// position, SQLite bounded its backward scan by the date alone and tested
// the position on each row, which on a domain ingested on one day (every
// row the same date) read all the rows of the earlier pages. The pages
// walked in order still list what one page lists.
func TestListingSeekBoundsTheScan(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			d, s, _ := open(t, engine)
			var recs []darkweb.Record
			for i := range 30 {
				r := darkweb.Record{Email: fmt.Sprintf("user%d.sentinel@example.com", i), Password: fmt.Sprintf("Secret%d", i), Breach: "ExampleBreach"}
				if err := d.Normalizer().Clean(&r); err != nil {
					t.Fatal(err)
				}
				recs = append(recs, r)
			}
			if _, err := d.Add(ctx, recs); err != nil {
				t.Fatal(err)
			}
			ks, _, from, to := d.scope(ListQuery{Domains: []string{"example.com"}}, codeCredDomain)
			w, args := window(ks, from, to, &pageAt{d: s.Now().Unix(), rec: 20}, "")
			plan := explain(t, d, `SELECT i.rec, i.d FROM darkweb_index i WHERE`+w+` ORDER BY i.d DESC, i.rec DESC LIMIT 10`, args...)
			if !strings.Contains(strings.NewReplacer(" ", "", "row", "").Replace(strings.ToLower(plan)), "(d,rec)<(") {
				t.Fatalf("the kept position is not a bound of the index scan:\n%s", plan)
			}
			for _, list := range []struct {
				name string
				page func(offset, limit int) ([]string, error)
			}{
				{"credentials", func(offset, limit int) ([]string, error) {
					got, _, err := d.Credentials(ctx, ListQuery{Domains: []string{"example.com"}, Offset: offset, Limit: limit})
					var ids []string
					for _, r := range got {
						ids = append(ids, r.ID)
					}
					return ids, err
				}},
				{"emails", func(offset, limit int) ([]string, error) {
					got, _, err := d.Emails(ctx, ListQuery{Domains: []string{"example.com"}, Offset: offset, Limit: limit})
					var ids []string
					for _, e := range got {
						ids = append(ids, e.Email)
					}
					return ids, err
				}},
			} {
				all, err := list.page(0, 100)
				if err != nil || len(all) != 30 {
					t.Fatalf("%s: one page: %d %v", list.name, len(all), err)
				}
				var walked []string
				for offset := 0; offset < 40; offset += 7 {
					got, err := list.page(offset, 7)
					if err != nil {
						t.Fatal(err)
					}
					walked = append(walked, got...)
				}
				if strings.Join(walked, ",") != strings.Join(all, ",") {
					t.Fatalf("%s: pages walked in order\n%v\nwant\n%v", list.name, walked, all)
				}
			}
		})
	}
}

// explain returns the engine's plan of q.
func explain(t *testing.T, d *Store, q string, args ...any) string {
	t.Helper()
	prefix := `EXPLAIN QUERY PLAN `
	if d.s.Engine() == "postgres" {
		prefix = `EXPLAIN `
	}
	rows, err := d.s.DB().QueryContext(context.Background(), d.s.Rebind(prefix+q), args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var b strings.Builder
	for rows.Next() {
		vals := make([]any, len(cols))
		for i := range vals {
			vals[i] = new(any)
		}
		if err := rows.Scan(vals...); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			fmt.Fprintf(&b, "%v ", *(v.(*any)))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestEmailsReadOnlyRepeatsByKey checks the repeats a build keeps
// (darkweb_repeats): an email under a domain is repeated when a second
// record of it is met in one build, or in a later build, and not
// otherwise; no repeats are trusted while records are staged; and the
// discovered-emails page, which reads only the repeated emails by their
// key, lists what reading every email by its key lists.
func TestEmailsReadOnlyRepeatsByKey(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			d, s, _ := open(t, engine)
			day := s.Now()
			s.Now = func() time.Time { return day }
			clean := func(recs ...darkweb.Record) []darkweb.Record {
				for i := range recs {
					if err := d.Normalizer().Clean(&recs[i]); err != nil {
						t.Fatal(err)
					}
				}
				return recs
			}
			rec := func(user, breach string) darkweb.Record {
				return darkweb.Record{Email: user + ".sentinel@mail.example.com", Password: "Secret-" + user + breach, Breach: breach, BreachDate: "2020-01-0" + breach[len(breach)-1:]}
			}
			// One build: ann twice, bob and cat once.
			if _, err := d.Add(ctx, clean(rec("ann", "Breach1"), rec("ann", "Breach2"), rec("bob", "Breach1"), rec("cat", "Breach1"))); err != nil {
				t.Fatal(err)
			}
			// A later one: bob again, dan new.
			day = day.AddDate(0, 0, 1)
			if _, err := d.Add(ctx, clean(rec("bob", "Breach3"), rec("dan", "Breach3"))); err != nil {
				t.Fatal(err)
			}
			key := func(user string) int64 { return d.key(darkweb.Email, user+".sentinel@mail.example.com") }
			users := []string{"ann", "bob", "cat", "dan"}
			var xs []int64
			for _, u := range users {
				xs = append(xs, key(u))
			}
			for _, dom := range []string{"example.com", "mail.example.com"} {
				ks, _, _, _ := d.scope(ListQuery{Domains: []string{dom}}, codeDomainEmail)
				many, err := d.repeated(ctx, ks, xs)
				if err != nil {
					t.Fatal(err)
				}
				want := map[int64]bool{key("ann"): true, key("bob"): true}
				if fmt.Sprint(many) != fmt.Sprint(want) {
					t.Fatalf("%s: repeats %v, want ann and bob %v", dom, many, want)
				}
			}
			got, total, err := d.Emails(ctx, ListQuery{Domains: []string{"example.com"}, Limit: 10})
			if err != nil || total != 4 {
				t.Fatalf("emails: %d %v", total, err)
			}
			var lines []string
			for _, e := range got {
				lines = append(lines, fmt.Sprintf("%s %d-%d %s %v", strings.SplitN(e.Email, ".", 2)[0], e.FirstSeen-got[len(got)-1].FirstSeen, e.LastSeen-got[len(got)-1].FirstSeen, e.BreachDate, e.Breaches))
			}
			const day1 = 86400
			want := []string{
				fmt.Sprintf("dan %d-%d 2020-01-03 [Breach3]", day1, day1),
				fmt.Sprintf("bob 0-%d 2020-01-03 [Breach3 Breach1]", day1),
				"cat 0-0 2020-01-01 [Breach1]",
				"ann 0-0 2020-01-02 [Breach2 Breach1]",
			}
			if strings.Join(lines, "\n") != strings.Join(want, "\n") {
				t.Fatalf("emails page:\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
			}
			// A record staged (as by a load not built yet): the repeats
			// are not trusted.
			if _, err := s.Exec(ctx, `INSERT INTO darkweb_stage (seq, d) SELECT MAX(seq) + 1, 0 FROM darkweb_records`); err != nil {
				t.Fatal(err)
			}
			ks, _, _, _ := d.scope(ListQuery{Domains: []string{"example.com"}}, codeDomainEmail)
			if many, err := d.repeated(ctx, ks, xs); err != nil || many != nil {
				t.Fatalf("repeats with records staged: %v %v", many, err)
			}
		})
	}
}
