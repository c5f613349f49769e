package darkweb

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKeyringFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dw.key")
	one := bytes.Repeat([]byte{1}, 32)
	if err := WriteKeyFile(path, one); err != nil {
		t.Fatal(err)
	}
	single, _ := NewKeyring(one)
	k1, err := LoadOrCreateKey(path, false, nil)
	if err != nil || k1.ID() != single.ID() || k1.IndexID() != single.ID() || len(k1.KeyIDs()) != 1 {
		t.Fatalf("a one-key file (the first format): %v", err)
	}
	rec := Record{Email: "a@example.com", Password: "pw"}
	blob1, err := k1.Seal("id1", &rec)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := AddKeyToFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A second rotation writing at the same time is refused, not raced.
	os.WriteFile(path+".tmp", nil, 0o600)
	if _, err := AddKeyToFile(path); err == nil || !strings.Contains(err.Error(), "another rotation") {
		t.Fatalf("concurrent rotation: %v", err)
	}
	if _, err := os.Stat(path + ".tmp"); err != nil {
		t.Fatal("the other rotation's file was removed")
	}
	os.Remove(path + ".tmp")
	b, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(b), "# Periscope dark-web keyring") || !strings.Contains(string(b), hex.EncodeToString(one)+"\n") {
		t.Fatalf("key file:\n%s", b)
	}
	reread, err := LoadOrCreateKey(path, false, nil)
	if err != nil || reread.ID() != k2.ID() || reread.IndexID() != k1.ID() {
		t.Fatalf("re-read: %v", err)
	}
	// The index, identity and check keys stay the first key's.
	if !bytes.Equal(reread.Index(Email, "a@example.com"), k1.Index(Email, "a@example.com")) || reread.RecordID(&rec) != k1.RecordID(&rec) || !bytes.Equal(reread.Check(), k1.Check()) {
		t.Fatal("the blind indexes changed with a new key")
	}
	// It seals with the new key and opens both.
	blob2, err := reread.Seal("id1", &rec)
	if err != nil {
		t.Fatal(err)
	}
	var got Record
	if err := reread.OpenKey(k1.ID(), "id1", blob1, &got); err != nil || got.Password != "pw" {
		t.Fatalf("old blob: %v", err)
	}
	if err := reread.OpenKey(k2.ID(), "id1", blob2, &got); err != nil {
		t.Fatalf("new blob: %v", err)
	}
	if err := k1.OpenKey(k2.ID(), "id1", blob2, &got); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("unknown key: %v", err)
	}
	// A server holding the first keyring learns the new key by merging.
	if err := k1.Merge(reread); err != nil || !k1.Has(k2.ID()) || k1.ID() != single.ID() {
		t.Fatalf("merge: %v", err)
	}
	if err := k1.OpenKey(k2.ID(), "id1", blob2, &got); err != nil {
		t.Fatal(err)
	}
	other, _ := NewKeyring(bytes.Repeat([]byte{2}, 32))
	if err := k1.Merge(other); err == nil {
		t.Fatal("merged a keyring with another index key")
	}
	// Bad key files name the line.
	for content, want := range map[string]string{
		hex.EncodeToString(one) + "\nnot hex\n":                         "line 2",
		"# only a comment\n":                                            "want 64 hex digits",
		hex.EncodeToString(one) + "\n" + hex.EncodeToString(one) + "\n": "listed twice",
	} {
		p := filepath.Join(dir, "bad.key")
		os.Remove(p)
		os.WriteFile(p, []byte(content), 0o600)
		if _, err := LoadOrCreateKey(p, false, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", content, err, want)
		}
	}
}
