package darkwebstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

func keyring(t *testing.T, b byte) *darkweb.Keyring {
	t.Helper()
	k, err := darkweb.NewKeyring(bytes.Repeat([]byte{b}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// open returns an unlocked store on a fresh database of engine and its DSN.
func open(t *testing.T, engine string) (*Store, *store.Store, string) {
	t.Helper()
	dsn := storetest.DSN(t, engine)
	s, err := store.Open(context.Background(), dsn, store.Files(Migrations()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Migrate(context.Background(), Migrations()); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return now }
	d := New(s)
	if err := d.Unlock(context.Background(), keyring(t, 1)); err != nil {
		t.Fatal(err)
	}
	return d, s, dsn
}

// openFixtures is open with the fixtures added.
func openFixtures(t *testing.T, engine string) (*Store, *store.Store, string) {
	t.Helper()
	d, s, dsn := open(t, engine)
	if _, err := d.Add(context.Background(), fixtures(t, d)); err != nil {
		t.Fatal(err)
	}
	return d, s, dsn
}

// fixtures are synthetic records with reserved values only.
func fixtures(t *testing.T, d *Store) []darkweb.Record {
	t.Helper()
	recs := []darkweb.Record{
		{Email: "Alice.Sentinel@Example.com", Password: "SentinelPassw0rd!", Name: "Alice Sentinelperson", Phone: "(202) 555-0143", Breach: "ExampleBreach", BreachDate: "2020-01-02", Source: "breach-csv"},
		{Email: "bob.sentinel@mail.example.com", HashedPassword: []string{strings.Repeat("ab", 16)}, Breach: "ExampleBreach", Source: "dehashed"},
		{Email: "carol.sentinel@example.org", Password: "CarolSecret99", IP: "192.0.2.44", Breach: "Other", Source: "combolist"},
		{Username: "dave_sentinel", Password: "DaveSecret77", URL: "https://login.example.com/x", Hostname: "DESKTOP-SENTINEL", MAC: "00:11:22:33:44:55", Breach: "Stealer", Source: "stealer"},
		{Email: "erin.sentinel@example.com", Name: "Erin Sentinelperson", VIN: "1HGCM82633A004352", Breach: "Other", Source: "breach-csv"},
	}
	n := d.Normalizer()
	for i := range recs {
		if err := n.Clean(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return recs
}

func TestAddSearchList(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			d, s, _ := open(t, engine)
			recs := fixtures(t, d)
			res, err := d.Add(ctx, recs)
			if err != nil || res.Added != 5 {
				t.Fatalf("add: %+v %v", res, err)
			}
			res, err = d.Add(ctx, fixtures(t, d))
			if err != nil || res.Added != 0 || res.Duplicates != 5 {
				t.Fatalf("re-add not idempotent: %+v %v", res, err)
			}
			for _, c := range []struct {
				t    darkweb.Type
				v    string
				want int
			}{
				{darkweb.Email, "ALICE.SENTINEL@example.com", 1}, {darkweb.Domain, "example.com", 4}, {darkweb.Domain, "www.example.com", 4},
				{darkweb.Phone, "+1 202-555-0143", 1}, {darkweb.Name, "alice  SENTINELPERSON", 1}, {darkweb.IP, "192.0.2.44", 1},
				{darkweb.Password, "CarolSecret99", 1}, {darkweb.Password, "carolsecret99", 0}, {darkweb.HashedPassword, strings.Repeat("AB", 16), 1},
				{darkweb.Hostname, "desktop-sentinel", 1}, {darkweb.Hostname, "login.example.com", 1}, {darkweb.MAC, "001122334455", 1},
				{darkweb.VIN, "1hgcm82633a004352", 1}, {darkweb.Username, "DAVE_SENTINEL", 1}, {darkweb.Email, "nobody@example.com", 0},
			} {
				got, err := d.Search(ctx, Query{Type: c.t, Value: c.v, Limit: 10})
				if err != nil || len(got) != c.want {
					t.Errorf("search %s %q: %d results, %v; want %d", c.t, c.v, len(got), err, c.want)
				}
			}
			got, _ := d.Search(ctx, Query{Type: darkweb.Email, Value: "alice.sentinel@example.com", Limit: 10})
			if r := got[0].Record; r.Password != "SentinelPassw0rd!" || r.Phone != "+12025550143" || r.Breach != "ExampleBreach" || r.BreachDate != "2020-01-02" {
				t.Fatalf("record read back %+v", r)
			}
			if err := d.PutBreach(ctx, darkweb.BreachInfo{Name: "Other", BreachDate: "2019-07-08"}); err != nil {
				t.Fatal(err)
			}
			if got, _ := d.Search(ctx, Query{Type: darkweb.IP, Value: "192.0.2.44", Limit: 10, NoCache: true}); got[0].Record.BreachDate != "2019-07-08" {
				t.Fatalf("breach date from the catalogue: %+v", got[0].Record)
			}
			if _, err := d.Search(ctx, Query{Type: darkweb.Email, Value: "not-an-email", Limit: 10}); err == nil {
				t.Fatal("invalid email searched")
			}
			day := s.Now().Unix()
			if got, _ := d.Search(ctx, Query{Type: darkweb.Domain, Value: "example.com", From: day + 1, Limit: 10, NoCache: true}); len(got) != 0 {
				t.Fatalf("from after date_added matched %d", len(got))
			}

			creds, total, err := d.Credentials(ctx, ListQuery{Domains: []string{"example.com"}, Limit: 10})
			if err != nil || total != 2 || len(creds) != 2 {
				t.Fatalf("credentials: %d/%d %v", len(creds), total, err)
			}
			creds, total, _ = d.Credentials(ctx, ListQuery{Domains: []string{"mail.example.com"}, Limit: 10})
			if total != 1 || creds[0].Record.Email != "bob.sentinel@mail.example.com" {
				t.Fatalf("subdomain credentials: %d %+v", total, creds)
			}
			emails, total, err := d.Emails(ctx, ListQuery{Domains: []string{"example.com", "example.org"}, Limit: 2})
			if err != nil || total != 4 || len(emails) != 2 || emails[0].Email == "" || len(emails[0].Breaches) == 0 {
				t.Fatalf("emails: %+v %d %v", emails, total, err)
			}
			if _, total, _ := d.Emails(ctx, ListQuery{Domains: []string{"example.net"}, Limit: 2}); total != 0 {
				t.Fatalf("foreign domain listed %d", total)
			}
			if _, total, _ := d.Credentials(ctx, ListQuery{Domains: []string{"example.com"}, Email: "alice.sentinel@example.com", Limit: 10}); total != 1 {
				t.Fatalf("email filter: %d", total)
			}
		})
	}
}

func TestWrongKeyRefusedAndRotation(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			d, s, _ := openFixtures(t, engine)
			if err := New(s).Unlock(ctx, keyring(t, 2)); !errors.Is(err, ErrWrongKey) {
				t.Fatalf("other key: %v", err)
			}
			if err := d.Rotate(ctx, keyring(t, 1), keyring(t, 2), nil); err != nil {
				t.Fatal(err)
			}
			if err := New(s).Unlock(ctx, keyring(t, 1)); !errors.Is(err, ErrWrongKey) {
				t.Fatalf("old key after rotation: %v", err)
			}
			d2 := New(s)
			if err := d2.Unlock(ctx, keyring(t, 2)); err != nil {
				t.Fatal(err)
			}
			got, err := d2.Search(ctx, Query{Type: darkweb.Password, Value: "DaveSecret77", Limit: 5})
			if err != nil || len(got) != 1 || got[0].Record.Username != "dave_sentinel" {
				t.Fatalf("after rotation: %+v %v", got, err)
			}
			if n, _ := d2.Count(ctx); n != 5 {
				t.Fatalf("records after rotation: %d", n)
			}
			if _, total, _ := d2.Credentials(ctx, ListQuery{Domains: []string{"example.com"}, Limit: 10}); total != 2 {
				t.Fatalf("listing after rotation %d", total)
			}
		})
	}
}

