package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// defaultKey is where the dark-web key of dsn lives by default under env.
func defaultKey(dsn string, env map[string]string) string {
	if strings.Contains(dsn, "://") {
		return filepath.Join(env["XDG_DATA_HOME"], "periscope", "darkweb.key")
	}
	return filepath.Join(filepath.Dir(dsn), "periscope-darkweb.key")
}

// TestKeyFilesOneDefaultPlace: ingest and serve agree on the dark-web key
// file without flags (beside the SQLite database; in the per-user data
// directory for PostgreSQL), it is created 0600, and a command that would
// create a key for data sealed with another refuses before writing one.
func TestKeyFilesOneDefaultPlace(t *testing.T) {
	combo := filepath.Join("demodata", "darkweb", "combo.txt")
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			tmp := t.TempDir()
			env := map[string]string{"XDG_DATA_HOME": filepath.Join(tmp, "data"), "HOME": filepath.Join(tmp, "home")}
			dsn := storetest.DSN(t, engine)
			key := defaultKey(dsn, env)
			if _, _, err := runCLIEnv(t, env, "ingest", "combolist", combo, "--breach", "KeyCombo", "--database", dsn); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(key)
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("default key %s: %v %v", key, fi, err)
			}
			if _, err := os.Stat(filepath.Join(tmp, "home")); err == nil {
				t.Fatal("a file went to HOME though XDG_DATA_HOME is set")
			}
			// serve without flags reads the same key: the dark-web routes
			// are on (their metrics exist) and no other key is created.
			s := startServerEnv(t, func(k string) string { return env[k] }, dsn)
			if code, body := s.do(t, "GET", "/metrics", "", ""); code != 200 || !strings.Contains(string(body), "periscope_darkweb_") {
				t.Fatalf("dark web off under serve with the default key: %d", code)
			}
			if err := s.stop(); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(s.stderr.String(), "created a new dark-web master key") {
				t.Fatalf("serve created a key: %s", s.stderr.String())
			}

			// The data is sealed with that key: with it gone, an ingest
			// refuses and writes no new key file.
			if err := os.Rename(key, key+".bak"); err != nil {
				t.Fatal(err)
			}
			_, _, err = runCLIEnv(t, env, "ingest", "combolist", combo, "--breach", "KeyCombo", "--database", dsn)
			if err == nil || !strings.Contains(err.Error(), "no key file was created") {
				t.Fatalf("ingest without the key: %v", err)
			}
			if _, err := os.Stat(key); err == nil {
				t.Fatal("a refused ingest created a key file")
			}
			// serve without the key leaves the dark web off and creates
			// nothing either.
			s = startServerEnv(t, func(k string) string { return env[k] }, dsn)
			s.stop()
			if !strings.Contains(s.stderr.String(), "dark-web routes off") {
				t.Fatalf("serve without the key: %s", s.stderr.String())
			}
			if _, err := os.Stat(key); err == nil {
				t.Fatal("serve created a dark-web key file")
			}
		})
	}
}

// TestKeyFileAtTheOldPlace: a key an earlier release kept in the working
// directory (the old ingest default) is found, used and named in the log.
func TestKeyFileAtTheOldPlace(t *testing.T) {
	combo, err := filepath.Abs(filepath.Join("demodata", "darkweb", "combo.txt"))
	if err != nil {
		t.Fatal(err)
	}
	work, dbDir := t.TempDir(), t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir(work); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	db := filepath.Join(dbDir, "p.db")
	old := filepath.Join(work, "periscope-darkweb.key")
	// The earlier release: its key in the working directory.
	if _, _, err := runCLI(t, "ingest", "combolist", combo, "--breach", "Old", "--database", db, "--darkweb-key-file", "periscope-darkweb.key"); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := runCLI(t, "ingest", "combolist", combo, "--breach", "Old", "--database", db)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "earlier release") || !strings.Contains(stderr, old) {
		t.Fatalf("the old key's use is not logged: %s", stderr)
	}
	if _, err := os.Stat(filepath.Join(dbDir, "periscope-darkweb.key")); err == nil {
		t.Fatal("a new key was created beside the database though the old one was found")
	}
}
