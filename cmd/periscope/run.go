package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/periscope-oss/periscope/internal/cli"
	"io"
	"log/slog"
	"strings"

	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/schema"
	"github.com/periscope-oss/periscope/internal/store"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `periscope — self-hosted attack-surface and threat-intelligence API

Usage:
  periscope init [--company NAME] [--email EMAIL]   first account, key and settings
  periscope serve [--demo] [--addr 127.0.0.1:8080] [--database ./periscope.db]
  periscope migrate
  periscope account create|list|show|update ...
  periscope key create|list|revoke ...
  periscope org authorize-domain|authorize-range|assets ORG_ID ...
  periscope ingest <kind> <file|dir|URL>...
  periscope export hosts [--domain example.com] [--out file]
  periscope search 'QUERY' [--facets country:10,port:5] [--count] [--export FILE]
  periscope permute <domain> [--dictionary FILE] [--tld FILE]
  periscope whois [--json] [--no-cache] DOMAIN
  periscope darkweb rotate-key [--resume | --reindex] [--darkweb-key-file FILE]
  periscope version

Run "periscope <command> --help" for the flags of a command.
Every command takes --database (env PERISCOPE_DATABASE): a SQLite file path
(default ./periscope.db) or a postgres:// URL.
`

// env bundles what a subcommand needs from the process.
type env struct {
	getenv config.Getenv
	stdout io.Writer
	stderr io.Writer
}

// run is the whole program; main only wires it to the process.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	e := env{getenv: getenv, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	err := dispatch(ctx, e, args[0], args[1:])
	if errors.Is(err, cli.ErrHelp) {
		return nil // the help is printed: asking for it is no failure
	}
	return err
}

// dispatch runs the command cmd with its arguments.
func dispatch(ctx context.Context, e env, cmd string, rest []string) error {
	switch cmd {
	case "init":
		return cmdInit(ctx, e, rest)
	case "serve":
		return cmdServe(ctx, e, rest)
	case "migrate":
		return cmdMigrate(ctx, e, rest)
	case "account":
		return cmdAccount(ctx, e, rest)
	case "key":
		return cmdKey(ctx, e, rest)
	case "org":
		return cmdOrg(ctx, e, rest)
	case "ingest":
		return cmdIngest(ctx, e, rest)
	case "bench":
		// The benchmarks carry load clients and generators the shipped
		// binary leaves out; point whoever runs an old command at them.
		return fmt.Errorf("bench: the benchmarks moved to their own command: go run ./cmd/periscope-bench %s", strings.Join(rest, " "))
	case "export":
		return cmdExport(ctx, e, rest)
	case "search":
		return cmdSearch(ctx, e, rest)
	case "permute":
		return cmdPermute(ctx, e, rest)
	case "whois":
		return cmdWhois(ctx, e, rest)
	case "darkweb":
		return cmdDarkweb(ctx, e, rest)
	case "version", "--version", "-v":
		fmt.Fprintln(e.stdout, "periscope", version)
		return nil
	case "help", "-h", "-help", "--help":
		fmt.Fprint(e.stdout, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q\nRun \"periscope --help\" for the commands.", cmd)
}

// subcommand splits the subcommand of a command group (account, key, org,
// export, darkweb) from its arguments: help asked for prints the group's
// usage to standard output and returns cli.ErrHelp.
func subcommand(e env, group, usage string, args []string) (string, []string, error) {
	if len(args) == 0 {
		return "", nil, cli.Usagef(group, "no subcommand given")
	}
	if cli.IsHelp(args[0]) {
		fmt.Fprint(e.stdout, usage)
		return "", nil, cli.ErrHelp
	}
	return args[0], args[1:], nil
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	l.UnmarshalText([]byte(level))
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}

func cmdMigrate(ctx context.Context, e env, args []string) error {
	var cfg config.Config
	fs := cli.NewFlags(e.stdout, "migrate")
	cli.SetUsage(fs, `usage: periscope migrate [--database DSN]

Creates the database when it does not exist and applies every migration
it lacks (serve, init and ingest do this themselves).`)
	cfg.Register(fs, e.getenv)
	if _, err := cli.Parse(fs, args); err != nil {
		return err
	}
	if !cli.IsPostgres(cfg.Database) {
		if _, err := cli.CheckSQLitePath(cfg.Database, false); err != nil {
			return err
		}
	}
	s, err := store.Open(ctx, cfg.Database, store.Files(schema.Sets()...))
	if err != nil {
		return fmt.Errorf("database %s: %w", cli.DescribeDSN(cfg.Database), err)
	}
	defer s.Close()
	if cfg.LogLevel == "info" || cfg.LogLevel == "debug" {
		fmt.Fprintf(e.stderr, "database: %s (%s)\n", cli.DescribeDSN(cfg.Database), s.Engine())
	}
	applied, err := s.Migrate(ctx, schema.Sets()...)
	if err != nil {
		return fmt.Errorf("migrate %s: %w", cli.DescribeDSN(cfg.Database), err)
	}
	if len(applied) == 0 {
		fmt.Fprintln(e.stdout, "database is up to date")
	}
	for _, m := range applied {
		fmt.Fprintln(e.stdout, "applied", m)
	}
	return nil
}