// secrets are the clear values the raw-bytes scans look for.
var secrets = []string{"alice.sentinel", "SentinelPassw0rd", "Sentinelperson", "sentinelperson", "2025550143", "555-0143",
	"CarolSecret99", "DaveSecret77", "dave_sentinel", "carol.sentinel", "192.0.2.44", "1HGCM82633A004352", "desktop-sentinel"}

func TestNothingInClear(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			d, s, dsn := openFixtures(t, engine)
			// Records with an answer head: the heads hold copies of
			// their rows, sealed as the records are.
			if _, err := d.Add(ctx, headRecords(t, d, 0, headMin)); err != nil {
				t.Fatal(err)
			}
			if st, err := d.BuildHeads(ctx); err != nil || st.Rows < headMin {
				t.Fatalf("heads: %+v %v", st, err)
			}
			var raw []byte
			switch engine {
			case "sqlite":
				if _, err := s.DB().ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
					t.Fatal(err)
				}
				// Every file of the store: the main one and the
				// dark-web one, where the records are.
				paths := s.FilePaths()
				if len(paths) != 2 || paths[0] != dsn || paths[1] != store.FilePath(dsn, "darkweb") {
					t.Fatalf("files %q", paths)
				}
				for _, p := range paths {
					for _, suffix := range []string{"", "-wal"} {
						b, err := os.ReadFile(p + suffix)
						if err == nil {
							raw = append(raw, b...)
						}
					}
				}
				if len(raw) == 0 {
					t.Fatal("empty database file")
				}
				b, err := os.ReadFile(paths[1])
				if err != nil || !bytes.Contains(b, []byte("ExampleBreach")) {
					t.Fatalf("the records are not in the dark-web file %s (%v)", paths[1], err)
				}
			case "postgres":
				raw = pgDump(t, s, dsn)
			}
			for _, sec := range append(secrets, "HeadSecret-", "head0@example", "sentinel street") {
				if bytes.Contains(bytes.ToLower(raw), bytes.ToLower([]byte(sec))) {
					t.Errorf("%q found in clear in the %s data", sec, engine)
				}
				// A dump shows bytea columns in hex: clear text there
				// would appear hex-encoded.
				if bytes.Contains(raw, []byte(hex.EncodeToString([]byte(sec)))) {
					t.Errorf("%q found hex-encoded in the %s data", sec, engine)
				}
			}
			// The scan can find: the breach name is stored in clear.
			if !bytes.Contains(raw, []byte("ExampleBreach")) {
				t.Fatal("scan did not see the clear breach name: the scan is blind")
			}
			// And it read the heads: their rows name the breach too (the
			// records once, the address's and the domain's heads twice).
			if n := bytes.Count(raw, []byte("HeadBreach")); n < 3*headMin {
				t.Fatalf("the breach of the head records seen %d times, want %d or more: the scan missed the heads", n, 3*headMin)
			}
		})
	}
}

