package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/darkwebingest"
	"github.com/periscope-oss/periscope/internal/darkwebstore"
	"github.com/periscope-oss/periscope/internal/schema"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// bad is a file of internal/darkweb's malformed inputs.
func bad(name string) string {
	return filepath.Join("..", "..", "internal", "darkweb", "testdata", "bad", name)
}

// TestDarkwebIngestBadInput drives the CLI through docs/ingest.md "Ingest errors":
// what each bad input stores, and the exit status.
func TestDarkwebIngestBadInput(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			dsn := storetest.DSN(t, engine)
			dir := t.TempDir()
			key := filepath.Join(dir, "dw.key")
			ingest := func(kind string, args ...string) (string, error) {
				t.Helper()
				out, _, err := runCLI(t, append([]string{"ingest", kind, "--breach", "ExampleBad", "--database", dsn, "--darkweb-key-file", key}, args...)...)
				return out, err
			}
			count := func() int64 {
				t.Helper()
				st, err := store.Open(context.Background(), dsn, store.Files(schema.Sets()...))
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				n, err := darkwebstore.New(st).Count(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			// Something already stored, which no bad input may lose.
			good := filepath.Join(dir, "good.txt")
			os.WriteFile(good, []byte("kept@example.com:pw0\n"), 0o600)
			if _, err := ingest("combolist", good); err != nil {
				t.Fatal(err)
			}

			// Refused whole: exit status 1, nothing stored.
			for _, c := range []struct{ kind, file, want string }{
				{"combolist", "combo.zip", "zip archive"},
				{"breach-csv", "junk.bin", "binary file"},
				{"breach-csv", "noheader.csv", "--map col=field"},
			} {
				_, err := ingest(c.kind, bad(c.file))
				var ee exitError
				if err == nil || errors.As(err, &ee) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("%s: %v", c.file, err)
				}
			}
			if n := count(); n != 1 {
				t.Fatalf("refused files stored records: %d", n)
			}

			// Cut short: the complete records stored, the tail rejected by
			// file:line, exit status 3.
			out, err := ingest("dehashed", bad("truncated.json"))
			var ee exitError
			if !errors.As(err, &ee) || ee.code != exitIncomplete || !errors.Is(err, darkweb.ErrIncomplete) {
				t.Fatalf("truncated: %v", err)
			}
			if !strings.Contains(out, "inserted 2") || !strings.Contains(out, bad("truncated.json")+":4: truncated record") || !strings.Contains(out, "1 source(s) incomplete") {
				t.Fatalf("truncated summary:\n%s", out)
			}
			out, err = ingest("combolist", bad("truncated.txt.gz"))
			if !errors.As(err, &ee) || ee.code != exitIncomplete || !strings.Contains(out, bad("truncated.txt.gz")+":") {
				t.Fatalf("truncated gzip: %v\n%s", err, out)
			}
			n := count()
			if n < 100 || n >= 2003 {
				t.Fatalf("after the cut gzip: %d records", n)
			}
			// The whole gzip stream later adds the rest and nothing twice.
			if out, err = ingest("combolist", bad("combo.txt.gz")); err != nil || !strings.Contains(out, "read 2000") {
				t.Fatalf("whole gzip: %v\n%s", err, out)
			}
			if got := count(); got != 2003 {
				t.Fatalf("after the whole gzip: %d records, want 2003", got)
			}
			// A refused file beside a cut one: exit status 1.
			_, err = ingest("dehashed", bad("truncated.ndjson"), bad("combo.zip"))
			if err == nil || errors.As(err, &ee) {
				t.Fatalf("refused and cut: %v", err)
			}

			// Wrong shape, long line: rejected by file:line, the rest stored,
			// exit status 0.
			out, err = ingest("dehashed", bad("wrongshape.json"))
			if err != nil || !strings.Contains(out, "rejected 3") || !strings.Contains(out, bad("wrongshape.json")+":3: record 2: not a JSON object") {
				t.Fatalf("wrong shape: %v\n%s", err, out)
			}
			out, err = ingest("combolist", bad("longline.txt"))
			if err != nil || !strings.Contains(out, bad("longline.txt")+":2: line longer than 65536 bytes") {
				t.Fatalf("long line: %v\n%s", err, out)
			}

			// A wrong key file is refused before any input is opened.
			before := count()
			for name, content := range map[string]string{"garbage.key": "not a key\n", "short.key": "abcd\n"} {
				k := filepath.Join(dir, name)
				os.WriteFile(k, []byte(content), 0o600)
				_, _, err := runCLI(t, "ingest", "combolist", "--breach", "X", "--database", dsn, "--darkweb-key-file", k, filepath.Join(dir, "does-not-exist.txt"))
				if err == nil || !strings.Contains(err.Error(), "dark-web key file") || strings.Contains(err.Error(), "does-not-exist") {
					t.Fatalf("%s: %v", name, err)
				}
			}
			open := filepath.Join(dir, "open.key")
			b, _ := os.ReadFile(key)
			os.WriteFile(open, b, 0o644)
			os.Chmod(open, 0o644)
			if _, _, err := runCLI(t, "ingest", "combolist", "--breach", "X", "--database", dsn, "--darkweb-key-file", open, good); err == nil || !strings.Contains(err.Error(), "readable by others") {
				t.Fatalf("key readable by others: %v", err)
			}
			other := filepath.Join(dir, "other.key")
			if _, _, err := runCLI(t, "ingest", "combolist", "--breach", "X", "--database", dsn, "--darkweb-key-file", other, good); err == nil || !strings.Contains(err.Error(), "wrong key") {
				t.Fatalf("another key: %v", err)
			}
			if got := count(); got != before {
				t.Fatalf("wrong keys stored records: %d → %d", before, got)
			}
		})
	}
}

