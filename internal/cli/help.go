package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// SetUsage makes -h and --help on fs print text (the command's synopsis
// and what it does) followed by its flags, written as --flag.
func SetUsage(fs *flag.FlagSet, text string) {
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprint(w, strings.TrimRight(text, "\n")+"\n")
		PrintFlags(w, fs)
	}
}

// PrintFlags writes the flags of fs the way the documentation writes them:
// "--name TYPE" and the usage on the next line, with the default.
func PrintFlags(w io.Writer, fs *flag.FlagSet) {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprintln(w, "\nFlags:")
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + name
		}
		fmt.Fprintln(w, line)
		usage = strings.ReplaceAll(usage, "\n", "\n        ")
		if d := f.DefValue; d != "" && d != "0" && d != "false" && d != "0s" && d != "[]" && d != "map[]" {
			if name == "string" || name == "file" || name == "path" {
				d = fmt.Sprintf("%q", d)
			}
			usage += " (default " + d + ")"
		}
		fmt.Fprintln(w, "        "+usage)
	})
}

// shortFlag matches a flag name the flag package writes with one dash.
var shortFlag = regexp.MustCompile(`(^|[\s:])-([a-zA-Z][a-zA-Z0-9-]*)`)

// flagError is a flag parsing error in the README's spelling (--flag),
// followed by one line pointing to the command's help.
func flagError(name string, err error) error {
	msg := shortFlag.ReplaceAllString(err.Error(), "$1--$2")
	msg = strings.Replace(msg, "flag provided but not defined", "unknown flag", 1)
	return &UsageError{Command: name, Msg: msg}
}

// UsageError is a command line the command cannot run: a wrong flag, a
// missing argument. Its message ends with the line that points to --help.
type UsageError struct {
	Command string // "serve", "account create"
	Msg     string
}

func (e *UsageError) Error() string {
	prog := "periscope " + e.Command
	if rest, ok := strings.CutPrefix(e.Command, "bench "); ok {
		prog = "periscope-bench " + rest // the benchmarks' own command
	}
	return fmt.Sprintf("%s: %s\nRun \"%s --help\" for its usage.", e.Command, e.Msg, prog)
}

// Usagef returns a UsageError of command: a command line it cannot run.
func Usagef(command, format string, args ...any) error {
	return &UsageError{Command: command, Msg: fmt.Sprintf(format, args...)}
}

// IsHelp reports whether arg asks for help.
func IsHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// errIsHelp reports whether err is the flag package's help error.
func errIsHelp(err error) bool { return errors.Is(err, flag.ErrHelp) }

// Given reports whether the flag name was set on the command line.
func Given(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
