package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/store"
)

// benchCommands maps `periscope bench <name>` to its implementation. Each
// capability adds its benchmarks here (one line each).
func benchCommands() map[string]func(ctx context.Context, e env, args []string) error {
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
	return m
}

func cmdBench(ctx context.Context, e env, args []string) error {
	cmds := benchCommands()
	names := make([]string, 0, len(cmds))
	for k := range cmds {
		names = append(names, k)
	}
	sort.Strings(names)
	if len(args) == 0 {
		return fmt.Errorf("bench: usage: periscope bench <%s> [flags]", strings.Join(names, "|"))
	}
	fn, ok := cmds[args[0]]
	if !ok {
		return fmt.Errorf("bench: unknown benchmark %q (have: %s)", args[0], strings.Join(names, ", "))
	}
	return fn(ctx, e, args[1:])
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
