package typo

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readList(t testing.TB, name string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	words, err := ReadWordList(f)
	if err != nil {
		t.Fatal(err)
	}
	return words
}

func goldenOptions(t testing.TB) Options {
	return Options{Dictionary: readList(t, "english.dict"), TLDs: readList(t, "common_tlds.dict")}
}

// TestGolden compares our candidates with dnstwist's output for the same
// inputs: every row must be produced, under the same fuzzer, and nothing
// more.
func TestGolden(t *testing.T) {
	opts := goldenOptions(t)
	files, err := filepath.Glob("testdata/*.csv")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{}
			original := ""
			for _, r := range rows[1:] {
				want[r[1]] = r[0]
				if r[0] == Original {
					original = r[1]
				}
			}
			got, err := Generate(original, opts)
			if err != nil {
				t.Fatal(err)
			}
			have := map[string]string{}
			for _, c := range got {
				have[c.Domain] = c.Fuzzer
			}
			var missing, extra, wrong []string
			for d, f := range want {
				g, ok := have[d]
				switch {
				case !ok:
					missing = append(missing, f+","+d)
				case g != f:
					wrong = append(wrong, d+": got "+g+" want "+f)
				}
			}
			for d, f := range have {
				if _, ok := want[d]; !ok {
					extra = append(extra, f+","+d)
				}
			}
			t.Logf("%s: %d golden rows, %d generated, %d missing, %d extra, %d with another fuzzer",
				original, len(want), len(got), len(missing), len(extra), len(wrong))
			if len(missing)+len(extra)+len(wrong) > 0 {
				t.Errorf("missing %d: %s", len(missing), head(missing))
				t.Errorf("extra %d: %s", len(extra), head(extra))
				t.Errorf("wrong fuzzer %d: %s", len(wrong), head(wrong))
			}
			var buf bytes.Buffer
			if err := WriteCSV(&buf, got); err != nil {
				t.Fatal(err)
			}
			if len(missing)+len(extra)+len(wrong) == 0 {
				if diff := cmp.Diff(string(raw), buf.String()); diff != "" {
					t.Errorf("WriteCSV output differs from the golden file (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func head(xs []string) string {
	if len(xs) > 20 {
		xs = xs[:20]
	}
	return strings.Join(xs, " ")
}
