package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/periscope-oss/periscope/internal/alerts"
	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/egress"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/keyfile"
	"github.com/periscope-oss/periscope/internal/scanstore"
	"github.com/periscope-oss/periscope/internal/vulnstore"
	"github.com/periscope-oss/periscope/internal/whoisstore"
	"github.com/periscope-oss/periscope/internal/wire"
)

// WebhookPorts are the ports a webhook URL may name (besides any port with
// --allow-private-targets): the web's, and the usual alternates. A
// receiver elsewhere sees its deliveries fail with the dialer's reason in
// the endpoint's status. Public addresses only: the dialer refuses
// private, loopback and link-local space whatever the port.
var WebhookPorts = []int{80, 443, 8080, 8443}

// webhookTimeout bounds one delivery attempt.
const webhookTimeout = 10 * time.Second

// alertsConfig is serve's alert settings.
type alertsConfig struct {
	// Baseline is how long after an asset's first data its changes stay
	// silent (the first scans of a newly added domain are not news).
	Baseline time.Duration
	// SecretsKeyFile holds the key webhook signing secrets are sealed
	// with; "" = the default beside the SQLite database (or, on
	// PostgreSQL, in the user's configuration directory), created on
	// first use.
	SecretsKeyFile string
	// FeedInterval is how often the vulnerability rule re-reads the
	// KEV-listed and critical CVEs and the credential rule reads new
	// dark-web records.
	FeedInterval time.Duration
}

func registerAlertFlags(fs *flag.FlagSet, getenv config.Getenv) (*alertsConfig, error) {
	c := &alertsConfig{Baseline: time.Hour, FeedInterval: time.Minute}
	if v := getenv("PERISCOPE_ALERT_FEED_INTERVAL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("PERISCOPE_ALERT_FEED_INTERVAL: want a positive duration, got %q", v)
		}
		c.FeedInterval = d
	}
	fs.DurationVar(&c.FeedInterval, "alert-feed-interval", c.FeedInterval,
		"how often the new_vulnerability rule re-reads the KEV-listed and critical CVEs, and the compromised_credential rule reads new dark-web records (env PERISCOPE_ALERT_FEED_INTERVAL)")
	if v := getenv("PERISCOPE_ALERT_BASELINE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("PERISCOPE_ALERT_BASELINE: want a positive duration, got %q", v)
		}
		c.Baseline = d
	}
	fs.DurationVar(&c.Baseline, "alert-baseline", c.Baseline,
		"how long after an asset's first data its changes are a silent baseline, not alerts (env PERISCOPE_ALERT_BASELINE)")
	fs.StringVar(&c.SecretsKeyFile, "secrets-key-file", getenv("PERISCOPE_SECRETS_KEY_FILE"),
		"file holding the key webhook secrets and the audit records of dark-web searches are sealed with (created with mode 0600 on first use; default periscope-secrets.key beside the SQLite database, or secrets.key in ~/.local/share/periscope for PostgreSQL; back it up, every instance needs the same one) (env PERISCOPE_SECRETS_KEY_FILE)")
	return c, nil
}

// unlockWebhookSecrets loads (creating on first use) the secrets key and
// unlocks the webhook secrets with it: refused when they were sealed with
// another key; endpoints stored in clear by an older release are sealed. A
// new key file is written only when no secret is sealed yet. The API seals
// the audit records of dark-web searches with the same key.
func unlockWebhookSecrets(ctx context.Context, svc *services, as *alertstore.Store) error {
	path, err := keyFilePath(svc.alerts.SecretsKeyFile, keyfile.Secrets, svc.cfg.Database, svc.getenv, svc.log)
	if err != nil {
		return fmt.Errorf("webhook secrets: %w", err)
	}
	if !keyfile.Exists(path) {
		id, err := as.SealedKeyID(ctx)
		if err != nil {
			return fmt.Errorf("webhook secrets: %w", err)
		}
		if id != "" {
			abs, _ := filepath.Abs(path)
			return fmt.Errorf("webhook secrets: no key file at %s, and this database's webhook secrets are sealed with key %s: give --secrets-key-file the file that holds it (no key file was created)", abs, id)
		}
	}
	k, err := alertstore.LoadOrCreateSecretsKey(path, true, func(p string) {
		abs, _ := filepath.Abs(p)
		svc.log.Warn("created a new webhook secrets key: back it up, webhook endpoints cannot sign without it", "path", abs)
	})
	if err != nil {
		return fmt.Errorf("webhook secrets: %w", err)
	}
	n, err := as.UnlockSecrets(ctx, k)
	if err != nil {
		return fmt.Errorf("webhook secrets (%s): %w", path, err)
	}
	if n > 0 {
		svc.log.Info("sealed webhook secrets stored in clear by an older release", "endpoints", n, "key_id", k.ID())
	}
	// The same key seals the audit records of dark-web searches.
	svc.deps.AuditKey = k
	return nil
}

