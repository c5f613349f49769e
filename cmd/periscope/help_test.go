package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// commandLines are every command and subcommand of periscope, as a user
// types them before the flags.
func commandLines() [][]string {
	lines := [][]string{
		{"init"}, {"serve"}, {"migrate"},
		{"account"}, {"account", "create"}, {"account", "list"}, {"account", "show"}, {"account", "update"},
		{"key"}, {"key", "create"}, {"key", "list"}, {"key", "revoke"},
		{"org"}, {"org", "authorize-domain"}, {"org", "verify-domain"}, {"org", "authorize-range"}, {"org", "assets"},
		{"ingest"},
		{"export"}, {"export", "hosts"},
		{"permute"}, {"whois"}, {"search"},
		{"darkweb"}, {"darkweb", "rotate-key"},
	}
	for _, k := range ingestKinds {
		lines = append(lines, []string{"ingest", k.name})
	}
	return lines
}

// oneDash finds a flag written -flag rather than --flag.
var oneDash = regexp.MustCompile(`(^|[\s\[(])-[a-z]`)

// TestHelpEveryCommand: -h and --help on every command and subcommand
// print its help on the standard output and succeed, touching no
// database; a wrong flag fails with the error and one line pointing to
// --help, never the list of flags.
func TestHelpEveryCommand(t *testing.T) {
	dir := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	for _, line := range commandLines() {
		name := strings.Join(line, " ")
		for _, h := range []string{"-h", "--help"} {
			out, errOut, err := runCLI(t, append(slices.Clone(line), h)...)
			if err != nil || errOut != "" {
				t.Errorf("%s %s: %v, stderr %q", name, h, err, errOut)
				continue
			}
			if !strings.Contains(out, "usage") || !strings.Contains(out, "periscope "+line[0]) {
				t.Errorf("%s %s: help is %q", name, h, out)
			}
			// The synopsis and the flags (the descriptions quote other
			// tools, such as nmap -oX, in their own spelling).
			synopsis, _, _ := strings.Cut(out, "\n")
			_, flags, _ := strings.Cut(out, "\nFlags:\n")
			if oneDash.MatchString(synopsis) || regexp.MustCompile(`(?m)^\s+-[a-z]`).MatchString(flags) {
				t.Errorf("%s %s: a flag is shown with one dash:\n%s", name, h, out)
			}
		}
		if len(line) == 1 && slices.Contains([]string{"account", "key", "org", "export", "darkweb"}, line[0]) {
			continue // a group: its subcommands take the flags
		}
		out, errOut, err := runCLI(t, append(slices.Clone(line), "--no-such-flag")...)
		if err == nil {
			t.Errorf("%s --no-such-flag: no error", name)
			continue
		}
		msg := err.Error()
		if !oneLineError(err) || !strings.Contains(msg, "--no-such-flag") || !strings.Contains(msg, "periscope "+name+" --help") || out != "" || errOut != "" {
			t.Errorf("%s --no-such-flag: %q, stdout %q, stderr %q", name, msg, out, errOut)
		}
	}
	if out, _, err := runCLI(t, "--help"); err != nil || !strings.Contains(out, "periscope init") {
		t.Errorf("periscope --help: %v %q", err, out)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("help and flag errors wrote files: %v", ents)
	}
	// A flag given a wrong value says which, spelt --flag.
	_, _, err := runCLI(t, "serve", "--rate-limit", "many", "--database", filepath.Join(dir, "x.db"))
	if err == nil || !strings.Contains(err.Error(), "--rate-limit") || !oneLineError(err) {
		t.Errorf("bad value: %v", err)
	}
}

// TestIngestHelpListsEveryKind: `periscope ingest --help` lists every kind
// with what it reads and an example, and the list is the ingesters'.
func TestIngestHelpListsEveryKind(t *testing.T) {
	var listed, have []string
	for _, k := range ingestKinds {
		listed = append(listed, k.name)
		if k.reads == "" || !strings.HasPrefix(k.example, "periscope ingest "+k.name+" ") {
			t.Errorf("kind %s: reads %q, example %q", k.name, k.reads, k.example)
		}
	}
	for k := range ingesters() {
		have = append(have, k)
	}
	sort.Strings(listed)
	sort.Strings(have)
	if !slices.Equal(listed, have) {
		t.Fatalf("help lists %v, ingest has %v", listed, have)
	}
	out, _, err := runCLI(t, "ingest", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ingestKinds {
		if !strings.Contains(out, "\n  "+k.name+" ") || !strings.Contains(out, k.example) {
			t.Errorf("ingest --help lacks %s:\n%s", k.name, out)
		}
	}
}
