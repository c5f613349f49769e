package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/periscope-oss/periscope/internal/cli"
	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hostquery"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// cmdSearch runs a host query against the database (docs/search.md), for
// operators: the total and facets, a page of matches, or every match
// exported to a file.
func cmdSearch(ctx context.Context, e env, args []string) error {
	var cfg config.Config
	fs := cli.NewFlags(e.stdout, "search")
	cli.SetUsage(fs, `usage: periscope search 'QUERY' [--facets country:10,port:5] [--count] [--export FILE]

Runs a host query in Periscope's query language against the database
(docs/search.md). Reads the database only: it must exist.`)
	cfg.Register(fs, e.getenv)
	facets := fs.String("facets", "", "facets to count, as field:N separated by commas (country:10,port:5)")
	count := fs.Bool("count", false, "print the total and the facets only")
	export := fs.String("export", "", "write every match to this file (- for standard output)")
	format := fs.String("format", "ndjson", "the export format: ndjson, csv or ips")
	limit := fs.Int("limit", 20, "matches to print (1 to 1000)")
	page := fs.Int("page", 1, "the page of matches to print")
	asJSON := fs.Bool("json", false, "print what GET /api/v1/hosts/search answers, as JSON")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return cli.Usagef("search", "give one query, quoted")
	}
	if *limit < 1 || *limit > 1000 || *page < 1 {
		return fmt.Errorf("search: --limit must be from 1 to 1000 and --page at least 1")
	}
	e2, err := hostquery.ParsePlan(pos[0])
	if err != nil {
		return fmt.Errorf("search: %s", periscope.ErrorMessage(err))
	}
	fc, err := hostquery.ParseFacets(*facets)
	if err != nil {
		return fmt.Errorf("search: %s", periscope.ErrorMessage(err))
	}
	if *export != "" {
		if err := hostquery.CheckFormat(*format); err != nil {
			return fmt.Errorf("search: --format: %s", periscope.ErrorMessage(err))
		}
	}
	st, err := cli.Open(ctx, cfg.Database, cli.Opening{MustExist: true, Log: e.stderr, LogLevel: cfg.LogLevel})
	if err != nil {
		return err
	}
	defer st.Close()
	m, err := hoststore.New(st).MatchHosts(ctx, e2)
	if err != nil {
		return fmt.Errorf("search: %w", err)
	}
	if *export != "" {
		return searchExport(ctx, e, m, *export, *format)
	}
	fv := map[string][]hostquery.FacetValue{}
	for _, f := range fc {
		vals, err := m.Facet(ctx, f.Term, f.Limit)
		if err != nil {
			return fmt.Errorf("search: %w", err)
		}
		fv[f.Name] = f.Display(vals)
	}
	var hs []host.Host
	if !*count {
		if hs, err = m.Page(ctx, (*page-1)**limit, *limit); err != nil {
			return fmt.Errorf("search: %w", err)
		}
	}
	if *asJSON {
		out := map[string]any{"query": pos[0], "total": m.Count(), "total_is_exact": true, "facets": fv}
		if !*count {
			out["matches"], out["page"], out["limit"] = hs, *page, *limit
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintf(e.stdout, "%d hosts match %s\n", m.Count(), pos[0])
	for _, f := range fc {
		fmt.Fprintf(e.stdout, "\n%s:\n", f.Name)
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
		for _, v := range fv[f.Name] {
			fmt.Fprintf(tw, "%d\t  %v\t\n", v.Count, v.Value)
		}
		tw.Flush()
	}
	if len(hs) > 0 {
		fmt.Fprintln(e.stdout)
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "HOST\tIP\tCOUNTRY\tPORTS\tTITLE")
		for _, h := range hs {
			ports := make([]string, len(h.NetworkPorts))
			for i, p := range h.NetworkPorts {
				ports[i] = strconv.Itoa(p)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", h.Host, h.IPAddress, h.IPMetadata.CountryCode, strings.Join(ports, ","), periscope.Clip(h.HTTPTitle, 60))
		}
		tw.Flush()
	}
	return nil
}

// searchExport writes every match to path (- for standard output).
func searchExport(ctx context.Context, e env, m *hoststore.Matches, path, format string) error {
	w := e.stdout
	var f *os.File
	if path != "-" {
		var err error
		if f, err = os.Create(path); err != nil {
			return fmt.Errorf("search: %w", err)
		}
		defer f.Close()
		w = f
	}
	n, err := hostquery.Export(ctx, w, m, format)
	if err == nil && f != nil {
		err = f.Close()
	}
	if err != nil {
		return fmt.Errorf("search: export: %w", err)
	}
	fmt.Fprintf(e.stderr, "exported %d hosts\n", n)
	return nil
}
