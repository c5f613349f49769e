package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/periscope-oss/periscope/internal/cli"
	"github.com/periscope-oss/periscope/internal/darkwebgen"
)

// benchGenDarkweb runs `periscope-bench gen-darkweb`: a synthetic breach
// file (internal/darkwebgen, reserved values only) for timing `periscope
// ingest` at scale.
func benchGenDarkweb(_ context.Context, e env, args []string) error {
	fs := cli.NewFlags(e.stderr, "bench gen-darkweb")
	kind := fs.String("kind", "combolist", "layout: combolist, breach-csv or dehashed (NDJSON, v2 arrays)")
	count := fs.Int("count", 1000000, "number of records (lines)")
	seed := fs.Uint64("seed", 11, "random seed (the same kind, count, seed and domains give the same file)")
	domains := fs.String("domains", "example.com,example.org,example.net,example.edu", "comma-separated email domains")
	out := fs.String("out", "", "write to this file instead of standard output")
	if pos, err := cli.Parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return fmt.Errorf("bench gen-darkweb: unexpected argument %q", pos[0])
	}
	if *count < 1 {
		return fmt.Errorf("bench gen-darkweb: --count must be at least 1")
	}
	w := e.stdout
	var f *os.File
	if *out != "" {
		var err error
		if f, err = os.Create(*out); err != nil {
			return fmt.Errorf("bench gen-darkweb: %w", err)
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	g := darkwebgen.New(*seed, strings.Split(*domains, ",")...)
	var err error
	switch *kind {
	case "combolist":
		err = g.Combolist(bw, *count)
	case "breach-csv":
		err = g.CSV(bw, *count, false)
	case "dehashed":
		err = g.DeHashed(bw, *count, true)
	default:
		return fmt.Errorf("bench gen-darkweb: --kind must be combolist, breach-csv or dehashed (got %q)", *kind)
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil && f != nil {
		err = f.Close()
	}
	if err != nil {
		return fmt.Errorf("bench gen-darkweb: %w", err)
	}
	fmt.Fprintf(e.stderr, "generated %d %s records (seed %d)\n", *count, *kind, *seed)
	return nil
}
