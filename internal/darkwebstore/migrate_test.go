package darkwebstore

import (
	"context"
	"encoding/hex"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// A database written in migration 0012's layout (16-byte record ids,
// blob index rows) upgrades through 0017: every record is kept, and the
// first unlock with the key indexes them again for every search and both
// listings.
func TestUpgradeFrom0012(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			s := storetest.Unmigrated(t, engine, Migrations())
			migrateOld(t, s, "0012_darkweb.sql")
			k := keyring(t, 1)
			if _, err := s.DB().ExecContext(ctx, s.Rebind(`INSERT INTO darkweb_keys (key_id, check_value, active, created_at) VALUES (?, ?, 1, 0)`), k.ID(), k.Check()); err != nil {
				t.Fatal(err)
			}
			d := New(s)
			recs := fixtures(t, d)
			day := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).Unix()
			for i := range recs {
				hexID := k.RecordID(&recs[i])
				id, _ := hex.DecodeString(hexID)
				blob, err := k.Seal(hexID, &recs[i])
				if err != nil {
					t.Fatal(err)
				}
				secret := 0
				if recs[i].HasSecret() {
					secret = 1
				}
				if _, err := s.DB().ExecContext(ctx, s.Rebind(`INSERT INTO darkweb_records (id, key_id, blob, breach, breach_date, source, has_secret, email_idx, date_added)
					VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?)`), id, k.ID(), blob, recs[i].Breach, recs[i].BreachDate, recs[i].Source, secret, day+int64(i)); err != nil {
					t.Fatal(err)
				}
				if _, err := s.DB().ExecContext(ctx, s.Rebind(`INSERT INTO darkweb_index (type, hmac, date_added, record_id) VALUES (3, ?, ?, ?)`), k.Index(darkweb.Email, recs[i].Email)[:16], day+int64(i), id); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.Migrate(ctx, Migrations()); err != nil {
				t.Fatal(err)
			}
			if err := d.Unlock(ctx, k); err != nil {
				t.Fatal(err)
			}
			checkUpgraded(t, d)
		})
	}
}

