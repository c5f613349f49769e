package darkwebstore

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// Pages of parallelPageMin records and more are read in two steps and in
// parallel chunks (pageRows): they hold the same records, in the same
// order, as the one-query form gives smaller pages, across chunk edges.
func TestLargePages(t *testing.T) {
	const n = 2*seqChunk + 37
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			d, _, _ := open(t, engine)
			var recs []darkweb.Record
			for i := range n {
				recs = append(recs, darkweb.Record{Email: fmt.Sprintf("user%d@example.com", i), Password: "SharedPassw0rd!", Breach: "Big", Source: "combolist"})
			}
			for start := 0; start < n; start += 100 {
				if _, err := d.Add(ctx, cleaned(t, d, recs[start:min(start+100, n)])); err != nil {
					t.Fatal(err)
				}
			}
			ids := func(rs []Result) []string {
				var out []string
				for _, r := range rs {
					out = append(out, r.ID)
				}
				return out
			}
			all, err := d.Search(ctx, Query{Type: darkweb.Password, Value: "SharedPassw0rd!", Limit: 1000, NoCache: true})
			if err != nil || len(all) != n {
				t.Fatalf("search: %d results, %v", len(all), err)
			}
			small, err := d.Search(ctx, Query{Type: darkweb.Password, Value: "SharedPassw0rd!", Limit: parallelPageMin - 1, NoCache: true})
			if err != nil || fmt.Sprint(ids(small)) != fmt.Sprint(ids(all[:parallelPageMin-1])) {
				t.Fatalf("the one-query page is not the start of the large one: %v", err)
			}
			seen := map[string]bool{}
			for _, r := range all {
				if seen[r.ID] || r.Record.Password != "SharedPassw0rd!" {
					t.Fatalf("result %+v repeated or wrong", r)
				}
				seen[r.ID] = true
			}
			var listed []Result
			for off := 0; off < n; off += 300 {
				page, total, err := d.Credentials(ctx, ListQuery{Domains: []string{"example.com"}, Limit: 300, Offset: off})
				if err != nil || total != n {
					t.Fatalf("credentials at %d: total %d, %v", off, total, err)
				}
				listed = append(listed, page...)
			}
			first, _, err := d.Credentials(ctx, ListQuery{Domains: []string{"example.com"}, Limit: 100})
			if err != nil || len(listed) != n || fmt.Sprint(ids(first)) != fmt.Sprint(ids(listed[:100])) {
				t.Fatalf("credentials: %d listed, %v", len(listed), err)
			}
			emails, total, err := d.Emails(ctx, ListQuery{Domains: []string{"example.com"}, Limit: 1000})
			if err != nil || total != n || len(emails) != n {
				t.Fatalf("emails: %d of %d, %v", len(emails), total, err)
			}
			for _, e := range emails {
				if e.Email == "" || len(e.Breaches) != 1 || e.Breaches[0] != "Big" {
					t.Fatalf("email row %+v", e)
				}
			}
		})
	}
}

func cleaned(t *testing.T, d *Store, recs []darkweb.Record) []darkweb.Record {
	t.Helper()
	out := make([]darkweb.Record, len(recs))
	for i, r := range recs {
		if err := d.Normalizer().Clean(&r); err != nil {
			t.Fatal(err)
		}
		out[i] = r
	}
	return out
}

// TestInOrder: chunks' rows are joined in the order of the page's record
// numbers, each with its own result; a number missing or given twice is
// reported, so that the caller orders the rows itself.
func TestInOrder(t *testing.T) {
	parts := [][]row{{{seq: 2}, {seq: 9}}, {{seq: 4}}}
	results := [][]Result{{{ID: "two"}, {ID: "nine"}}, {{ID: "four"}}}
	out, res, ok := inOrder([]int64{9, 4, 2}, parts, results)
	if !ok {
		t.Fatal("not ordered")
	}
	for i, want := range []struct {
		seq int64
		id  string
	}{{9, "nine"}, {4, "four"}, {2, "two"}} {
		if out[i].seq != want.seq || res[i].ID != want.id {
			t.Errorf("%d: seq %d id %s, want %d %s", i, out[i].seq, res[i].ID, want.seq, want.id)
		}
	}
	for _, seqs := range [][]int64{{9, 4, 2, 7}, {9, 4, 4}, {9, 4}} {
		if _, _, ok := inOrder(seqs, parts, results); ok {
			t.Errorf("seqs %v: ordered though a row is missing, extra or twice", seqs)
		}
	}
}

// TestMalformedMetadataRefused: a record row whose metadata would not
// split into its four fields (a breach name holding the separator, written
// around the ingest's checks) fails the read instead of showing shifted
// fields.
func TestMalformedMetadataRefused(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			d, s, _ := open(t, engine)
			recs := cleaned(t, d, []darkweb.Record{{Email: "meta@example.com", Password: "MetaPassw0rd!", Breach: "Meta", Source: "combolist"}})
			if _, err := d.Add(ctx, recs); err != nil {
				t.Fatal(err)
			}
			if _, err := s.DB().ExecContext(ctx, s.Rebind(`UPDATE darkweb_records SET breach = ?`), "Me\x1fta"); err != nil {
				t.Fatal(err)
			}
			_, err := d.Search(ctx, Query{Type: darkweb.Email, Value: "meta@example.com", Limit: 10, NoCache: true})
			if !errors.Is(err, errMeta) {
				t.Fatalf("search of a malformed row: %v, want errMeta", err)
			}
		})
	}
}
