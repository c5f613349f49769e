package main

import (
	"bufio"
	"context"
	"fmt"
	"github.com/periscope-oss/periscope/internal/cli"
	"io"
	"os"

	"github.com/periscope-oss/periscope/internal/asset"
	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/scan"
)

// cmdExport writes stored data in a form `ingest` reads back:
// `export hosts` writes the native NDJSON of host objects.
func cmdExport(ctx context.Context, e env, args []string) error {
	const exportUsage = `usage: periscope export hosts [--domain example.com] [--out FILE]

Writes the stored hosts as NDJSON host objects, the native format that
"periscope ingest hosts" reads back. Reads the database only: it must exist.
`
	sub, args, err := subcommand(e, "export", exportUsage, args)
	if err != nil {
		return err
	}
	if sub != "hosts" {
		return cli.Usagef("export", "unknown subcommand %q (export hosts is the one)", sub)
	}
	var cfg config.Config
	fs := cli.NewFlags(e.stdout, "export hosts")
	cli.SetUsage(fs, exportUsage)
	cfg.Register(fs, e.getenv)
	domain := fs.String("domain", "", "export only this domain and the hosts below it")
	out := fs.String("out", "", "write to this file instead of standard output")
	if pos, err := cli.Parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return fmt.Errorf("export hosts: unexpected argument %q", pos[0])
	}
	if *domain != "" {
		d, err := asset.Domain(*domain)
		if err != nil {
			return fmt.Errorf("export hosts: --domain: %w", err)
		}
		*domain = d
	}
	st, err := cli.Open(ctx, cfg.Database, cli.Opening{MustExist: true, Log: e.stderr, LogLevel: cfg.LogLevel})
	if err != nil {
		return err
	}
	defer st.Close()
	var w io.Writer = e.stdout
	var f *os.File
	if *out != "" {
		if f, err = os.Create(*out); err != nil {
			return fmt.Errorf("export hosts: %w", err)
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	enc := scan.NewEncoder(bw)
	n := 0
	err = hoststore.New(st).EachHost(ctx, *domain, func(h host.Host) error {
		n++
		return enc.Encode(h)
	})
	if err == nil {
		err = enc.Flush()
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil && f != nil {
		err = f.Close()
	}
	if err != nil {
		return fmt.Errorf("export hosts: %w", err)
	}
	fmt.Fprintf(e.stderr, "exported %d hosts\n", n)
	return nil
}
