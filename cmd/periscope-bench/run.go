package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/schema"
	"github.com/periscope-oss/periscope/internal/store"
)

const usage = `periscope-bench — load generators and synthetic datasets for Periscope's benchmarks

Usage:
  periscope-bench auth [--connections 64] [--duration 10s] [--listen]
  periscope-bench gen-hosts [--count 100000] [--seed 1] [--out FILE]
  periscope-bench gen-darkweb [--kind combolist] [--count 1000000] [--seed 11] [--out FILE]
  periscope-bench search [--count 1000000] [--seed 1] [--url URL --key KEY]
  periscope-bench vuln [--vulns 300000] [--advisories 100000] [--exploits 20000]
  periscope-bench brand [--findings 100000] [--ct-entries 5000]

Run "periscope-bench <name> -h" for the flags of a benchmark. They take
--database (env PERISCOPE_DATABASE) as periscope does; auth and vuln default
to a new SQLite file in a temporary directory. This command is not part of
the shipped periscope binary: it carries the generators and load clients.
`

// env bundles what a benchmark needs from the process.
type env struct {
	getenv config.Getenv
	stdout io.Writer
	stderr io.Writer
}

// benchmarks maps `periscope-bench <name>` to its implementation. Each
// capability adds its benchmarks here (one line each).
func benchmarks() map[string]func(ctx context.Context, e env, args []string) error {
	m := map[string]func(ctx context.Context, e env, args []string) error{
		"auth": benchAuth,
	}
	// <bench:vuln>
	m["vuln"] = benchVuln
	// <bench:hosts>
	m["gen-hosts"] = benchGenHosts
	m["search"] = benchSearch
	// <bench:brand>
	m["brand"] = benchBrand
	// <bench:darkweb>
	m["gen-darkweb"] = benchGenDarkweb
	return m
}

// run is the whole program; main only wires it to the process.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	e := env{getenv: getenv, stdout: stdout, stderr: stderr}
	cmds := benchmarks()
	names := make([]string, 0, len(cmds))
	for k := range cmds {
		names = append(names, k)
	}
	sort.Strings(names)
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("usage: periscope-bench <%s> [flags]", strings.Join(names, "|"))
	}
	switch args[0] {
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fn, ok := cmds[args[0]]
	if !ok {
		return fmt.Errorf("unknown benchmark %q (have: %s)", args[0], strings.Join(names, ", "))
	}
	err := fn(ctx, e, args[1:])
	if errors.Is(err, errHelp) {
		return nil
	}
	return err
}

// newFlags returns a flag set that reports errors instead of exiting.
func newFlags(e env, name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	return fs
}

// parse parses args, turning flag errors into one line. Flags may come
// before or after positional arguments; the positional ones are returned.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			return nil, fmt.Errorf("%s: %w", fs.Name(), err)
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

var errHelp = errors.New("help shown")

// openStore opens and migrates the configured database.
func openStore(ctx context.Context, cfg *config.Config) (*store.Store, error) {
	s, err := store.Open(ctx, cfg.Database)
	if err != nil {
		return nil, err
	}
	if _, err := s.Migrate(ctx, schema.Sets()...); err != nil {
		s.Close()
		return nil, fmt.Errorf("migrate %s: %w", redactDSN(cfg.Database), err)
	}
	return s, nil
}

// redactDSN hides a password in a postgres URL for messages.
func redactDSN(dsn string) string {
	if i := strings.Index(dsn, "://"); i >= 0 {
		if at := strings.LastIndex(dsn, "@"); at > i {
			if colon := strings.Index(dsn[i+3:at], ":"); colon >= 0 {
				return dsn[:i+3+colon+1] + "***" + dsn[at:]
			}
		}
	}
	return dsn
}

// openBenchStore opens the database of a benchmark: --database (or
// PERISCOPE_DATABASE) when given, else a new SQLite file in a temporary
// directory that cleanup removes. cleanup also closes the store.
func openBenchStore(ctx context.Context, e env, fs *flag.FlagSet, cfg *config.Config) (*store.Store, func(), error) {
	dbSet := false
	fs.Visit(func(f *flag.Flag) { dbSet = dbSet || f.Name == "database" })
	dir := ""
	if !dbSet && e.getenv("PERISCOPE_DATABASE") == "" {
		var err error
		if dir, err = os.MkdirTemp("", "periscope-bench-"); err != nil {
			return nil, nil, err
		}
		cfg.Database = filepath.Join(dir, "bench.db")
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		if dir != "" {
			os.RemoveAll(dir)
		}
		return nil, nil, err
	}
	return st, func() {
		st.Close()
		if dir != "" {
			os.RemoveAll(dir)
		}
	}, nil
}
