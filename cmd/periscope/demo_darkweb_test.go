package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/periscope-oss/periscope/internal/darkwebgen"
)

// writeDarkwebDemo writes the demo's dark-web files as internal/darkwebgen
// makes them with darkwebDemoSeed.
func writeDarkwebDemo(t *testing.T, dir string) {
	t.Helper()
	g := darkwebgen.New(darkwebDemoSeed, darkwebDemoDomains...)
	for _, f := range []struct {
		name string
		fn   func(b *bytes.Buffer) error
	}{
		{"breaches.json", func(b *bytes.Buffer) error { return g.Breaches(b) }},
		{"combo.txt", func(b *bytes.Buffer) error { return g.Combolist(b, 60) }},
		{"dump.csv", func(b *bytes.Buffer) error { return g.CSV(b, 80, false) }},
		{"dump.tsv", func(b *bytes.Buffer) error { return g.CSV(b, 40, true) }},
		{"dehashed-v1.json", func(b *bytes.Buffer) error { return g.DeHashed(b, 30, false) }},
		{"dehashed-v2.ndjson", func(b *bytes.Buffer) error { return g.DeHashed(b, 30, true) }},
	} {
		var b bytes.Buffer
		if err := f.fn(&b); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f.name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Stealer(filepath.Join(dir, "stealer"), 3, 5); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := g.ForumCSV(&b, 12); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "forum.csv"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The bundled dark-web demo files are exactly what the generator makes, so
// they hold reserved values only. PERISCOPE_REGENERATE_DEMO=1 rewrites them.
func TestDarkwebDemoFilesAreGenerated(t *testing.T) {
	if os.Getenv("PERISCOPE_REGENERATE_DEMO") == "1" {
		os.RemoveAll("demodata/darkweb/stealer")
		if err := os.MkdirAll("demodata/darkweb", 0o755); err != nil {
			t.Fatal(err)
		}
		writeDarkwebDemo(t, "demodata/darkweb")
	}
	dir := t.TempDir()
	writeDarkwebDemo(t, dir)
	want := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			want[filepath.ToSlash(rel)], _ = os.ReadFile(p)
		}
		return err
	})
	got := map[string][]byte{}
	fs.WalkDir(darkwebDemoFS, "demodata/darkweb", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Base(p) != "README.md" {
			rel, _ := filepath.Rel("demodata/darkweb", p)
			got[filepath.ToSlash(rel)], _ = fs.ReadFile(darkwebDemoFS, p)
		}
		return err
	})
	if len(got) != len(want) {
		t.Fatalf("bundled %d files, the generator makes %d (PERISCOPE_REGENERATE_DEMO=1 go test -run TestDarkwebDemoFilesAreGenerated ./cmd/periscope rewrites them)", len(got), len(want))
	}
	for name, w := range want {
		if !bytes.Equal(got[name], w) {
			t.Errorf("demodata/darkweb/%s differs from the generator's output (PERISCOPE_REGENERATE_DEMO=1 rewrites it)", name)
		}
	}
}
