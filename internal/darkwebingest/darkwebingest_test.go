package darkwebingest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/darkwebingest"
	"github.com/periscope-oss/periscope/internal/darkwebstore"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

func open(t *testing.T, engine string) *darkwebstore.Store {
	t.Helper()
	s := storetest.Unmigrated(t, engine, darkwebstore.Migrations())
	if _, err := s.Migrate(context.Background(), darkwebstore.Migrations()); err != nil {
		t.Fatal(err)
	}
	k, err := darkweb.NewKeyring(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	dw := darkwebstore.New(s)
	if err := dw.Unlock(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	return dw
}

// TestRunAcrossBatches loads a combolist of more records than a few
// batches hold, through the loader and then again record by record: every
// record is stored once, the rejects are counted in the file's order
// whichever batch they fell in, progress is reported after each batch,
// and the second run adds nothing.
func TestRunAcrossBatches(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			dw := open(t, engine)
			path := filepath.Join(t.TempDir(), "combo.txt")
			var b strings.Builder
			n, bad := 2*darkwebingest.Batch+3, 0
			var wantRejects []string
			for i := range n {
				if i%1999 == 0 {
					fmt.Fprintf(&b, "no-separator-%d\n", i)
					bad++
					wantRejects = append(wantRejects, fmt.Sprintf("combo.txt:%d: ", i+1))
					continue
				}
				fmt.Fprintf(&b, "user%d@example.com:pw%d\n", i, i)
			}
			if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
				t.Fatal(err)
			}
			o := darkweb.Options{Breach: "TestForum", BreachDate: "2026-01-02"}

			load, err := dw.Loader(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer load.Close()
			var reports []darkwebingest.Summary
			r := darkwebingest.NewLoading(dw, load, func(s darkwebingest.Summary) { reports = append(reports, s) })
			if err := r.Source(ctx, "combolist", path, o); err != nil {
				t.Fatal(err)
			}
			if err := r.Build(ctx); err != nil {
				t.Fatal(err)
			}
			got := r.Summary()
			if got.Read != n || got.Added != n-bad || got.Duplicates != 0 || got.Rejected != bad || got.Incomplete != 0 {
				t.Fatalf("first run: %+v, want read %d added %d rejected %d", got, n, n-bad, bad)
			}
			if len(reports) != 3 || reports[0].Read < darkwebingest.Batch {
				t.Errorf("progress reports %d (first %+v), want one per stored batch", len(reports), reports[0])
			}
			for i, want := range wantRejects {
				if i >= len(got.Rejects) || !strings.Contains(got.Rejects[i], want) {
					t.Fatalf("rejects %q, want in the file's order %q", got.Rejects, wantRejects)
				}
			}
			res, err := dw.Search(ctx, darkwebstore.Query{Type: darkweb.Email, Value: "user7@example.com", Limit: 10})
			if err != nil || len(res) != 1 || res[0].Record.Breach != "TestForum" {
				t.Fatalf("search after the load: %v, %+v", err, res)
			}

			again := darkwebingest.New(dw)
			if err := again.Source(ctx, "combolist", path, o); err != nil {
				t.Fatal(err)
			}
			if s := again.Summary(); s.Added != 0 || s.Duplicates != n-bad {
				t.Errorf("second run: %+v, want nothing added and %d already stored", s, n-bad)
			}
		})
	}
}

// TestRunRefusals: an unknown kind, a stealer log that is a file and a
// missing file are errors that store nothing.
func TestRunRefusals(t *testing.T) {
	ctx := context.Background()
	dw := open(t, "sqlite")
	dir := t.TempDir()
	file := filepath.Join(dir, "combo.txt")
	if err := os.WriteFile(file, []byte("a@example.com:pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := darkwebingest.New(dw)
	o := darkweb.Options{Breach: "X"}
	for _, c := range []struct{ kind, src string }{{"pastebin", file}, {"stealer", file}, {"combolist", filepath.Join(dir, "missing")}} {
		if err := r.Source(ctx, c.kind, c.src, o); err == nil || errors.Is(err, darkweb.ErrIncomplete) {
			t.Errorf("%s %s: err %v, want a refusal", c.kind, c.src, err)
		}
	}
	if s := r.Summary(); s.Added != 0 {
		t.Errorf("refusals stored records: %+v", s)
	}
	if !darkwebingest.IsKind("breach-csv") || darkwebingest.IsKind("hosts") {
		t.Error("IsKind")
	}
}
