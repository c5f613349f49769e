package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
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