// A database of 0017's layout, with records in the main SQLite file,
// upgrades through 0020: the dark-web tables move to the dark-web file
// (darkweb_reveal, which names accounts, stays), every record is kept, and
// a move that was interrupted (part of the records copied; 0020 recorded
// or not) finishes on the next Migrate without losing or repeating a row.
func TestUpgradeTo0020(t *testing.T) {
	for _, engine := range storetest.Engines() {
		for _, recorded := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/0020-recorded=%v", engine, recorded), func(t *testing.T) {
				ctx := context.Background()
				s := storetest.Unmigrated(t, engine, Migrations())
				migrateOld(t, s, "0012_darkweb.sql", "0017_darkweb_scale.sql")
				if engine == "postgres" {
					// This release's build writes the repeats of 0023 (on
					// SQLite only when there are some: the fixtures have none).
					if _, err := s.Exec(ctx, `CREATE TABLE darkweb_repeats (k BIGINT NOT NULL, x BIGINT NOT NULL, PRIMARY KEY (k, x))`); err != nil {
						t.Fatal(err)
					}
				}
				k := keyring(t, 1)
				d := New(s)
				if err := d.Unlock(ctx, k); err != nil {
					t.Fatal(err)
				}
				if _, err := d.Add(ctx, fixtures(t, d)); err != nil {
					t.Fatal(err)
				}
				a := periscope.Account{Company: "acme", Plan: "test"}
				if err := s.CreateAccount(ctx, &a, &periscope.User{Email: "a@example.com"}); err != nil {
					t.Fatal(err)
				}
				if err := d.SetReveal(ctx, a.ID, true); err != nil {
					t.Fatal(err)
				}
				if engine == "sqlite" {
					// An earlier run created the file's tables and copied
					// two records, then stopped.
					create, err := fs.ReadFile(migrations, "migrations/sqlite/0020_darkweb_file.sql")
					if err != nil {
						t.Fatal(err)
					}
					if _, err := s.Exec(ctx, string(create)); err != nil {
						t.Fatal(err)
					}
					if _, err := s.Exec(ctx, `INSERT INTO darkweb.darkweb_records SELECT * FROM main.darkweb_records ORDER BY seq LIMIT 2`); err != nil {
						t.Fatal(err)
					}
				}
				if recorded {
					if _, err := s.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (20, '0020_darkweb_file.sql', 0)`); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := s.Migrate(ctx, Migrations()); err != nil {
					t.Fatal(err)
				}
				if engine == "sqlite" {
					var inMain []string
					rows, err := s.Query(ctx, `SELECT name FROM main.sqlite_master WHERE type = 'table' AND name LIKE 'darkweb%' ORDER BY name`)
					if err != nil {
						t.Fatal(err)
					}
					for rows.Next() {
						var n string
						rows.Scan(&n)
						inMain = append(inMain, n)
					}
					rows.Close()
					if fmt.Sprint(inMain) != "[darkweb_reveal]" {
						t.Fatalf("dark-web tables left in the main file: %v", inMain)
					}
					var n int
					if err := s.QueryRow(ctx, `SELECT COUNT(*) FROM darkweb.darkweb_records`).Scan(&n); err != nil || n != 5 {
						t.Fatalf("%d records in the dark-web file (%v)", n, err)
					}
				}
				d = New(s)
				if err := d.Unlock(ctx, k); err != nil {
					t.Fatal(err)
				}
				checkUpgraded(t, d)
				if ok, err := d.Reveal(ctx, a.ID); err != nil || !ok {
					t.Fatalf("reveal after upgrade: %v %v", ok, err)
				}
			})
		}
	}
}

// migrateOld applies the named dark-web migrations alone (both engines'
// files of each), as an earlier release left a database.
func migrateOld(t *testing.T, s *store.Store, names ...string) {
	t.Helper()
	old := fstest.MapFS{}
	for _, name := range names {
		for _, engine := range []string{"sqlite", "postgres"} {
			b, err := fs.ReadFile(migrations, "migrations/"+engine+"/"+name)
			if err != nil {
				t.Fatal(err)
			}
			old[engine+"/"+name] = &fstest.MapFile{Data: b}
		}
	}
	if _, err := s.Migrate(context.Background(), store.MigrationSet{Name: "darkweb", FS: old}); err != nil {
		t.Fatal(err)
	}
}

// checkUpgraded checks an upgraded, unlocked store holding the five
// fixtures: every record kept, searchable by value and by domain (newest
// first), listed, and not added again when ingested again.
func checkUpgraded(t *testing.T, d *Store) {
	t.Helper()
	ctx := context.Background()
	if n, _ := d.Count(ctx); n != 5 {
		t.Fatalf("%d records after the upgrade", n)
	}
	if got, err := d.Search(ctx, Query{Type: darkweb.Phone, Value: "+1 202-555-0143", Limit: 10}); err != nil || len(got) != 1 || got[0].Record.Password != "SentinelPassw0rd!" {
		t.Fatalf("phone search after upgrade: %+v %v", got, err)
	}
	if got, _ := d.Search(ctx, Query{Type: darkweb.Domain, Value: "example.com", Limit: 10}); len(got) != 4 || got[0].DateAdded < got[3].DateAdded {
		t.Fatalf("domain search after upgrade: %+v", got)
	}
	if _, total, err := d.Credentials(ctx, ListQuery{Domains: []string{"example.com"}, Limit: 10}); err != nil || total != 2 {
		t.Fatalf("credentials after upgrade: %d %v", total, err)
	}
	if page, total, err := d.Emails(ctx, ListQuery{Domains: []string{"example.com"}, Limit: 10}); err != nil || total != 3 || len(page) != 3 {
		t.Fatalf("emails after upgrade: %+v %d %v", page, total, err)
	}
	if res, err := d.Add(ctx, fixtures(t, d)); err != nil || res.Added != 0 || res.Duplicates != 5 {
		t.Fatalf("re-ingest after upgrade: %+v %v", res, err)
	}
}

// Migration 0023 fills darkweb_repeats from the index already stored:
// the repeats it finds are the ones the builds kept.
func TestUpgradeTo0023FillsRepeats(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			d, s, _ := open(t, engine)
			recs := fixtures(t, d)
			again := fixtures(t, d)[:2]
			again[0].Password, again[1].Breach = "AnotherSecret1", "Another" // alice and bob again
			for _, batch := range [][]darkweb.Record{recs, again} {
				if _, err := d.Add(ctx, batch); err != nil {
					t.Fatal(err)
				}
			}
			read := func() string {
				rows, err := s.Query(ctx, `SELECT k, x FROM darkweb_repeats ORDER BY k, x`)
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				var got []string
				for rows.Next() {
					var k, x int64
					if err := rows.Scan(&k, &x); err != nil {
						t.Fatal(err)
					}
					got = append(got, fmt.Sprintf("%x/%x", k, x))
				}
				return fmt.Sprint(got)
			}
			kept := read()
			// alice under example.com; bob under mail.example.com and example.com.
			if n := len(kept) - len(strings.ReplaceAll(kept, "/", "")); n != 3 {
				t.Fatalf("the builds kept %d repeats, want 3: %s", n, kept)
			}
			if _, err := s.Exec(ctx, `DELETE FROM darkweb_repeats`); err != nil {
				t.Fatal(err)
			}
			sql, err := fs.ReadFile(migrations, "migrations/"+engine+"/0023_darkweb_repeats.sql")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Exec(ctx, string(sql)); err != nil {
				t.Fatal(err)
			}
			if got := read(); got != kept {
				t.Fatalf("0023 filled %s, the builds kept %s", got, kept)
			}
		})
	}
}
