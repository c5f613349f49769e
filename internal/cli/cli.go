// Package cli is the command-line plumbing that cmd/periscope and
// cmd/periscope-bench share: flag sets that report errors instead of
// exiting, flags mixed with positional arguments, opening and migrating
// the configured database, and hiding a password in a database URL.
package cli

import (
	"context"
	"errors"
	"flag"
	"io"
	"runtime/debug"
	"strings"

	"github.com/periscope-oss/periscope/internal/store"
)

// ErrHelp is returned by Parse when -h or --help was given (the flag set
// has printed its usage): commands return it and main exits quietly.
var ErrHelp = errors.New("help shown")

// NewFlags returns a flag set named name (the command line after
// "periscope", such as "account create") that writes its help, on -h or
// --help, to help (the standard output) and reports errors instead of
// exiting. Its default help is a one-line synopsis and the flags; SetUsage
// gives it more.
func NewFlags(help io.Writer, name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(help)
	SetUsage(fs, "usage: periscope "+name+" [flags]")
	return fs
}

// Parse parses args. Flags may come before or after positional arguments;
// the positional ones are returned. -h or --help prints the help and
// returns ErrHelp; a wrong flag returns a UsageError (the error and one
// line pointing to --help), with nothing printed.
func Parse(fs *flag.FlagSet, args []string) ([]string, error) {
	// The flag package prints the error and the whole usage on any
	// mistake: keep it quiet and print the usage only when asked.
	usage, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	defer func() { fs.Usage = usage; fs.SetOutput(out) }()
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errIsHelp(err) {
				fs.SetOutput(out)
				usage()
				return nil, ErrHelp
			}
			return nil, flagError(fs.Name(), err)
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// OpenStore opens the database dsn (a SQLite path or a postgres:// URL,
// with the files of every capability that keeps its own), creating it when
// it does not exist, and migrates every capability's tables. Open says
// more: refusing to create, naming the database first.
func OpenStore(ctx context.Context, dsn string, opts ...store.Option) (*store.Store, error) {
	return Open(ctx, dsn, Opening{Options: opts})
}

// RedactDSN hides a password in a postgres URL for messages.
func RedactDSN(dsn string) string {
	if i := strings.Index(dsn, "://"); i >= 0 {
		if at := strings.LastIndex(dsn, "@"); at > i {
			if colon := strings.Index(dsn[i+3:at], ":"); colon >= 0 {
				return dsn[:i+3+colon+1] + "***" + dsn[at:]
			}
		}
	}
	return dsn
}

// ServeGCPercent is the garbage collector's target `serve` runs with
// (GOGC=400) unless the GOGC environment variable sets another: a dark-web
// page of 1,000 records allocates about 5 MB, and with the answer caches
// bounded the live heap is small, so the default target (100) ran a
// collection every few large requests. Measured at 10M records on
// PostgreSQL: 17 % less CPU for the same requests (BENCHMARKS.md's git
// history, 2026-11-26); the heap may grow to five times what is
// live instead of twice.
const ServeGCPercent = 400

// TuneGC sets the collector's target to percent unless getenv says GOGC
// (the environment wins), and returns the function that restores it.
func TuneGC(getenv func(string) string, percent int) (restore func()) {
	if getenv("GOGC") != "" {
		return func() {}
	}
	prev := debug.SetGCPercent(percent)
	return func() { debug.SetGCPercent(prev) }
}