// pgDump dumps the test schema with pg_dump, or, without it, selects
// every column of the dark-web tables as text.
func pgDump(t *testing.T, s *store.Store, dsn string) []byte {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := u.Query().Get("search_path")
	if p, err := exec.LookPath("pg_dump"); err == nil && schema != "" {
		base := *u
		q := base.Query()
		q.Del("search_path")
		base.RawQuery = q.Encode()
		out := filepath.Join(t.TempDir(), "dump.sql")
		cmd := exec.Command(p, "--schema", schema, "--file", out, base.String())
		if b, err := cmd.CombinedOutput(); err == nil {
			raw, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			return raw
		} else {
			t.Logf("pg_dump failed (%v: %s); selecting every column instead", err, b)
		}
	}
	var raw []byte
	for _, table := range []string{"darkweb_records", "darkweb_index", "darkweb_keys"} {
		rows, err := s.DB().QueryContext(context.Background(), `SELECT t::text FROM `+table+` t`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var v sql.NullString
			rows.Scan(&v)
			raw = append(raw, v.String...)
		}
		rows.Close()
	}
	return raw
}

// TestListingTotalsKeptAtIngest checks the totals kept at ingest against
// the totals counted from the index (a date window forces the scan), over
// batches that repeat records and emails, across days and a rotation.
func TestListingTotalsKeptAtIngest(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			d, s, _ := open(t, engine)
			day := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
			s.Now = func() time.Time { return day }
			recs := fixtures(t, d)
			if _, err := d.Add(ctx, recs); err != nil {
				t.Fatal(err)
			}
			day = day.AddDate(0, 0, 1)
			again := fixtures(t, d)
			again[0].Password = "AnotherSecret1" // same email, a new record
			again = append(again, darkweb.Record{Email: "frank.sentinel@sub.example.com", Password: "x1", Breach: "Other"})
			for i := range again {
				if err := d.Normalizer().Clean(&again[i]); err != nil {
					t.Fatal(err)
				}
			}
			l, err := d.Loader(ctx)
			if err != nil {
				t.Fatal(err)
			}
			res, err := l.Add(ctx, again)
			if err != nil || res.Added != 6 || res.Duplicates != 0 {
				t.Fatalf("second batch staged: %+v %v", res, err)
			}
			if got, _ := d.Search(ctx, Query{Type: darkweb.Email, Value: "frank.sentinel@sub.example.com", Limit: 10, NoCache: true}); len(got) != 0 {
				t.Fatalf("a staged record is searchable before the build: %+v", got)
			}
			dups, err := l.Flush(ctx) // the build finds the records already stored
			l.Close()
			res.Added -= dups
			res.Duplicates += dups
			if err != nil || res.Added != 2 || res.Duplicates != 4 {
				t.Fatalf("second batch: %+v %v", res, err)
			}
			check := func(d *Store, creds, emails int) {
				t.Helper()
				q := ListQuery{Domains: []string{"example.com"}, Limit: 100}
				window := q
				window.From, window.To = 1, 1<<40
				for _, c := range []struct {
					name string
					want int
					f    func(ListQuery) (int, error)
				}{
					{"credentials", creds, func(q ListQuery) (int, error) { _, n, err := d.Credentials(ctx, q); return n, err }},
					{"emails", emails, func(q ListQuery) (int, error) { _, n, err := d.Emails(ctx, q); return n, err }},
				} {
					kept, err := c.f(q)
					if err != nil {
						t.Fatal(err)
					}
					scanned, err := c.f(window)
					if err != nil {
						t.Fatal(err)
					}
					if kept != c.want || scanned != c.want {
						t.Fatalf("%s: kept total %d, scanned %d, want %d", c.name, kept, scanned, c.want)
					}
				}
			}
			// example.com: alice twice, bob (mail.), frank (sub.) with
			// secrets; erin without; emails alice, bob, erin, frank.
			check(d, 4, 4)
			page, _, err := d.Emails(ctx, ListQuery{Domains: []string{"example.com"}, Limit: 100})
			if err != nil || len(page) != 4 {
				t.Fatalf("emails page %+v %v", page, err)
			}
			for _, e := range page {
				if e.Email == "alice.sentinel@example.com" && (e.FirstSeen != day.AddDate(0, 0, -1).Unix() || e.LastSeen != day.Unix()) {
					t.Fatalf("alice first/last seen %d %d", e.FirstSeen, e.LastSeen)
				}
			}
			if page[0].LastSeen < page[len(page)-1].LastSeen {
				t.Fatalf("emails not most recent first: %+v", page)
			}
			// Walking pages of one in order (each page seeks from where the
			// one before ended) lists what one page lists, alice once.
			creds, _, _ := d.Credentials(ctx, ListQuery{Domains: []string{"example.com"}, Limit: 100})
			for round := 0; round < 2; round++ {
				for i := 0; i < 4; i++ {
					e, _, err := d.Emails(ctx, ListQuery{Domains: []string{"example.com"}, Limit: 1, Offset: i})
					if err != nil || len(e) != 1 || e[0].Email != page[i].Email {
						t.Fatalf("emails page %d of one: %+v %v; want %s", i, e, err, page[i].Email)
					}
					c, _, err := d.Credentials(ctx, ListQuery{Domains: []string{"example.com"}, Limit: 1, Offset: i})
					if err != nil || len(c) != 1 || c[0].ID != creds[i].ID {
						t.Fatalf("credentials page %d of one: %+v %v", i, c, err)
					}
				}
				if e, _, _ := d.Emails(ctx, ListQuery{Domains: []string{"example.com"}, Limit: 1, Offset: 4}); len(e) != 0 {
					t.Fatalf("emails past the end: %+v", e)
				}
			}
			two, _, _ := d.Emails(ctx, ListQuery{Domains: []string{"example.com"}, Limit: 2, Offset: 2})
			if len(two) != 2 || two[0].Email != page[2].Email || two[1].Email != page[3].Email {
				t.Fatalf("second page %+v of %+v", two, page)
			}
			if err := d.Rotate(ctx, keyring(t, 1), keyring(t, 2), nil); err != nil {
				t.Fatal(err)
			}
			d2 := New(s)
			if err := d2.Unlock(ctx, keyring(t, 2)); err != nil {
				t.Fatal(err)
			}
			check(d2, 4, 4)
		})
	}
}

