package darkwebstore

import (
	"context"
	"fmt"
	"strings"
	"testing"

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
