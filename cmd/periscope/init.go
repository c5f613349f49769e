package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/cli"
	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/keyfile"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
)

const initUsage = `usage: periscope init [--company NAME] [--email EMAIL] [--sync-interval 6h] [--database DSN]

Sets up a real installation, once, on a new database (docs/operations.md,
"The first hour"): creates the database, the first account (Enterprise and
OEM, the operator's own) with an API key printed once, the key files of the
dark web and of webhook secrets (mode 0600), and turns on the scheduled sync
of the public vulnerability feeds (CISA KEV, FIRST EPSS, Exploit-DB, OSV,
NVD) that serve then runs. It prints where each file is and what to run next.
Refused when the database already has an account.
`

// defaultSyncInterval is the vulnerability sync interval init chooses.
const defaultSyncInterval = 6 * time.Hour

func cmdInit(ctx context.Context, e env, args []string) error {
	var cfg config.Config
	fs := cli.NewFlags(e.stdout, "init")
	cli.SetUsage(fs, initUsage)
	cfg.Register(fs, e.getenv)
	company := fs.String("company", "Admin", "name of the first account (the operator's own)")
	email := fs.String("email", "admin@localhost", "e-mail of the account's first user")
	sync := fs.Duration("sync-interval", defaultSyncInterval, "how often serve syncs the public vulnerability feeds; 0 leaves the sync off")
	darkwebKey := fs.String("darkweb-key-file", e.getenv("PERISCOPE_DARKWEB_KEY_FILE"), "where to create the dark-web key file (default beside the SQLite database, or in ~/.local/share/periscope for PostgreSQL) (env PERISCOPE_DARKWEB_KEY_FILE)")
	secretsKey := fs.String("secrets-key-file", e.getenv("PERISCOPE_SECRETS_KEY_FILE"), "where to create the webhook secrets key file (default as --darkweb-key-file) (env PERISCOPE_SECRETS_KEY_FILE)")
	if pos, err := cli.Parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return cli.Usagef("init", "unexpected argument %q", pos[0])
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if *sync < 0 {
		return cli.Usagef("init", "--sync-interval must be >= 0")
	}
	st, err := cli.Open(ctx, cfg.Database, cli.Opening{Log: e.stderr, LogLevel: cfg.LogLevel})
	if err != nil {
		return err
	}
	defer st.Close()
	accts, err := st.Accounts(ctx)
	if err != nil {
		return err
	}
	if len(accts) > 0 {
		return fmt.Errorf("init: %s already has %d account(s), so it is set up; \"periscope account create\" and \"periscope key create\" add more (docs/cli.md)", cli.DescribeDSN(cfg.Database), len(accts))
	}
	log := newLogger(e.stderr, "error") // what init creates, it prints
	// The key files first: a refusal (another key's data in the
	// database) leaves no account behind.
	dwPath, err := keyFilePath(*darkwebKey, keyfile.Darkweb, cfg.Database, e.getenv, log)
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	if _, err := openDarkweb(ctx, st, &darkwebConfig{KeyFile: dwPath, Region: "US"}, true, log); err != nil {
		return fmt.Errorf("init: dark web: %w", err)
	}
	secPath, err := initSecretsKey(ctx, st, *secretsKey, cfg.Database, e.getenv, log)
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	a := periscope.Account{Company: *company, Plan: "admin", Enterprise: true, OEM: true,
		CreditsPerMonth: 100000, OEMCreditsPerMonth: 100000, MaxResultsPerRequest: 100000}
	u := periscope.User{Email: *email}
	if err := st.CreateAccount(ctx, &a, &u); err != nil {
		return fmt.Errorf("init: account: %s", periscope.ErrorMessage(err))
	}
	key, k, err := st.CreateKey(ctx, a.ID, u.ID, "init")
	if err != nil {
		return fmt.Errorf("init: key: %s", periscope.ErrorMessage(err))
	}
	if err := st.SetSetting(ctx, store.SettingSyncInterval, sync.String()); err != nil {
		return fmt.Errorf("init: %w", err)
	}
	printInit(e, cfg.Database, st.Engine(), a, k, key, dwPath, secPath, *sync)
	return nil
}

// initSecretsKey creates (or finds) the webhook secrets key file and
// checks it against the database, as serve will.
func initSecretsKey(ctx context.Context, st *store.Store, flagged, database string, getenv config.Getenv, log *slog.Logger) (string, error) {
	path, err := keyFilePath(flagged, keyfile.Secrets, database, getenv, log)
	if err != nil {
		return "", err
	}
	as := alertstore.New(st)
	k, err := alertstore.LoadOrCreateSecretsKey(path, true, nil)
	if err != nil {
		return "", fmt.Errorf("webhook secrets: %w", err)
	}
	if _, err := as.UnlockSecrets(ctx, k); err != nil {
		return "", fmt.Errorf("webhook secrets (%s): %w", path, err)
	}
	return path, nil
}

func printInit(e env, dsn, engine string, a periscope.Account, k periscope.APIKey, key, dwPath, secPath string, sync time.Duration) {
	abs := func(p string) string {
		if x, err := filepath.Abs(p); err == nil {
			return x
		}
		return p
	}
	db := "--database " + shellQuote(dsn)
	if dsn == "./periscope.db" || dsn == "periscope.db" {
		db = ""
	}
	w := e.stdout
	fmt.Fprintf(w, "Periscope is set up.\n\n")
	if engine == "sqlite" {
		engine = "SQLite"
	} else {
		engine = "PostgreSQL"
	}
	fmt.Fprintf(w, "  database          %s (%s)\n", cli.DescribeDSN(dsn), engine)
	fmt.Fprintf(w, "  dark-web key      %s (mode 0600: back it up, breach data cannot be read without it)\n", abs(dwPath))
	fmt.Fprintf(w, "  webhook key       %s (mode 0600: back it up, every instance needs the same one)\n", abs(secPath))
	fmt.Fprintf(w, "  account           %s (%s): Enterprise and OEM\n", a.Company, a.ID)
	fmt.Fprintf(w, "  API key           %s\n", key)
	fmt.Fprintf(w, "                    (key id %s; shown once, only its hash is stored: keep it now)\n", k.ID)
	if sync > 0 {
		fmt.Fprintf(w, "  vulnerability sync every %s from CISA KEV, FIRST EPSS, Exploit-DB, OSV and NVD, started by serve\n", shortDuration(sync))
	} else {
		fmt.Fprintf(w, "  vulnerability sync off (serve --sync-interval 6h turns it on)\n")
	}
	fmt.Fprintf(w, "\nNext:\n")
	fmt.Fprintf(w, "  %s\n", strings.TrimSpace("periscope serve "+db))
	fmt.Fprintf(w, "  curl -H \"X-API-KEY: %s\" http://127.0.0.1:8080/api/v1/auth/status\n", key)
	fmt.Fprintf(w, "  periscope ingest nmap scan.xml %s      # your scans; \"periscope ingest --help\" lists every kind\n", db)
	fmt.Fprintf(w, "  periscope account create --company NAME --email EMAIL %s   # a customer account\n", db)
	fmt.Fprintf(w, "More in docs/operations.md (\"The first hour\") and docs/cli.md.\n")
}

// shellQuote quotes s for a shell when it needs it.
func shellQuote(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '/' || r == '.' || r == '-' || r == '_' || r == ':' || r == '@' || r == '=') {
			return "'" + s + "'"
		}
	}
	return s
}