// TestLargeSearchPages checks that pages of every size, up to ones opened
// on every core, hold the same records in the same order (newest first,
// ties by seq descending: sorted in Go, not by the engine).
func TestLargeSearchPages(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			d, s, _ := open(t, engine)
			ctx := context.Background()
			n := d.Normalizer()
			day := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
			// Five loads a day apart: ties within a load, order across;
			// more records than the 1,000 a page is read ahead for.
			for load := range 5 {
				now := day.Add(time.Duration(load) * 24 * time.Hour)
				s.Now = func() time.Time { return now }
				var recs []darkweb.Record
				for i := range 250 {
					r := darkweb.Record{Email: fmt.Sprintf("user%d.%d@large.example.com", load, i), Password: fmt.Sprintf("pw-%d-%d", load, i), Breach: "Large", Source: "combolist"}
					if err := n.Clean(&r); err != nil {
						t.Fatal(err)
					}
					recs = append(recs, r)
				}
				if _, err := d.Add(ctx, recs); err != nil {
					t.Fatal(err)
				}
			}
			search := func(limit int) []Result {
				t.Helper()
				res, err := d.Search(ctx, Query{Type: darkweb.Domain, Value: "large.example.com", Limit: limit, NoCache: true})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			all := search(2000)
			if len(all) != 1250 {
				t.Fatalf("%d records, want 1250", len(all))
			}
			if !strings.HasPrefix(all[0].Record.Email, "user4.") || !strings.HasPrefix(all[1249].Record.Email, "user0.") {
				t.Fatalf("not newest first: %s … %s", all[0].Record.Email, all[1249].Record.Email)
			}
			for i, r := range all {
				// Each result is its own record (decrypted beside the read).
				if "pw-"+strings.Replace(strings.TrimSuffix(strings.TrimPrefix(r.Record.Email, "user"), "@large.example.com"), ".", "-", 1) != r.Record.Password {
					t.Fatalf("record %d: %s with %s", i, r.Record.Email, r.Record.Password)
				}
			}
			for _, limit := range []int{1, 100, 255, 256, 600, 1000, 1001, 1200} {
				page := search(limit)
				if len(page) != limit {
					t.Fatalf("limit %d: %d records", limit, len(page))
				}
				for i := range page {
					if page[i].ID != all[i].ID || page[i].Record.Email != all[i].Record.Email || page[i].Record.Password != all[i].Record.Password {
						t.Fatalf("limit %d, record %d: %s %s, the 1,000 page has %s %s", limit, i, page[i].ID, page[i].Record.Email, all[i].ID, all[i].Record.Email)
					}
				}
			}
		})
	}
}

