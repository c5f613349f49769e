package darkwebstore

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// headRecords returns n cleaned records sharing one address (a search key
// with a head once n reaches headMin), numbered from first.
func headRecords(t *testing.T, d *Store, first, n int) []darkweb.Record {
	t.Helper()
	recs := make([]darkweb.Record, n)
	for i := range recs {
		recs[i] = darkweb.Record{Email: fmt.Sprintf("head%d@example.org", first+i), Password: fmt.Sprintf("HeadSecret-%d", first+i),
			Address: "1 Sentinel Street, Springfield", Breach: "HeadBreach", Source: "breach-csv"}
		if err := d.Normalizer().Clean(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return recs
}

// addAt adds recs as ingested at the given time.
func addAt(t *testing.T, d *Store, s *store.Store, at time.Time, recs []darkweb.Record) {
	t.Helper()
	s.Now = func() time.Time { return at }
	if res, err := d.Add(context.Background(), recs); err != nil || res.Added != len(recs) {
		t.Fatalf("add: %+v %v", res, err)
	}
}

// addressPage searches the shared address, bypassing the answer cache.
func addressPage(t *testing.T, d *Store, from, to int64, limit int) []Result {
	t.Helper()
	got, err := d.Search(context.Background(), Query{Type: darkweb.Address, Value: "1 sentinel street, springfield", From: from, To: to, Limit: limit, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func ids(res []Result) []string {
	out := make([]string, len(res))
	for i, r := range res {
		out[i] = r.ID
	}
	return out
}

// samePage fails unless got is want, record for record, in order, with
// the same contents.
func samePage(t *testing.T, what string, got, want []Result) {
	t.Helper()
	if !slices.Equal(ids(got), ids(want)) {
		t.Fatalf("%s: %d records %v…, want %d %v…", what, len(got), ids(got)[:min(3, len(got))], len(want), ids(want)[:min(3, len(want))])
	}
	for i := range got {
		if got[i].Record.Email != want[i].Record.Email || got[i].Record.Password != want[i].Record.Password || got[i].DateAdded != want[i].DateAdded {
			t.Fatalf("%s: record %d is %+v, want %+v", what, i, got[i], want[i])
		}
	}
}

// TestHeads checks that a search answers from a key's head exactly what
// it answers without one: after the head is built, after records are
// ingested past it (the head is behind: the new ones are read from the
// records table), within date bounds, after a rotation drops every head,
// and when a head row cannot be opened.
func TestHeads(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			d, s, _ := open(t, engine)
			t1 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
			t2, t3, t4 := t1.Add(24*time.Hour), t1.Add(48*time.Hour), t1.Add(72*time.Hour)
			addAt(t, d, s, t1, headRecords(t, d, 0, 300))
			addAt(t, d, s, t2, headRecords(t, d, 300, 200))
			addAt(t, d, s, t3, headRecords(t, d, 500, 100))
			want := addressPage(t, d, 0, 0, 1000)
			if len(want) != 600 {
				t.Fatalf("%d records before heads, want 600", len(want))
			}
			for i := 1; i < len(want); i++ {
				if want[i].DateAdded > want[i-1].DateAdded {
					t.Fatalf("page not newest first at %d", i)
				}
			}
			wantFrom := addressPage(t, d, t2.Unix(), 0, 1000)
			if len(wantFrom) != 300 {
				t.Fatalf("%d records from t2, want 300", len(wantFrom))
			}
			st, err := d.BuildHeads(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// The address and the records' email domain (example.org).
			if st.Keys != 2 || st.Built != 2 || st.Rows != 1200 || st.Skipped {
				t.Fatalf("first pass: %+v, want 2 keys built with 1,200 rows", st)
			}
			if st, err := d.BuildHeads(ctx); err != nil || !st.Skipped {
				t.Fatalf("second pass with nothing new: %+v %v, want skipped", st, err)
			}
			hits := d.headHits.Load()
			samePage(t, "from the head", addressPage(t, d, 0, 0, 1000), want)
			if got := d.headHits.Load() - hits; got != 600 {
				t.Fatalf("%d records from the head, want 600", got)
			}
			samePage(t, "from the head, from t2", addressPage(t, d, t2.Unix(), 0, 1000), wantFrom)
			samePage(t, "from the head, 300 a page", addressPage(t, d, 0, 0, 300), want[:300])
			samePage(t, "from the head, up to t2", addressPage(t, d, 0, t2.Unix()+3600, 1000), want[100:])

			// Records ingested after the head: the page holds them (read
			// from the records table), the rest still comes from the head.
			addAt(t, d, s, t4, headRecords(t, d, 600, 50))
			hits = d.headHits.Load()
			got := addressPage(t, d, 0, 0, 1000)
			if len(got) != 650 || d.headHits.Load()-hits != 600 {
				t.Fatalf("behind head: %d records, %d from the head; want 650 and 600", len(got), d.headHits.Load()-hits)
			}
			samePage(t, "behind head, older part", got[50:], want)
			for _, r := range got[:50] {
				if r.DateAdded != t4.Unix() {
					t.Fatalf("behind head: the newest 50 are not the new records: %+v", r)
				}
			}
			want = got
			st, err = d.BuildHeads(ctx)
			if err != nil || st.Skipped || st.Built != 2 || st.Rows != 1300 {
				t.Fatalf("pass after an ingest: %+v %v, want both heads rebuilt with 1,300 rows", st, err)
			}
			hits = d.headHits.Load()
			samePage(t, "rebuilt head", addressPage(t, d, 0, 0, 1000), want)
			if got := d.headHits.Load() - hits; got != 650 {
				t.Fatalf("%d records from the rebuilt head, want 650", got)
			}

			// A head row that does not open (sealed with a key this store
			// does not hold): the page is read without the head.
			if _, err := s.DB().ExecContext(ctx, s.Rebind(`UPDATE darkweb_heads SET key_id = 'ffffffffffffffff' WHERE rec = (SELECT MAX(rec) FROM darkweb_heads)`)); err != nil {
				t.Fatal(err)
			}
			hits = d.headHits.Load()
			samePage(t, "head row that does not open", addressPage(t, d, 0, 0, 1000), want)
			if got := d.headHits.Load() - hits; got != 0 {
				t.Fatalf("%d records from a head that does not open", got)
			}

			// A rotation changes every key: the heads go with the index,
			// and the next pass builds them under the new keys.
			if err := d.Rotate(ctx, keyring(t, 1), keyring(t, 2), nil); err != nil {
				t.Fatal(err)
			}
			var n int
			if err := s.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM darkweb_heads`).Scan(&n); err != nil || n != 0 {
				t.Fatalf("%d head rows after a rotation (%v), want none", n, err)
			}
			samePageIgnoringIDs(t, "after rotation", addressPage(t, d, 0, 0, 1000), want)
			st, err = d.BuildHeads(ctx)
			if err != nil || st.Built != 2 {
				t.Fatalf("pass after rotation: %+v %v", st, err)
			}
			hits = d.headHits.Load()
			samePageIgnoringIDs(t, "head after rotation", addressPage(t, d, 0, 0, 1000), want)
			if got := d.headHits.Load() - hits; got != 650 {
				t.Fatalf("%d records from the head after rotation, want 650", got)
			}
		})
	}
}

// samePageIgnoringIDs is samePage for a page read after a rotation, which
// gives records new ids: same records (by email), same order.
func samePageIgnoringIDs(t *testing.T, what string, got, want []Result) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d records, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i].Record.Email != want[i].Record.Email || got[i].Record.Password != want[i].Record.Password || got[i].DateAdded != want[i].DateAdded {
			t.Fatalf("%s: record %d is %+v, want %+v", what, i, got[i].Record, want[i].Record)
		}
	}
}

// TestStatus checks the operator's status: records staged by a loader
// until it closes, how far the heads trail the records, and the records
// answered from heads.
func TestStatus(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			d, s, _ := open(t, engine)
			status := func() Status {
				t.Helper()
				st, err := d.Status(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return st
			}
			if st := status(); st != (Status{}) {
				t.Fatalf("empty store: %+v", st)
			}
			l, err := d.Loader(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.Add(ctx, headRecords(t, d, 0, 300)); err != nil {
				t.Fatal(err)
			}
			// The loader writes a batch on a goroutine of its own.
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				st := status()
				if st.Staged == 300 && st.HeadsBehind == 300 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("loading: %+v, want 300 staged and behind", st)
				}
			}
			d.stagedMax = 120 // the count stops at its bound
			if st := status(); st.Staged != 120 {
				t.Fatalf("loading, count bounded at 120: %+v", st)
			}
			d.stagedMax = 0
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if st := status(); st.Staged != 0 || st.HeadsBehind != 300 {
				t.Fatalf("loaded: %+v, want none staged, 300 behind", st)
			}
			if _, err := d.BuildHeads(ctx); err != nil {
				t.Fatal(err)
			}
			if st := status(); st.HeadsBehind != 0 || st.HeadRecords != 0 {
				t.Fatalf("heads built: %+v, want current, none read", st)
			}
			if got := addressPage(t, d, 0, 0, 1000); len(got) != 300 {
				t.Fatalf("%d records, want 300", len(got))
			}
			addAt(t, d, s, time.Now(), headRecords(t, d, 300, 20))
			if st := status(); st.HeadsBehind != 20 || st.HeadRecords != 300 {
				t.Fatalf("after a search and an ingest: %+v, want 20 behind, 300 read from heads", st)
			}
		})
	}
}
