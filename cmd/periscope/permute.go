package main

import (
	"bufio"
	"context"
	"fmt"
	"github.com/periscope-oss/periscope/internal/cli"
	"os"

	"github.com/periscope-oss/periscope/internal/typo"
)

// cmdPermute prints the typosquatting candidates of a domain as CSV
// ("fuzzer,domain", the columns of dnstwist's CSV output), so analysts can
// use the engine on its own.
func cmdPermute(_ context.Context, e env, args []string) error {
	fs := cli.NewFlags(e.stdout, "permute")
	cli.SetUsage(fs, `usage: periscope permute DOMAIN [--dictionary FILE] [--tld FILE]

Prints the typosquatting candidates of DOMAIN as CSV (fuzzer,domain), the
columns of dnstwist's CSV output. Needs no database.`)
	dict := fs.String("dictionary", "", "word list for the dictionary fuzzer (one word a line)")
	tlds := fs.String("tld", "", "suffix list for the tld-swap fuzzer (one suffix a line)")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return cli.Usagef("permute", "give one domain")
	}
	var opts typo.Options
	if opts.Dictionary, err = readWordList(*dict, "dictionary"); err != nil {
		return fmt.Errorf("permute: %w", err)
	}
	if opts.TLDs, err = readWordList(*tlds, "tld"); err != nil {
		return fmt.Errorf("permute: %w", err)
	}
	cands, err := typo.Generate(pos[0], opts)
	if err != nil {
		return fmt.Errorf("permute: %w", err)
	}
	w := bufio.NewWriter(e.stdout)
	if err := typo.WriteCSV(w, cands); err != nil {
		return fmt.Errorf("permute: %w", err)
	}
	return w.Flush()
}

// readWordList reads a dnstwist-format word list named by a flag (none
// when path is empty).
func readWordList(path, flagName string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", flagName, err)
	}
	defer f.Close()
	words, err := typo.ReadWordList(f)
	if err != nil {
		return nil, fmt.Errorf("--%s %s: %w", flagName, path, err)
	}
	return words, nil
}