// TestNewestFirstBoth checks that rows read out of order are ordered newest
// first (date descending, then seq descending) with their results.
func TestNewestFirstBoth(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rows := make([]row, 500)
	res := make([]Result, len(rows))
	for i := range rows {
		rows[i] = row{seq: int64(i), dateAdded: int64(rng.IntN(20)), id: fmt.Sprint(i)}
		res[i] = Result{ID: rows[i].id, DateAdded: rows[i].dateAdded}
	}
	newestFirstBoth(rows, res)
	for i := range rows {
		if res[i].ID != rows[i].id {
			t.Fatalf("row %d: result %s, row %s", i, res[i].ID, rows[i].id)
		}
		if i > 0 && (rows[i].dateAdded > rows[i-1].dateAdded || rows[i].dateAdded == rows[i-1].dateAdded && rows[i].seq > rows[i-1].seq) {
			t.Fatalf("rows %d and %d out of order: %+v %+v", i-1, i, rows[i-1], rows[i])
		}
	}
}

// TestBreachDatesFromTheCatalogue: a record without a breach date takes
// its breach's date from the catalogue; a change through this store shows
// at once, one by another process (another store on the same database)
// within breachDateTTL.
func TestBreachDatesFromTheCatalogue(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			d, s, dsn := openFixtures(t, engine)
			date := func() string {
				t.Helper()
				got, err := d.Search(ctx, Query{Type: darkweb.IP, Value: "192.0.2.44", Limit: 10, NoCache: true})
				if err != nil || len(got) != 1 {
					t.Fatalf("search: %d results, %v", len(got), err)
				}
				return got[0].Record.BreachDate
			}
			if got := date(); got != "" {
				t.Fatalf("breach date %q before the catalogue has the breach", got)
			}
			if err := d.PutBreach(ctx, darkweb.BreachInfo{Name: "Other", BreachDate: "2019-07-08"}); err != nil {
				t.Fatal(err)
			}
			if got := date(); got != "2019-07-08" {
				t.Fatalf("breach date %q right after PutBreach, want 2019-07-08", got)
			}
			// Another process changes the catalogue.
			s2, err := store.Open(ctx, dsn, store.Files(Migrations()))
			if err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			if err := New(s2).PutBreach(ctx, darkweb.BreachInfo{Name: "Other", BreachDate: "2018-05-06"}); err != nil {
				t.Fatal(err)
			}
			if got := date(); got != "2019-07-08" {
				t.Fatalf("breach date %q within the TTL, want the date read before", got)
			}
			now := s.Now().Add(breachDateTTL)
			s.Now = func() time.Time { return now }
			if got := date(); got != "2018-05-06" {
				t.Fatalf("breach date %q after the TTL, want 2018-05-06", got)
			}
		})
	}
}

