package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/cli"
	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/darkwebingest"
	"github.com/periscope-oss/periscope/internal/darkwebstore"
	"github.com/periscope-oss/periscope/internal/ingestreport"
	"github.com/periscope-oss/periscope/internal/keyfile"
	"github.com/periscope-oss/periscope/internal/scanstore"
	"github.com/periscope-oss/periscope/internal/store"
)

// darkwebConfig is the dark-web configuration shared by serve, ingest and
// rotate-key.
type darkwebConfig struct {
	KeyFile string // master key file (64 hex digits, mode 0600)
	Region  string // phone region assumed without a country code
}

func registerDarkwebFlags(fs *flag.FlagSet, getenv config.Getenv) *darkwebConfig {
	c := &darkwebConfig{}
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	fs.StringVar(&c.KeyFile, "darkweb-key-file", env("PERISCOPE_DARKWEB_KEY_FILE", ""),
		"file holding the dark-web master key (created with mode 0600 on first use; back it up: without it the breach data cannot be read); default periscope-darkweb.key beside the SQLite database, or darkweb.key in ~/.local/share/periscope for PostgreSQL (env PERISCOPE_DARKWEB_KEY_FILE)")
	fs.StringVar(&c.Region, "phone-region", env("PERISCOPE_PHONE_REGION", "US"),
		"region assumed for phone numbers written without a country code (env PERISCOPE_PHONE_REGION)")
	return c
}

// openDarkweb migrates the dark-web schema, loads (or, when create is set,
// creates) the key at c.KeyFile (resolved by darkwebKeyFile) and unlocks
// the store with it. A key file is created only for a database whose
// dark-web data is sealed with no key yet, so a command never writes a key
// it then refuses.
func openDarkweb(ctx context.Context, st *store.Store, c *darkwebConfig, create bool, log *slog.Logger) (*darkwebstore.Store, error) {
	if _, err := st.Migrate(ctx, darkwebstore.Migrations()); err != nil {
		return nil, fmt.Errorf("migrate dark-web schema: %w", err)
	}
	path := c.KeyFile
	dw := darkwebstore.New(st)
	if create && !keyfile.Exists(path) {
		id, err := dw.KeyID(ctx)
		if err != nil {
			return nil, err
		}
		if id != "" {
			abs, _ := filepath.Abs(path)
			return nil, fmt.Errorf("%w: no key file at %s, and this database's dark-web data is sealed with key %s: give --darkweb-key-file the file that holds it (no key file was created)", darkwebstore.ErrWrongKey, abs, id)
		}
	}
	k, err := darkweb.LoadOrCreateKey(path, create, func(p string) {
		abs, _ := filepath.Abs(p)
		log.Warn("created a new dark-web master key: back it up, the breach data cannot be read without it", "path", abs)
	})
	if err != nil {
		return nil, err
	}
	dw.SetRegion(c.Region)
	if err := dw.Unlock(ctx, k); err != nil {
		return nil, err
	}
	// A rotation beside a running server adds a key to the file: records
	// sealed with it are opened after reading the file again.
	dw.SetKeyReload(func() (*darkweb.Keyring, error) { return darkweb.LoadOrCreateKey(path, false, nil) })
	return dw, nil
}

// setupDarkweb unlocks the dark-web store for the API when a key file is
// configured (or, under --demo, at the default path, creating it).
func setupDarkweb(ctx context.Context, svc *services) error {
	c := svc.darkweb
	if c == nil {
		return nil
	}
	// The key file named by the flag is created on first use; the
	// default one (shared with ingest, see keyfile.Default) only under
	// --demo: otherwise `periscope init` or the first dark-web ingest
	// writes it, and serve without it leaves the routes off.
	create := c.KeyFile != "" || svc.cfg.Demo
	path, err := keyFilePath(c.KeyFile, keyfile.Darkweb, svc.cfg.Database, svc.getenv, svc.log)
	if err != nil {
		return fmt.Errorf("dark web: %w", err)
	}
	if !create && !keyfile.Exists(path) {
		abs, _ := filepath.Abs(path)
		svc.log.Info("dark-web routes off: no key file (periscope init or the first dark-web ingest creates it; --darkweb-key-file names another)", "path", abs)
		return nil
	}
	c.KeyFile = path
	dw, err := openDarkweb(ctx, svc.store, c, create, svc.log)
	if err != nil {
		return fmt.Errorf("dark web: %w", err)
	}
	svc.deps.Darkweb = dw
	// Secrets are shown by verified ownership (scanstore's authorisations),
	// whether active monitoring is on or not.
	svc.deps.Claims = scanstore.New(svc.store)
	svc.dw = dw
	svc.workers = append(svc.workers, darkwebHeads(dw, headsInterval, svc.log))
	svc.onServer = append(svc.onServer, func(srv *api.Server) error {
		return srv.Registry().Register(newDarkwebCollector(dw))
	})
	return nil
}

