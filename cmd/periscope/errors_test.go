package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadCommandsRefuseToCreateADatabase: a command that reads, run where
// there is no database, names the file it looked for and creates none;
// every command names its database first at --log-level info.
func TestReadCommandsRefuseToCreateADatabase(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "nowhere.db")
	for _, args := range [][]string{
		{"account", "list"}, {"account", "show", "Acme"}, {"key", "list", "--account", "Acme"},
		{"export", "hosts"}, {"org", "assets", "x"}, {"darkweb", "rotate-key"}, {"search", "port:443"},
	} {
		_, _, err := runCLI(t, append(args, "--database", db)...)
		if err == nil || !strings.Contains(err.Error(), "no database at "+db) || !strings.Contains(err.Error(), "periscope init") {
			t.Errorf("%v: %v", args, err)
		}
		if _, err := os.Stat(db); err == nil {
			t.Fatalf("%v created %s", args, db)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("files written: %v", ents)
	}
	// Commands that set up create it, and say which.
	_, stderr, err := runCLI(t, "account", "create", "--company", "Acme", "--email", "a@acme.test", "--database", db)
	if err != nil || !strings.HasPrefix(stderr, "database: "+db+" (SQLite, new file)\n") {
		t.Fatalf("account create: %v %q", err, stderr)
	}
	out, stderr, err := runCLI(t, "account", "list", "--database", db)
	if err != nil || !strings.Contains(out, "Acme") || !strings.HasPrefix(stderr, "database: "+db+" (SQLite)\n") {
		t.Fatalf("account list: %v %q %q", err, out, stderr)
	}
	if _, stderr, _ := runCLI(t, "account", "list", "--database", db, "--log-level", "warn"); stderr != "" {
		t.Fatalf("--log-level warn: %q", stderr)
	}
}

// TestDatabaseErrorsNameThePath: where SQLite would say "unable to open
// database file (14)", the error names the path and why.
func TestDatabaseErrorsNameThePath(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		db, want string
	}{
		{filepath.Join(dir, "missing", "p.db"), "the directory " + filepath.Join(dir, "missing") + " does not exist"},
		{dir, "is a directory"},
	} {
		for _, cmd := range [][]string{{"migrate"}, {"init"}, {"ingest", "hosts", "x.ndjson"}, {"serve", "--addr", "127.0.0.1:0"}} {
			_, _, err := runCLI(t, append(cmd, "--database", c.db)...)
			if err == nil || !strings.Contains(err.Error(), c.db) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "(14)") || !oneLineError(err) {
				t.Errorf("%v --database %s: %v", cmd, c.db, err)
			}
		}
	}
}

// TestDeadRedisIsOneLine: serve with a rate-limit store nobody answers at
// fails with one line naming the URL (password hidden) and the flag.
func TestDeadRedisIsOneLine(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	url := "redis://:hunter2@" + addr + "/0"
	_, _, err = runCLI(t, "serve", "--addr", "127.0.0.1:0", "--database", filepath.Join(t.TempDir(), "p.db"), "--rate-limit-store", url)
	if err == nil || !oneLineError(err) || !strings.Contains(err.Error(), "--rate-limit-store redis://:***@"+addr+"/0") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("dead Redis: %v", err)
	}
}