// TestDarkwebIngestHashTypeFlag checks --hash-type on the CLI.
func TestDarkwebIngestHashTypeFlag(t *testing.T) {
	dsn := storetest.DSN(t, "sqlite")
	dir := t.TempDir()
	key := filepath.Join(dir, "dw.key")
	csvf := filepath.Join(dir, "h.csv")
	os.WriteFile(csvf, []byte("email,hash\nnt@example.com,8846F7EAEE8FB117AD06BDD830B7586C\n"), 0o600)
	if _, _, err := runCLI(t, "ingest", "breach-csv", csvf, "--hash-type", "whirlpool", "--database", dsn, "--darkweb-key-file", key); err == nil || !strings.Contains(err.Error(), "unknown --hash-type") {
		t.Fatalf("unknown hash type: %v", err)
	}
	if out, _, err := runCLI(t, "ingest", "breach-csv", csvf, "--hash-type", "NTLM", "--database", dsn, "--darkweb-key-file", key); err != nil || !strings.Contains(out, "inserted 1") {
		t.Fatalf("ingest: %v %s", err, out)
	}
	dw := openDarkwebStore(t, dsn, key)
	got, err := dw.Search(context.Background(), darkwebstore.Query{Type: darkweb.HashedPassword, Value: "$NT$8846f7eaee8fb117ad06bdd830b7586c", Limit: 5})
	if err != nil || len(got) != 1 || got[0].Record.HashType != "ntlm" {
		t.Fatalf("search: %+v %v", got, err)
	}
}

