package cli

import (
	"errors"
	"io"
	"path/filepath"
	"runtime/debug"
	"slices"
	"testing"
)

func TestParseMixesFlagsAndPositionals(t *testing.T) {
	fs := NewFlags(io.Discard, "t")
	n := fs.Int("n", 0, "")
	pos, err := Parse(fs, []string{"a", "-n", "3", "b"})
	if err != nil || *n != 3 || !slices.Equal(pos, []string{"a", "b"}) {
		t.Fatalf("Parse = %q, %v (n %d), want [a b], nil, 3", pos, err, *n)
	}
	if _, err := Parse(NewFlags(io.Discard, "t"), []string{"-h"}); !errors.Is(err, ErrHelp) {
		t.Fatalf("-h: %v, want ErrHelp", err)
	}
	if _, err := Parse(NewFlags(io.Discard, "t"), []string{"-nope"}); err == nil || errors.Is(err, ErrHelp) {
		t.Fatalf("unknown flag: %v, want an error", err)
	}
}

func TestRedactDSN(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:secret@h:5432/db?sslmode=disable": "postgres://u:***@h:5432/db?sslmode=disable",
		"postgres://u@h/db":                             "postgres://u@h/db",
		"./periscope.db":                                "./periscope.db",
	} {
		if got := RedactDSN(in); got != want {
			t.Errorf("RedactDSN(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOpenStoreMigrates(t *testing.T) {
	st, err := OpenStore(t.Context(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var n int
	if err := st.QueryRow(t.Context(), `SELECT COUNT(*) FROM vulns`).Scan(&n); err != nil {
		t.Fatalf("vulns after OpenStore: %v", err)
	}
}

// TestTuneGC: the given collector target unless GOGC is set, and back.
func TestTuneGC(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	restore := TuneGC(func(k string) string {
		if k == "GOGC" {
			return "150"
		}
		return ""
	}, ServeGCPercent)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC set: target changed to %d", got)
	}
	restore()
	restore = TuneGC(func(string) string { return "" }, ServeGCPercent)
	if got := debug.SetGCPercent(ServeGCPercent); got != ServeGCPercent {
		t.Fatalf("target %d, want %d", got, ServeGCPercent)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("restored target %d, want 100", got)
	}
}
