package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/periscope-oss/periscope/internal/cli"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/store"
)

const usage = `periscope-bench — load generators and synthetic datasets for Periscope's benchmarks

Usage:
  periscope-bench auth [--connections 64] [--duration 10s] [--listen]
  periscope-bench gen-hosts [--count 100000] [--seed 1] [--out FILE]
  periscope-bench gen-darkweb [--kind combolist] [--count 1000000] [--seed 11] [--out FILE]
  periscope-bench darkweb-insert --database DB [--batch 5000]
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
	m["baseline"] = benchBaseline
	// <bench:brand>
	m["brand"] = benchBrand
	// <bench:darkweb>
	m["gen-darkweb"] = benchGenDarkweb
	m["darkweb-insert"] = benchDarkwebInsert
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
	if errors.Is(err, cli.ErrHelp) {
		return nil
	}
	return err
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
	st, err := cli.OpenStore(ctx, cfg.Database)
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
