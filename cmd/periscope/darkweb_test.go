package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/darkwebstore"
	"github.com/periscope-oss/periscope/internal/schema"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// TestDarkwebIngestRotateAndWrongKey drives the CLI: ingest with rejects
// reported by file:line, re-ingest adds nothing, a wrong key is refused,
// rotate-key re-seals and the new key reads the data.
func TestDarkwebIngestRotateAndWrongKey(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			dsn := storetest.DSN(t, engine)
			dir := t.TempDir()
			key := filepath.Join(dir, "dw.key")
			combo := filepath.Join(dir, "combo.txt")
			os.WriteFile(combo, []byte("alice@example.com:pw1\nbroken line\nbob;pw2\nlatin\xe9:pw3\n"), 0o600)
			out, stderr, err := runCLI(t, "ingest", "combolist", combo, "--breach", "ExampleCombo", "--breach-date", "2024-01-02", "--database", dsn, "--darkweb-key-file", key)
			if err != nil {
				t.Fatal(err, stderr)
			}
			if !strings.Contains(out, "read 4, stored 2 (inserted 2, updated 0), unchanged 0, skipped 0, rejected 2") || !strings.Contains(out, combo+":2: no separator") || !strings.Contains(out, combo+":4: invalid UTF-8") {
				t.Fatalf("summary:\n%s", out)
			}
			if !strings.Contains(stderr, "created a new dark-web master key") {
				t.Fatalf("no key creation log: %s", stderr)
			}
			if fi, _ := os.Stat(key); fi.Mode().Perm() != 0o600 {
				t.Fatalf("key mode %o", fi.Mode().Perm())
			}
			out, _, err = runCLI(t, "ingest", "combolist", combo, "--breach", "ExampleCombo", "--breach-date", "2024-01-02", "--database", dsn, "--darkweb-key-file", key, "--encoding", "windows-1252")
			if err != nil || !strings.Contains(out, "inserted 1, updated 0), unchanged 2, skipped 0, rejected 1") {
				t.Fatalf("re-ingest: %v\n%s", err, out)
			}
			csvf := filepath.Join(dir, "x.csv")
			os.WriteFile(csvf, []byte("foo,bar\n1,2\n"), 0o600)
			if _, _, err := runCLI(t, "ingest", "breach-csv", csvf, "--database", dsn, "--darkweb-key-file", key); err == nil || !strings.Contains(err.Error(), "no recognisable column") {
				t.Fatalf("headerless CSV: %v", err)
			}
			other := filepath.Join(dir, "other.key")
			if _, _, err := runCLI(t, "ingest", "combolist", combo, "--breach", "X", "--database", dsn, "--darkweb-key-file", other); err == nil || !strings.Contains(err.Error(), "wrong key") {
				t.Fatalf("other key accepted: %v", err)
			}
			if _, _, err := runCLI(t, "ingest", "combolist", combo, "--database", dsn, "--darkweb-key-file", key); err == nil || !strings.Contains(err.Error(), "--breach") {
				t.Fatalf("combolist without --breach: %v", err)
			}
			out, _, err = runCLI(t, "darkweb", "rotate-key", "--database", dsn, "--darkweb-key-file", key)
			if err != nil || !strings.Contains(out, "added key") || !strings.Contains(out, "re-sealed 3 records") {
				t.Fatalf("rotate: %v\n%s", err, out)
			}
			out, _, err = runCLI(t, "darkweb", "rotate-key", "--resume", "--database", dsn, "--darkweb-key-file", key)
			if err != nil || !strings.Contains(out, "re-sealed 0 records") {
				t.Fatalf("resume: %v\n%s", err, out)
			}
			out, _, err = runCLI(t, "ingest", "combolist", combo, "--breach", "ExampleCombo", "--breach-date", "2024-01-02", "--database", dsn, "--darkweb-key-file", key, "--encoding", "latin1")
			if err != nil || !strings.Contains(out, "inserted 0, updated 0), unchanged 3") {
				t.Fatalf("re-ingest under the rotated keyring: %v\n%s", err, out)
			}
			out, _, err = runCLI(t, "darkweb", "rotate-key", "--reindex", "--database", dsn, "--darkweb-key-file", key)
			if err != nil || !strings.Contains(out, "rotated the dark-web key") {
				t.Fatalf("reindex: %v\n%s", err, out)
			}
			dw := openDarkwebStore(t, dsn, key)
			got, err := dw.Search(context.Background(), darkwebstore.Query{Type: darkweb.Email, Value: "alice@example.com", Limit: 5})
			if err != nil || len(got) != 1 || got[0].Record.Password != "pw1" || got[0].Record.BreachDate != "2024-01-02" {
				t.Fatalf("after rotation: %+v %v", got, err)
			}
		})
	}
}

func TestAccountRevealSecrets(t *testing.T) {
	dsn := storetest.DSN(t, "sqlite")
	if _, _, err := runCLI(t, "account", "create", "--company", "Revealer", "--email", "r@example.com", "--database", dsn); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, "account", "update", "Revealer", "--reveal-secrets", "--database", dsn)
	if err != nil || !strings.Contains(out, "reveal-secrets:          true") {
		t.Fatalf("update: %v\n%s", err, out)
	}
	st, err := store.Open(context.Background(), dsn, store.Files(schema.Sets()...))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, err := st.AccountByCompany(context.Background(), "Revealer")
	if err != nil {
		t.Fatal(err)
	}
	dw := darkwebstore.New(st)
	if on, err := dw.Reveal(context.Background(), a.ID); err != nil || !on {
		t.Fatalf("reveal not recorded: %v %v", on, err)
	}
	if _, _, err := runCLI(t, "account", "update", "Revealer", "--reveal-secrets=false", "--database", dsn); err != nil {
		t.Fatal(err)
	}
	if on, _ := dw.Reveal(context.Background(), a.ID); on {
		t.Fatal("reveal not withdrawn")
	}
}

// openDarkwebStore opens the database at dsn and unlocks its dark-web store
// with the key file the CLI wrote (closed when the test ends).
func openDarkwebStore(t *testing.T, dsn, keyFile string) *darkwebstore.Store {
	t.Helper()
	k, err := darkweb.LoadOrCreateKey(keyFile, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), dsn, store.Files(schema.Sets()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	dw := darkwebstore.New(st)
	if err := dw.Unlock(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	return dw
}