// TestDarkwebRotateBesideServer rotates the key with the CLI while a store
// opened the way serve opens it keeps answering, reading the key file
// again when it meets the new key.
func TestDarkwebRotateBesideServer(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			dsn := storetest.DSN(t, engine)
			dir := t.TempDir()
			key := filepath.Join(dir, "dw.key")
			combo := filepath.Join(dir, "combo.txt")
			os.WriteFile(combo, []byte("alice@example.com:pw1\nbob@example.com:pw2\n"), 0o600)
			if _, _, err := runCLI(t, "ingest", "combolist", combo, "--breach", "ExampleCombo", "--database", dsn, "--darkweb-key-file", key); err != nil {
				t.Fatal(err)
			}
			st, err := store.Open(ctx, dsn, store.Files(schema.Sets()...))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			dw, err := openDarkweb(ctx, st, &darkwebConfig{KeyFile: key, Region: "US"}, false, newLogger(io.Discard, "error"))
			if err != nil {
				t.Fatal(err)
			}
			search := func() error {
				got, err := dw.Search(ctx, darkwebstore.Query{Type: darkweb.Email, Value: "bob@example.com", Limit: 5, NoCache: true})
				if err == nil && (len(got) != 1 || got[0].Record.Password != "pw2") {
					err = fmt.Errorf("got %+v", got)
				}
				return err
			}
			if err := search(); err != nil {
				t.Fatal(err)
			}
			out, _, err := runCLI(t, "darkweb", "rotate-key", "--database", dsn, "--darkweb-key-file", key)
			if err != nil || !strings.Contains(out, "re-sealed 2 records") {
				t.Fatalf("rotate: %v\n%s", err, out)
			}
			if err := search(); err != nil {
				t.Fatalf("serve after the rotation: %v", err)
			}
			// A --reindex interrupted once it had recorded its new key
			// (serve and Unlock now refuse: a rotation is unfinished)
			// resumes from a keyring of two keys.
			if err := darkweb.WriteKeyFile(key+".new", bytes.Repeat([]byte{7}, 32)); err != nil {
				t.Fatal(err)
			}
			seven, _ := darkweb.NewKeyring(bytes.Repeat([]byte{7}, 32))
			if _, err := st.DB().ExecContext(ctx, st.Rebind(`INSERT INTO darkweb_keys (key_id, check_value, active, created_at) VALUES (?, ?, 0, 0)`), seven.ID(), seven.Check()); err != nil {
				t.Fatal(err)
			}
			out, _, err = runCLI(t, "darkweb", "rotate-key", "--reindex", "--database", dsn, "--darkweb-key-file", key)
			if err != nil || !strings.Contains(out, "rotated the dark-web key") {
				t.Fatalf("reindex: %v\n%s", err, out)
			}
			k, err := darkweb.LoadOrCreateKey(key, false, nil)
			if err != nil || len(k.KeyIDs()) != 1 {
				t.Fatalf("key file after reindex: %v", err)
			}
			fresh := darkwebstore.New(st)
			if err := fresh.Unlock(ctx, k); err != nil {
				t.Fatal(err)
			}
			got, err := fresh.Search(ctx, darkwebstore.Query{Type: darkweb.Email, Value: "alice@example.com", Limit: 5})
			if err != nil || len(got) != 1 || got[0].Record.Password != "pw1" {
				t.Fatalf("after reindex: %+v %v", got, err)
			}
		})
	}
}

// TestDarkwebIngestAcrossBatches ingests more records than a few batches
// hold (each batch is cleaned and stored while the parser reads the
// next): every record is stored once and the rejects are reported in the
// file's order, whichever batch they fell in; a second run adds nothing.
func TestDarkwebIngestAcrossBatches(t *testing.T) {
	dsn := storetest.DSN(t, "sqlite")
	dir := t.TempDir()
	key := filepath.Join(dir, "dw.key")
	csvf := filepath.Join(dir, "many.csv")
	var b strings.Builder
	b.WriteString("email,password\n")
	n := 3*darkwebingest.Batch + 7
	var wantRejects []string
	for i := range n {
		if i%997 == 0 {
			fmt.Fprintf(&b, "not-an-email-%d,pw%d\n", i, i)
			wantRejects = append(wantRejects, fmt.Sprintf("record %d:", i+1))
			continue
		}
		fmt.Fprintf(&b, "user%d@example.com,pw%d\n", i, i)
	}
	os.WriteFile(csvf, []byte(b.String()), 0o600)
	out, _, err := runCLI(t, "ingest", "breach-csv", csvf, "--database", dsn, "--darkweb-key-file", key)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("read %d, stored %d (inserted %d, updated 0), unchanged 0, skipped 0, rejected %d", n, n-len(wantRejects), n-len(wantRejects), len(wantRejects))
	if !strings.Contains(out, want) {
		t.Fatalf("summary %q, want %q", out, want)
	}
	var got []string
	for _, line := range strings.Split(out, "\n") {
		if r, ok := strings.CutPrefix(line, "  rejected "); ok {
			f := strings.Fields(r)
			got = append(got, f[0]+" "+f[1])
		}
	}
	for i, w := range wantRejects {
		if i >= len(got) || got[i] != w {
			t.Fatalf("rejects %q, want %q in this order", got, wantRejects)
		}
	}
	out, _, err = runCLI(t, "ingest", "breach-csv", csvf, "--database", dsn, "--darkweb-key-file", key)
	if want := fmt.Sprintf("inserted 0, updated 0), unchanged %d", n-len(wantRejects)); err != nil || !strings.Contains(out, want) {
		t.Fatalf("again: %v %q, want %q", err, out, want)
	}
}