// setupAlerts adds the alert rules and the webhook dispatcher to serve,
// each as a worker on one instance at a time: the rules turn new ledger
// rows (written by every host write, see wire.Ledger), brand findings and
// expiring certificates and domains into alerts; the dispatcher delivers
// the outbox. A host write that committed ledger rows wakes the rules, and
// an alert that enqueued deliveries wakes the dispatcher.
func setupAlerts(ctx context.Context, svc *services) error {
	if svc.alerts.Baseline < time.Second {
		return fmt.Errorf("--alert-baseline: want at least 1s, got %s", svc.alerts.Baseline)
	}
	as := alertstore.New(svc.store)
	as.EndpointLimit = svc.cfg.Instances.WebhookLimit
	if err := unlockWebhookSecrets(ctx, svc, as); err != nil {
		return err
	}
	disp := &alerts.Dispatcher{
		Alerts:  as,
		Client:  egress.New(egress.Options{AllowPrivate: svc.cfg.Outbound.AllowPrivateTargets, Ports: WebhookPorts}).HTTPClient(webhookTimeout),
		Now:     svc.store.Now,
		Log:     svc.log,
		Timeout: webhookTimeout,
	}
	bs, ws := brandstore.New(svc.store), whoisstore.New(svc.store)
	w := &alerts.Worker{DB: svc.store, Alerts: as, Log: svc.log, Delivered: disp.Wake, Baseline: svc.alerts.Baseline,
		Feeds: []alerts.Feed{
			alerts.BrandFeed(wire.BrandItems(bs)),
			alerts.ExpiryFeed(svc.store.Now, wire.ExpiringCerts(svc.store, bs), wire.DomainExpiries(svc.store, ws)),
		}}
	vs, hs := vulnstore.New(svc.store), hoststore.New(svc.store)
	if svc.alerts.FeedInterval < time.Second {
		return fmt.Errorf("--alert-feed-interval: want at least 1s, got %s", svc.alerts.FeedInterval)
	}
	w.VulnCheck = svc.alerts.FeedInterval
	w.Vulns = &alerts.VulnSource{Signature: vs.AlertableSignature, CPEs: vs.AlertableCPEs, Detail: vs.AlertDetail,
		HostsNamed: hs.HostsNamed, EachHost: hs.EachHost, InRange: wire.HostsInRange(hs)}
	if svc.dw != nil {
		w.Feeds = append(w.Feeds, alerts.CredentialFeed(as, svc.store.AllAssets, scanstore.New(svc.store).VerifiedDomains, wire.DarkwebCredentials(svc.dw), svc.store.Now,
			svc.alerts.Baseline, min(wire.CredentialSettle, svc.alerts.FeedInterval)))
	}
	svc.ledger.OnCommit(w.Wake)
	svc.deps.Alerts = &alerts.Service{Store: as, DB: svc.store, Delivered: disp.Wake}
	svc.workers = append(svc.workers, worker{name: "alert-rules", run: w.Run}, worker{name: "webhook-dispatcher", run: disp.Run})
	return nil
}

// keyFilePath is the key file of kind a command uses: the one its flag
// names, else the default for the database (keyfile.Default), the same for
// every command. An earlier release's file at its old default is used
// when there is none at the new one, and the log says so.
func keyFilePath(flagged, kind, database string, getenv config.Getenv, log *slog.Logger) (string, error) {
	if flagged != "" {
		return flagged, nil
	}
	path, old, err := keyfile.Locate(database, kind, keyfile.Getenv(getenv))
	if err != nil {
		return "", err
	}
	if old {
		def, _ := keyfile.Default(database, kind, keyfile.Getenv(getenv))
		abs, _ := filepath.Abs(path)
		absDef, _ := filepath.Abs(def)
		log.Warn("using the "+kind+" key file at an earlier release's default place; move it to the new default (mv) or name it with its flag", "path", abs, "default", absDef)
	}
	return path, nil
}
