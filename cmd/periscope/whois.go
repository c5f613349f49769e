package main

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/periscope-oss/periscope/internal/cli"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/egress"
	"github.com/periscope-oss/periscope/internal/ingestreport"
	"github.com/periscope-oss/periscope/internal/rdap"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/whois"
	"github.com/periscope-oss/periscope/internal/whoislookup"
	"github.com/periscope-oss/periscope/internal/whoisstore"
	"github.com/periscope-oss/periscope/internal/wire"
)

// newWhoisService builds the lookup from the outbound settings: every
// connection through one egress dialer, the WHOIS server table and RDAP dns
// registry overridable by file, a token bucket per upstream host.
func newWhoisService(ctx context.Context, cfg *config.Config, st *store.Store) (*whoislookup.Service, error) {
	o := cfg.Outbound
	dialer := egress.New(egress.Options{AllowPrivate: o.AllowPrivateTargets, Ports: []int{43, 443}})
	servers := whois.BundledServers()
	if o.WhoisServers != "" {
		var err error
		if servers, err = whois.LoadServers(o.WhoisServers); err != nil {
			return nil, err
		}
	}
	var dns *rdap.Registry
	if o.RDAPBootstrap != "" {
		b, err := os.ReadFile(o.RDAPBootstrap)
		if err != nil {
			return nil, fmt.Errorf("--rdap-bootstrap: %w", err)
		}
		if dns, err = rdap.ParseRegistry(b); err != nil {
			return nil, fmt.Errorf("--rdap-bootstrap %s: %w", o.RDAPBootstrap, err)
		}
	}
	svc := whoislookup.New(whoislookup.Config{
		Store:        whoisstore.New(st).OnChange(wire.NewLedger(st).WHOIS),
		RDAP:         &rdap.Client{HTTP: dialer.HTTPClient(15 * time.Second)},
		WHOIS:        &whois.Client{Dial: dialer.DialContext, Servers: servers, Timeout: whois.DefaultTimeout},
		Limiter:      whoislookup.NewLimiter(o.WhoisRate, o.WhoisBurst, 10*time.Second, time.Now),
		DNSBootstrap: dns,
	})
	if err := svc.LoadBootstrap(ctx); err != nil {
		return nil, err
	}
	return svc, nil
}

// setupWhois adds the WHOIS lookup to the API and, unless turned off, the
// daily refresh of IANA's RDAP bootstrap registries.
func setupWhois(ctx context.Context, svc *services) error {
	ws, err := newWhoisService(ctx, svc.cfg, svc.store)
	if err != nil {
		return fmt.Errorf("whois: %w", err)
	}
	svc.deps.Whois = ws
	svc.whois = ws
	if svc.cfg.Outbound.RDAPRefresh && !svc.cfg.Demo {
		svc.workers = append(svc.workers, worker{name: "rdap-bootstrap", run: func(ctx context.Context) error {
			ws.RunBootstrapRefresh(ctx, svc.log)
			return ctx.Err()
		}})
	}
	return nil
}

//go:embed demodata/whois
var whoisDemo embed.FS

// loadWhoisDemo stores the bundled real answers so the demo answers
// /oem/whois/lookup for their domains without network. They never expire
// from the cache: the demo must not reach out for them.
func loadWhoisDemo(ctx context.Context, svc *services) error {
	st := whoisstore.New(svc.store)
	entries, err := fs.ReadDir(whoisDemo, "demodata/whois")
	if err != nil {
		return err
	}
	n := 0
	// Port-43 texts first, then RDAP, so a domain with both keeps both.
	for _, ext := range []string{".txt", ".json"} {
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ext) {
				continue
			}
			b, err := whoisDemo.ReadFile("demodata/whois/" + e.Name())
			if err != nil {
				return err
			}
			if _, _, err := whoislookup.Ingest(ctx, st, b, "demo:"+e.Name(), time.Now(), 100*365*24*time.Hour); err != nil {
				return fmt.Errorf("whois demo: %w", err)
			}
			n++
		}
	}
	svc.log.Info("demo whois records loaded", "files", n)
	return nil
}

func addWhoisIngesters(m map[string]ingester) {
	m["whois"] = ingestWhois
}

