package darkwebstore

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// noSecretRecords returns n cleaned records under example.org without a
// password or hash (listed as emails, not as credentials), numbered from
// first.
func noSecretRecords(t *testing.T, d *Store, first, n int) []darkweb.Record {
	t.Helper()
	recs := make([]darkweb.Record, n)
	for i := range recs {
		recs[i] = darkweb.Record{Email: fmt.Sprintf("plain%d@example.org", first+i), Name: fmt.Sprintf("Plain Person %d", first+i), Breach: "PlainBreach", Source: "breach-csv"}
		if err := d.Normalizer().Clean(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return recs
}

// listingPages reads every page of both listings of example.org (pages of
// limit, walked in order) and returns them as comparable text, with how
// many records the heads served while reading them.
func listingPages(t *testing.T, d *Store, limit int) (pages []string, fromHeads int64) {
	t.Helper()
	ctx := context.Background()
	hits := d.headHits.Load()
	for offset := 0; ; offset += limit {
		got, total, err := d.Credentials(ctx, ListQuery{Domains: []string{"example.org"}, Offset: offset, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "credentials %d total %d:", offset, total)
		for _, r := range got {
			fmt.Fprintf(&b, " %s/%s/%s/%d", r.ID, r.Record.Email, r.Record.Password, r.DateAdded)
		}
		pages = append(pages, b.String())
		if len(got) < limit {
			break
		}
	}
	for offset := 0; ; offset += limit {
		got, total, err := d.Emails(ctx, ListQuery{Domains: []string{"example.org"}, Offset: offset, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, fmt.Sprintf("emails %d total %d: %+v", offset, total, got))
		if len(got) < limit {
			break
		}
	}
	return pages, d.headHits.Load() - hits
}

// TestListingHeads checks that both listings answer from a domain's
// listing head exactly what they answer without one: after the head is
// built (credentials passing over records without a secret), after
// records are ingested past it and it is topped up, when a head row does
// not open, and after a rotation drops every head.
func TestListingHeads(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			d, s, _ := open(t, engine)
			d.listBatch = 120 // a head copied in several transactions
			t1 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
			t2, t3, t4 := t1.Add(24*time.Hour), t1.Add(48*time.Hour), t1.Add(72*time.Hour)
			addAt(t, d, s, t1, headRecords(t, d, 0, 300))
			addAt(t, d, s, t2, append(noSecretRecords(t, d, 0, 100), headRecords(t, d, 300, 150)...))
			addAt(t, d, s, t3, headRecords(t, d, 450, 150))
			const limit = 260 // two-step pages (parallelPageMin)
			want, hits := listingPages(t, d, limit)
			if len(want) != 6 || hits != 0 {
				t.Fatalf("before heads: %d pages, %d records from heads; want 6 and none", len(want), hits)
			}
			st, err := d.BuildHeads(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// example.org's emails listing key: its 700 records.
			if st.Lists != 1 || st.ListsBuilt != 1 || st.ListRows != 700 {
				t.Fatalf("first pass: %+v, want one listing head of 700 rows", st)
			}
			got, hits := listingPages(t, d, limit)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("from the head:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			// Every full page's records: credentials 260+260, emails
			// 260+260 (the last pages are smaller than a two-step page).
			if hits != 4*limit {
				t.Fatalf("%d records from the listing head, want %d", hits, 4*limit)
			}

			// Records ingested after the head: read by number until the
			// next pass tops the head up with them alone.
			addAt(t, d, s, t4, headRecords(t, d, 600, 50))
			want, _ = listingPages(t, d, limit)
			if st, err = d.BuildHeads(ctx); err != nil || st.ListsBuilt != 1 || st.ListRows != 50 {
				t.Fatalf("pass after an ingest: %+v %v, want the head topped up with 50 rows", st, err)
			}
			if got, hits = listingPages(t, d, limit); !reflect.DeepEqual(got, want) || hits != 4*limit {
				t.Fatalf("topped-up head: %d records from it\n%s\nwant\n%s", hits, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			var n int
			if err := s.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM darkweb_heads WHERE k >= 1297036692682702848`).Scan(&n); err != nil || n != 750 {
				t.Fatalf("%d listing head rows (%v), want 750", n, err)
			}

			// Head rows that do not open (sealed with a key this store does
			// not hold): the pages are read without them.
			if _, err := s.DB().ExecContext(ctx, `UPDATE darkweb_heads SET key_id = 'ffffffffffffffff'`); err != nil {
				t.Fatal(err)
			}
			if got, hits = listingPages(t, d, limit); !reflect.DeepEqual(got, want) || hits != 0 {
				t.Fatalf("head rows that do not open: %d records from the head\n%s\nwant\n%s", hits, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			// A head whose newest row is sealed with another key is copied
			// again whole by the next pass (after an ingest).
			addAt(t, d, s, t4.Add(time.Hour), noSecretRecords(t, d, 100, 1))
			if st, err = d.BuildHeads(ctx); err != nil || st.ListRows != 751 {
				t.Fatalf("pass over a head sealed with another key: %+v %v, want 751 rows copied", st, err)
			}

			// Records sealed with another key (a rotation under way): a
			// head copied again whole copies their rows as they are, batch
			// after batch, without starting over at each batch.
			for _, q := range []string{`UPDATE darkweb_records SET key_id = 'ffffffffffffffff'`, `UPDATE darkweb_heads SET key_id = 'ffffffffffffffff'`} {
				if _, err := s.DB().ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			addAt(t, d, s, t4.Add(2*time.Hour), noSecretRecords(t, d, 101, 1))
			if st, err = d.BuildHeads(ctx); err != nil || st.ListRows != 752 {
				t.Fatalf("pass over records sealed with another key: %+v %v, want 752 rows copied", st, err)
			}
			if _, err := s.DB().ExecContext(ctx, s.Rebind(`UPDATE darkweb_records SET key_id = ?`), d.keys.ID()); err != nil {
				t.Fatal(err)
			}

			// A rotation drops the heads with the index; the next pass
			// builds them under the new keys.
			if err := d.Rotate(ctx, keyring(t, 1), keyring(t, 2), nil); err != nil {
				t.Fatal(err)
			}
			want, _ = listingPages(t, d, limit)
			if st, err = d.BuildHeads(ctx); err != nil || st.ListsBuilt != 1 || st.ListRows != 752 {
				t.Fatalf("pass after rotation: %+v %v", st, err)
			}
			if got, hits = listingPages(t, d, limit); !reflect.DeepEqual(got, want) || hits != 4*limit {
				t.Fatalf("head after rotation: %d records from it\n%s\nwant\n%s", hits, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestListHeadSpanIsARange checks that a listing head's span is read as a
// range of its primary key, bounded on both sides.
func TestListHeadSpanIsARange(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			d, _, _ := open(t, engine)
			plan := strings.ToLower(explain(t, d, sqlListHeadSpan, int64(1), int64(2), int64(3), int64(1), int64(1), 10))
			flat := strings.NewReplacer(" ", "", "row", "").Replace(plan)
			if !strings.Contains(flat, "(d,rec)>") || !strings.Contains(flat, "(d,rec)<") {
				t.Fatalf("the span is not a bounded range of the primary key:\n%s", plan)
			}
		})
	}
}

// Migration 50 forgets the head builder's last pass, so that the first
// pass after an upgrade builds the listing heads of the records stored.
func TestUpgradeTo0050BuildsListingHeads(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			d, s, _ := open(t, engine)
			addAt(t, d, s, time.Now(), headRecords(t, d, 0, 300))
			if _, err := d.BuildHeads(ctx); err != nil {
				t.Fatal(err)
			}
			// As a release before listing heads left the store: the pass
			// done, no listing head.
			if _, err := s.DB().ExecContext(ctx, `DELETE FROM darkweb_heads WHERE k >= 1297036692682702848`); err != nil {
				t.Fatal(err)
			}
			if st, err := d.BuildHeads(ctx); err != nil || !st.Skipped {
				t.Fatalf("pass before the migration: %+v %v, want skipped", st, err)
			}
			migrateFile(t, s, engine, "0050_darkweb_listing_heads.sql")
			st, err := d.BuildHeads(ctx)
			if err != nil || st.Skipped || st.ListsBuilt != 1 || st.ListRows != 300 {
				t.Fatalf("pass after the migration: %+v %v, want the listing head built", st, err)
			}
		})
	}
}

// migrateFile runs one of the engine's migration files on s.
func migrateFile(t *testing.T, s *store.Store, engine, name string) {
	t.Helper()
	b, err := migrations.ReadFile("migrations/" + engine + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(context.Background(), string(b)); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}
