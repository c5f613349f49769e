package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestAccountQuotaFlags: create and update set the quotas, show prints the
// effective ones, 0 restores the default and negatives are refused.
func TestAccountQuotaFlags(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	cli := func(args ...string) (string, error) {
		var out, errb bytes.Buffer
		err := run(context.Background(), append(args, "--database", db), func(string) string { return "" }, &out, &errb)
		return out.String() + errb.String(), err
	}
	if out, err := cli("account", "create", "--company", "Q", "--email", "q@example.com", "--enterprise",
		"--max-organizations", "5", "--max-domains", "7"); err != nil {
		t.Fatalf("create: %v\n%s", err, out)
	}
	out, err := cli("account", "show", "Q")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"max organizations:       5\n", "max domains:             7\n", "max ip ranges:           250 (default)\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	out, err = cli("account", "update", "Q", "--max-domains", "0", "--max-ranges", "3")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"max organizations:       5\n", "max domains:             250 (default)\n", "max ip ranges:           3\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("update lacks %q:\n%s", want, out)
		}
	}
	if _, err := cli("account", "update", "Q", "--max-ranges", "-1"); err == nil || !strings.Contains(err.Error(), "--max-ranges") {
		t.Fatalf("negative quota: %v", err)
	}
}