// TestAnswerCacheBounded: small cached answers keep their own copy of the
// sealed rows (not the 64 KiB chunks they were read into), and the cache
// stays within cacheMaxBytes however many large answers are cached.
func TestAnswerCacheBounded(t *testing.T) {
	d := &Store{cache: map[string]cacheEntry{}} // no database: the cache alone
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	chunk := bytes.Repeat([]byte{7}, 700*1000)
	page := make([]row, 1000)
	for i := range page {
		page[i] = row{seq: int64(i + 1), blob: chunk[i*700 : (i+1)*700]}
	}
	// A small answer gets its own copy of its rows.
	d.keepAnswer("small", page[:3], now)
	chunk[0] = 8
	if e := d.cache["small"]; e.rows[0].blob[0] != 7 || cap(e.rows[0].blob) != 700 {
		t.Fatal("a small cached answer shares the chunk it was read into")
	}
	chunk[0] = 7
	for i := range 500 {
		d.keepAnswer(fmt.Sprint("answer", i), page, now)
		if d.cacheBytes > cacheMaxBytes {
			t.Fatalf("after %d answers: %d bytes cached, more than %d", i+1, d.cacheBytes, cacheMaxBytes)
		}
	}
	total := 0
	for _, e := range d.cache {
		total += e.size
	}
	if total != d.cacheBytes || len(d.cache) < 10 {
		t.Fatalf("%d answers of %d bytes cached, counted %d", len(d.cache), total, d.cacheBytes)
	}
}

// TestVerifiedKeepsOnlyTheValue: a page's records are kept when their
// value normalises to the one searched for (however spelled, the same
// spelling again included), and dropped otherwise (a record that a key
// another value shares brought in).
func TestVerifiedKeepsOnlyTheValue(t *testing.T) {
	d := &Store{} // no database: the check alone
	v, err := d.norm.Normalize(darkweb.Address, "12 Example Street")
	if err != nil {
		t.Fatal(err)
	}
	var res []Result
	for i, a := range []string{"12 Example Street", "12 EXAMPLE STREET", "99 Other Road", "12 Example Street", "12 example street"} {
		res = append(res, Result{ID: fmt.Sprint(i), Record: darkweb.Record{Address: a}})
	}
	var ids []string
	for _, r := range d.verified(res, darkweb.Address, v) {
		ids = append(ids, r.ID)
	}
	if strings.Join(ids, ",") != "0,1,3,4" {
		t.Fatalf("kept %v, want 0,1,3,4", ids)
	}
}