// headsInterval is how often serve looks for records ingested since the
// answer heads were last built (a look that finds none reads one row).
const headsInterval = time.Minute

// darkwebHeads builds the dark-web answer heads at start and again after
// every ingest (docs/design/darkweb.md "Answers"): on one instance, in the
// background. A failed pass (an ingest holding the database, say) is
// logged and tried again at the next.
func darkwebHeads(dw *darkwebstore.Store, interval time.Duration, log *slog.Logger) worker {
	return worker{name: "darkweb-heads", run: func(ctx context.Context) error {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			st, err := dw.BuildHeads(ctx)
			switch {
			case err != nil && ctx.Err() == nil:
				log.Warn("dark web: building answer heads failed; trying again later", "err", err)
			case err == nil && st.Built+st.ListsBuilt > 0:
				log.Info("dark web: answer heads built", "keys", st.Keys, "built", st.Built, "rows", st.Rows,
					"listing_heads", st.Lists, "listing_heads_built", st.ListsBuilt, "listing_rows", st.ListRows, "took", st.Took.Round(time.Millisecond).String())
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
			}
		}
	}}
}

// addDarkwebIngesters lists the dark-web kinds; cmdIngest hands them to
// ingestDarkweb, which reads their own flags.
func addDarkwebIngesters(m map[string]ingester) {
	for _, k := range darkwebingest.Kinds {
		m[k] = nil
	}
}

// mapFlag collects repeated --map col=field.
type mapFlag map[string]string

func (m mapFlag) String() string { return fmt.Sprint(map[string]string(m)) }
func (m mapFlag) Set(v string) error {
	col, field, ok := strings.Cut(v, "=")
	if !ok || strings.TrimSpace(col) == "" {
		return fmt.Errorf("want col=field, got %q", v)
	}
	m[strings.TrimSpace(col)] = strings.TrimSpace(field)
	return nil
}

