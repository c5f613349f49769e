package keyfile

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadCreatesOnceWithMode0600(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.key")
	var told string
	data, fresh, err := Load(path, "test key file", 32, true, func(p string) { told = p })
	if err != nil || data != nil || len(fresh) != 32 || told != path {
		t.Fatalf("create: data %v fresh %d told %q err %v", data, len(fresh), told, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v err %v", fi.Mode().Perm(), err)
	}
	data, again, err := Load(path, "test key file", 32, true, func(string) { t.Fatal("created twice") })
	if err != nil || again != nil || strings.TrimSpace(string(data)) != hex.EncodeToString(fresh) {
		t.Fatalf("read back: %q %v %v", data, again, err)
	}
	if err := Write(path, "test key file", bytes.Repeat([]byte{1}, 32)); err == nil {
		t.Fatal("Write overwrote an existing key file")
	}
	data2, _, _ := Load(path, "test key file", 32, false, nil)
	if !bytes.Equal(data, data2) {
		t.Fatal("the key file changed")
	}
}

func TestLoadRefusesMissingWithoutCreateAndOpenModes(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := Load(filepath.Join(dir, "none"), "test key file", 32, false, nil); err == nil {
		t.Fatal("a missing key file was accepted without create")
	}
	path := filepath.Join(dir, "open.key")
	if err := os.WriteFile(path, []byte(strings.Repeat("ab", 32)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := Load(path, "test key file", 32, true, nil)
	if err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Fatalf("a 0644 key file: %v", err)
	}
}
