package periscope

import "testing"

func TestClipCutsWholeCharacters(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 3, "abc"}, {"abcd", 3, "abc…"}, {"漢字漢字", 2, "漢字…"}, {"漢字", 2, "漢字"}, {"", 0, ""}, {"a", 0, "…"},
	} {
		if got := Clip(c.s, c.n); got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}