// ingestDarkweb runs `periscope ingest <dark-web kind> …`.
func ingestDarkweb(ctx context.Context, e env, kind string, args []string) error {
	var cfg config.Config
	fs := cli.NewFlags(e.stdout, "ingest "+kind)
	cli.SetUsage(fs, ingestKindUsage(kind))
	cfg.Register(fs, e.getenv)
	dc := registerDarkwebFlags(fs, e.getenv)
	var o darkweb.Options
	var enc string
	maps := mapFlag{}
	fs.StringVar(&o.Breach, "breach", "", "breach (database) name the records belong to (required for combolist; default for the other kinds)")
	fs.StringVar(&o.BreachDate, "breach-date", "", "breach date, YYYY-MM-DD")
	fs.StringVar(&enc, "encoding", "utf-8", "input encoding: utf-8 (invalid lines rejected), latin1, windows-1252, or auto (UTF-8 where valid, else Windows-1252)")
	fs.Var(maps, "map", "breach-csv: map a column to a field, col=field (repeatable; field skip ignores the column, field ntlm reads NTLM hashes)")
	fs.StringVar(&o.HashType, "hash-type", "", "type of the hashes whose source names none (md5, ntlm, sha1, …; 32 hex digits are md5 unless told)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the ingest to this file (for benchmarks)")
	asJSON := fs.Bool("json", false, "print the summary as one JSON object on stdout (for scripts; docs/ingest.md)")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return fmt.Errorf("ingest %s: give at least one file or folder", kind)
	}
	if o.Encoding, err = darkweb.ParseEncoding(enc); err != nil {
		return fmt.Errorf("ingest %s: %w", kind, err)
	}
	if o.BreachDate != "" {
		if _, err := time.Parse(time.DateOnly, o.BreachDate); err != nil {
			return fmt.Errorf("ingest %s: --breach-date must be YYYY-MM-DD (got %q)", kind, o.BreachDate)
		}
	}
	if err := darkweb.CheckText(o.Breach); err != nil || len(o.Breach) > 200 {
		return fmt.Errorf("ingest %s: --breach must be short text", kind)
	}
	if kind == "combolist" && o.Breach == "" {
		return errors.New("ingest combolist: --breach NAME is required (a combolist names no breach of its own)")
	}
	if err := darkweb.CheckMap(maps); err != nil {
		return err
	}
	if o.HashType != "" {
		if o.HashType = darkweb.CanonicalHashType(o.HashType); o.HashType == "" {
			return fmt.Errorf("ingest %s: unknown --hash-type (one of %s)", kind, strings.Join(darkweb.HashTypes, ", "))
		}
	}
	o.Map = maps
	st, err := cli.Open(ctx, cfg.Database, cli.Opening{Log: e.stderr, LogLevel: cfg.LogLevel, Options: []store.Option{store.PageCacheMiB(ingestCacheMiB)}})
	if err != nil {
		return err
	}
	defer st.Close()
	log := newLogger(e.stderr, cfg.LogLevel)
	if dc.KeyFile, err = keyFilePath(dc.KeyFile, keyfile.Darkweb, cfg.Database, e.getenv, log); err != nil {
		return fmt.Errorf("ingest %s: %w", kind, err)
	}
	dw, err := openDarkweb(ctx, st, dc, true, log)
	if err != nil {
		return fmt.Errorf("ingest %s: %w", kind, err)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return fmt.Errorf("ingest %s: %w", kind, err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("ingest %s: %w", kind, err)
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	load, err := dw.Loader(ctx)
	if err != nil {
		return fmt.Errorf("ingest %s: %w", kind, err)
	}
	defer load.Close()
	// The dark-web readers open their files themselves (folders of
	// stealer logs, archives): the progress line shows the throughput.
	prog := newProgress(e.stderr, 0)
	r := darkwebingest.NewLoading(dw, load, func(s darkwebingest.Summary) {
		prog.update(darkwebReport(kind, 0, s, 0))
	})
	refused := false
	firstErr := eachSource(ctx, e.stderr, pos, func(src string) error {
		err := r.Source(ctx, kind, src, o)
		refused = refused || err != nil && !errors.Is(err, darkweb.ErrIncomplete)
		return err
	})
	// The records are stored; the build indexes them in bulk and finds
	// those already stored (docs/ingest.md "Dark-web breach data").
	if err := r.Build(ctx); err != nil {
		refused = true
		if firstErr == nil {
			firstErr = fmt.Errorf("ingest %s: index build: %w", kind, err)
		}
	}
	prog.done()
	sum := r.Summary()
	rep := darkwebReport(kind, len(pos), sum, time.Since(start))
	rep.Write(e.stdout, *asJSON)
	if firstErr != nil && !refused {
		// Every failed source was cut short, its complete records stored:
		// say so with an exit status of its own (docs/ingest.md "Ingest errors").
		return exitError{code: exitIncomplete, err: fmt.Errorf("ingest %s: %d source(s) incomplete: %w", kind, sum.Incomplete, firstErr)}
	}
	return firstErr
}

// darkwebReport is the shared summary of a dark-web ingest: a record
// already stored counts as unchanged (records are never updated in place);
// for the breaches kind, the breaches stored.
func darkwebReport(kind string, sources int, s darkwebingest.Summary, d time.Duration) ingestreport.Summary {
	r := ingestreport.Summary{Kind: kind, Sources: sources, Read: s.Read, Inserted: s.Added, Unchanged: s.Duplicates,
		Incomplete: s.Incomplete, Duration: d}
	if kind == "breaches" {
		r.Read, r.Inserted = s.Breaches+s.Rejected, s.Breaches
	}
	r.AddRejects(s.Rejected, s.Rejects)
	return r
}

// cmdDarkweb runs `periscope darkweb rotate-key`.
func cmdDarkweb(ctx context.Context, e env, args []string) error {
	const rotateUsage = `usage: periscope darkweb rotate-key [--resume | --reindex] [--darkweb-key-file FILE]

Adds a new dark-web master key to the key file and re-seals every record
with it (see docs/security.md).
`
	sub, args, err := subcommand(e, "darkweb", rotateUsage, args)
	if err != nil {
		return err
	}
	if sub != "rotate-key" {
		return cli.Usagef("darkweb", "unknown subcommand %q (darkweb rotate-key is the one)", sub)
	}
	var cfg config.Config
	fs := cli.NewFlags(e.stdout, "darkweb rotate-key")
	cli.SetUsage(fs, rotateUsage)
	cfg.Register(fs, e.getenv)
	dc := registerDarkwebFlags(fs, e.getenv)
	var resume, reindex bool
	fs.BoolVar(&resume, "resume", false, "re-seal what an interrupted or overtaken rotation left, without adding a key")
	fs.BoolVar(&reindex, "reindex", false, "offline: re-key the blind indexes and record ids too, under a new single-key file (stop serve and ingests first)")
	if _, err := cli.Parse(fs, args); err != nil {
		return err
	}
	if resume && reindex {
		return errors.New("darkweb rotate-key: --resume and --reindex exclude each other")
	}
	// A bulk writer, as an ingest is: every record re-sealed, every
	// index rebuilt (serve keeps the dark-web file's cache small).
	st, err := cli.Open(ctx, cfg.Database, cli.Opening{MustExist: true, Log: e.stderr, LogLevel: cfg.LogLevel, Options: []store.Option{store.PageCacheMiB(ingestCacheMiB)}})
	if err != nil {
		return err
	}
	defer st.Close()
	path, err := keyFilePath(dc.KeyFile, keyfile.Darkweb, cfg.Database, e.getenv, newLogger(e.stderr, cfg.LogLevel))
	if err != nil {
		return fmt.Errorf("darkweb rotate-key: %w", err)
	}
	k, err := darkweb.LoadOrCreateKey(path, false, nil)
	if err != nil {
		return err
	}
	if _, err := st.Migrate(ctx, darkwebstore.Migrations()); err != nil {
		return err
	}
	dw := darkwebstore.New(st)
	dw.SetRegion(dc.Region)
	if reindex {
		return reindexDarkweb(ctx, e, dw, path, k)
	}
	// The key file is checked against the data before a key is added, and
	// the new key is in the file (synced) before any record is sealed
	// with it.
	if err := dw.Unlock(ctx, k); err != nil {
		return fmt.Errorf("rotate-key: %w", err)
	}
	if !resume {
		if k, err = darkweb.AddKeyToFile(path); err != nil {
			return fmt.Errorf("rotate-key: %w", err)
		}
		fmt.Fprintf(e.stdout, "added key %s to %s: back this file up now (it holds %d keys)\n", k.ID(), path, len(k.KeyIDs()))
		if err := dw.Unlock(ctx, k); err != nil {
			return fmt.Errorf("rotate-key: %w", err)
		}
	}
	p := newProgress(e.stderr, 0)
	done, left, err := dw.Reseal(ctx, func(done int) { p.update(ingestreport.Summary{Read: done, Updated: done}) })
	p.done()
	if err != nil {
		return fmt.Errorf("rotate-key: %w (run `periscope darkweb rotate-key --resume` to finish)", err)
	}
	if left > 0 {
		return fmt.Errorf("rotate-key: re-sealed %d records, but %d are still sealed with older keys (an ingest started before the rotation?): run `periscope darkweb rotate-key --resume` once it ends", done, left)
	}
	fmt.Fprintf(e.stdout, "re-sealed %d records with key %s; the blind indexes keep key %s (rotate-key --reindex re-keys them, server stopped)\n", done, k.ID(), k.IndexID())
	return nil
}

// reindexDarkweb re-keys everything offline: records are first re-sealed
// with the key file's sealing key, then moved (new ids, blobs and blind
// indexes) under a new single-key file.
func reindexDarkweb(ctx context.Context, e env, dw *darkwebstore.Store, path string, old *darkweb.Keyring) error {
	newPath := path + ".new"
	_, statErr := os.Stat(newPath)
	resuming := statErr == nil // re-sealing finished before FILE.new was written
	if len(old.KeyIDs()) > 1 && !resuming {
		if err := dw.Unlock(ctx, old); err != nil {
			return fmt.Errorf("rotate-key --reindex: %w", err)
		}
		if _, left, err := dw.Reseal(ctx, nil); err != nil || left > 0 {
			return fmt.Errorf("rotate-key --reindex: records sealed with several keys could not all be re-sealed first (%d left): %v", left, err)
		}
	}
	// The new key is written before anything is re-keyed, so an
	// interrupted rotation resumes with the same two keys.
	next, err := darkweb.LoadOrCreateKey(newPath, true, func(p string) {
		fmt.Fprintf(e.stdout, "new key written to %s\n", p)
	})
	if err != nil {
		return err
	}
	p := newProgress(e.stderr, 0)
	err = dw.Rotate(ctx, old, next, func(done int) { p.update(ingestreport.Summary{Read: done, Updated: done}) })
	p.done()
	if err != nil {
		return fmt.Errorf("rotate-key --reindex: %w (run it again to resume)", err)
	}
	retired := fmt.Sprintf("%s.retired-%s", path, old.IndexID())
	if err := os.Rename(path, retired); err != nil {
		return err
	}
	if err := os.Rename(newPath, path); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "rotated the dark-web key %s → %s; the old key file is %s: destroy it once your backups hold the new key\n", old.IndexID(), next.ID(), retired)
	return nil
}

// setRevealSecrets records `account update --reveal-secrets`.
func setRevealSecrets(ctx context.Context, st *store.Store, accountID string, on bool) error {
	if _, err := st.Migrate(ctx, darkwebstore.Migrations()); err != nil {
		return err
	}
	return darkwebstore.New(st).SetReveal(ctx, accountID, on)
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