// ingestWhois loads recorded raw WHOIS texts and RDAP JSON answers (files
// or directories of them). A file that cannot be read as either is
// reported and skipped; the others are stored.
func ingestWhois(ctx context.Context, e env, st *store.Store, cfg *config.Config, o ingestOpts, sources []string) error {
	start := time.Now()
	ws := whoisstore.New(st).OnChange(wire.NewLedger(st).WHOIS)
	var files []string
	for _, src := range sources {
		info, err := os.Stat(src)
		if err != nil {
			return fmt.Errorf("ingest whois: %w", err)
		}
		if !info.IsDir() {
			files = append(files, src)
			continue
		}
		err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && !strings.HasPrefix(d.Name(), ".") && !strings.HasSuffix(d.Name(), ".md") {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("ingest whois: %w", err)
		}
	}
	// One answer a file: a file that is not a domain's answer is
	// rejected with the reason.
	rep := ingestreport.Summary{Kind: "whois", Sources: len(files)}
	prog := newProgress(e.stderr, inputSize(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		prog.read.Add(int64(len(b)))
		var existed bool
		if err == nil {
			_, existed, err = whoislookup.Ingest(ctx, ws, b, filepath.Base(f), time.Now(), whoislookup.DefaultCacheTTL)
		}
		rep.Read++
		switch {
		case err != nil:
			rep.Reject(err.Error())
		case existed:
			rep.Updated++
		default:
			rep.Inserted++
		}
		rep.Duration = time.Since(start)
		prog.update(rep)
	}
	prog.done()
	o.report(e, rep, nil)
	if rep.Stored() == 0 && rep.Rejected > 0 {
		return errors.New("ingest whois: no file could be read")
	}
	return nil
}

// cmdWhois is `periscope whois DOMAIN`: the API's lookup, printed.
func cmdWhois(ctx context.Context, e env, args []string) error {
	var cfg config.Config
	fs := cli.NewFlags(e.stdout, "whois")
	cli.SetUsage(fs, `usage: periscope whois [--json] [--no-cache] DOMAIN

Looks DOMAIN up as the API's /domain/{domain}/whois does (RDAP first, then
WHOIS), stores the answer and prints it.`)
	cfg.Register(fs, e.getenv)
	if err := cfg.RegisterOutbound(fs, e.getenv); err != nil {
		return err
	}
	asJSON := fs.Bool("json", false, "print the API's JSON answer")
	noCache := fs.Bool("no-cache", false, "ask upstream even when a fresh answer is stored")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return cli.Usagef("whois", "give one domain")
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := cfg.ValidateOutbound(); err != nil {
		return err
	}
	domain, tld, err := whoislookup.Normalize(pos[0])
	if err != nil {
		return fmt.Errorf("whois: %w", err)
	}
	st, err := cli.Open(ctx, cfg.Database, cli.Opening{Log: e.stderr, LogLevel: cfg.LogLevel})
	if err != nil {
		return err
	}
	defer st.Close()
	svc, err := newWhoisService(ctx, &cfg, st)
	if err != nil {
		return err
	}
	res, err := svc.Lookup(ctx, domain, tld, *noCache)
	if err != nil {
		return fmt.Errorf("whois %s: %w", domain, err)
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(res)
	}
	printWhois(e, res)
	return nil
}

func printWhois(e env, res *whoislookup.Result) {
	w := e.stdout
	d := res.WhoisData
	state := "registered"
	if !d.Registered {
		state = "not registered"
	}
	note := ""
	switch {
	case res.Stale:
		note = " (stale: upstream failed; last stored answer)"
	case res.Cached:
		note = " (cached)"
	}
	fmt.Fprintf(w, "Domain:      %s (%s)%s\nQueried at:  %s\n", d.Domain, state, note, d.QueriedAt)
	if len(d.RDAP) > 0 && string(d.RDAP) != "null" {
		var v struct {
			Source      string   `json:"source"`
			Registrar   string   `json:"registrar"`
			Nameservers []string `json:"nameservers"`
			Status      []string `json:"status"`
			CreatedAt   *string  `json:"created_at"`
			UpdatedAt   *string  `json:"updated_at"`
			ExpiresAt   *string  `json:"expires_at"`
		}
		json.Unmarshal(d.RDAP, &v)
		printFields(e, "RDAP", v.Source, v.Registrar, v.CreatedAt, v.UpdatedAt, v.ExpiresAt, v.Status, v.Nameservers)
	}
	if x := d.WHOIS; x != nil {
		printFields(e, "WHOIS", x.Source, x.Registrar, x.CreatedAt, x.UpdatedAt, x.ExpiresAt, x.Status, x.Nameservers)
		if x.Registrant != nil {
			fmt.Fprintf(w, "  Registrant:  %s %s %s\n", x.Registrant.Org, x.Registrant.Country, x.Registrant.Email)
		}
	}
}

func printFields(e env, proto, source, registrar string, created, updated, expires *string, status, ns []string) {
	str := func(p *string) string {
		if p == nil {
			return "-"
		}
		return *p
	}
	fmt.Fprintf(e.stdout, "%s from %s\n  Registrar:   %s\n  Created:     %s\n  Updated:     %s\n  Expires:     %s\n  Status:      %s\n  Name servers: %s\n",
		proto, source, registrar, str(created), str(updated), str(expires), strings.Join(status, ", "), strings.Join(ns, ", "))
}
