package main

import (
	"os"
	"strings"
	"testing"
)

func TestPermute(t *testing.T) {
	out, _, err := runCLI(t, "permute", "google.com", "--dictionary", "../../internal/typo/testdata/english.dict", "--tld", "../../internal/typo/testdata/common_tlds.dict")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../internal/typo/testdata/google.com.csv")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		got[l] = true
	}
	for _, l := range strings.Split(strings.TrimSpace(string(want)), "\n") {
		if !got[strings.TrimSpace(l)] {
			t.Errorf("dnstwist row %q missing", l)
		}
	}
	if !strings.HasPrefix(out, "fuzzer,domain\n*original,google.com\n") {
		t.Errorf("header: %.60q", out)
	}
	for _, bad := range [][]string{{"permute", "co.uk"}, {"permute"}, {"permute", strings.Repeat("a", 200) + ".com"}, {"permute", "x.com", "--tld", "/nonexistent"}} {
		if _, _, err := runCLI(t, bad...); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
