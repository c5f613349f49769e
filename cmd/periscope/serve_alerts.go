package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/alerts"
	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/darkwebstore"
	"github.com/periscope-oss/periscope/internal/egress"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/vulnstore"
	"github.com/periscope-oss/periscope/internal/whoisstore"
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
		"file holding the key webhook secrets are sealed with (created with mode 0600 on first use; default beside the SQLite database, or periscope/secrets.key in the user's configuration directory on PostgreSQL; back it up, every instance needs the same one) (env PERISCOPE_SECRETS_KEY_FILE)")
	return c, nil
}

// secretsKeyPath is the webhook secrets key file serve uses.
func secretsKeyPath(c *alertsConfig, database string) (string, error) {
	if c.SecretsKeyFile != "" {
		return c.SecretsKeyFile, nil
	}
	if !strings.Contains(database, "://") {
		return filepath.Join(filepath.Dir(database), "periscope-secrets.key"), nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no --secrets-key-file and no configuration directory: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "periscope"), 0o700); err != nil {
		return "", err
	}
	return filepath.Join(dir, "periscope", "secrets.key"), nil
}

// unlockWebhookSecrets loads (creating on first use) the secrets key and
// unlocks the webhook secrets with it: refused when they were sealed with
// another key; endpoints stored in clear by an older release are sealed.
func unlockWebhookSecrets(ctx context.Context, svc *services, as *alertstore.Store) error {
	path, err := secretsKeyPath(svc.alerts, svc.cfg.Database)
	if err != nil {
		return fmt.Errorf("webhook secrets: %w", err)
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
			alerts.BrandFeed(brandItems(bs)),
			alerts.ExpiryFeed(svc.store.Now, expiringCerts(svc, bs, svc.store.Now), domainExpiries(svc, ws)),
		}}
	vs, hs := vulnstore.New(svc.store), hoststore.New(svc.store)
	if svc.alerts.FeedInterval < time.Second {
		return fmt.Errorf("--alert-feed-interval: want at least 1s, got %s", svc.alerts.FeedInterval)
	}
	w.VulnCheck = svc.alerts.FeedInterval
	w.Vulns = &alerts.VulnSource{Signature: vs.AlertableSignature, CPEs: vs.AlertableCPEs, Detail: vs.AlertDetail,
		HostsNamed: hs.HostsNamed, EachHost: hs.EachHost, InRange: hostsInRange(hs)}
	if svc.dw != nil {
		w.Feeds = append(w.Feeds, alerts.CredentialFeed(as, svc.store.AllAssets, darkwebCredentials(svc.dw), svc.store.Now,
			svc.alerts.Baseline, min(credentialSettle, svc.alerts.FeedInterval)))
	}
	svc.ledger.OnCommit(w.Wake)
	svc.deps.Alerts = &alerts.Service{Store: as, DB: svc.store, Delivered: disp.Wake}
	svc.workers = append(svc.workers, worker{name: "alert-rules", run: w.Run}, worker{name: "webhook-dispatcher", run: disp.Run})
	return nil
}

// brandItems reads new brand findings for the brand feed.
func brandItems(bs *brandstore.Store) func(ctx context.Context, after int64, limit int) ([]alerts.BrandItem, error) {
	return func(ctx context.Context, after int64, limit int) ([]alerts.BrandItem, error) {
		fs, err := bs.FindingsAfter(ctx, after, limit)
		if err != nil {
			return nil, err
		}
		out := make([]alerts.BrandItem, len(fs))
		for i, f := range fs {
			out[i] = alerts.BrandItem{ID: f.ID, OrganizationID: f.OrganizationID, AccountID: f.AccountID, Kind: f.Kind,
				Domain: f.Domain, BaseDomain: f.BaseDomain, Reason: f.Reason, Score: f.Score, DateAdded: f.DateAdded}
		}
		return out, nil
	}
}

// expiringCerts lists the organizations' certificates expiring within 31
// days (or expired within the last day) for the expiry feed. A
// certificate is linked to an organization under the name it was found
// by (org_certificates.domain, e.g. www.example.com); its alert names the
// organization's domain asset that covers that name, with the certificate
// name as evidence.
func expiringCerts(svc *services, bs *brandstore.Store, now func() time.Time) func(ctx context.Context) ([]alerts.CertItem, error) {
	return func(ctx context.Context) ([]alerts.CertItem, error) {
		t := now()
		cs, err := bs.ExpiringCertificates(ctx, t.Add(-24*time.Hour).Unix(), t.Add(31*24*time.Hour).Unix())
		if err != nil || len(cs) == 0 {
			return nil, err
		}
		assets, err := svc.store.AllAssets(ctx, periscope.AssetDomain)
		if err != nil {
			return nil, err
		}
		out := make([]alerts.CertItem, len(cs))
		for i, c := range cs {
			a, ok := alerts.CoveringAsset(assets, c.OrganizationID, c.Domain)
			if !ok { // the asset was removed since: name the certificate's own domain
				a = periscope.Asset{OrganizationID: c.OrganizationID, AccountID: c.AccountID, Kind: periscope.AssetDomain, Value: c.Domain}
			}
			out[i] = alerts.CertItem{Asset: a, Host: c.Domain, Domain: a.Value, SHA256: c.SHA256, Subject: c.SubjectCN,
				NotAfter: time.Unix(c.NotAfter, 0).UTC()}
		}
		return out, nil
	}
}

// domainExpiries lists the organizations' domains with the registration
// expiry stored by WHOIS or RDAP lookups, for the expiry feed.
func domainExpiries(svc *services, ws *whoisstore.Store) func(ctx context.Context) ([]alerts.DomainItem, error) {
	return func(ctx context.Context) ([]alerts.DomainItem, error) {
		assets, err := svc.store.AllAssets(ctx, periscope.AssetDomain)
		if err != nil {
			return nil, err
		}
		var out []alerts.DomainItem
		for _, a := range assets {
			r, err := ws.Get(ctx, a.Value)
			if err != nil {
				if errors.Is(err, whoisstore.ErrNotFound) {
					continue // never looked up: nothing known of its expiry
				}
				return nil, err
			}
			if r.ExpiresAt.IsZero() {
				continue
			}
			out = append(out, alerts.DomainItem{Asset: a, Domain: a.Value, Registrar: r.Registrar, Expiry: r.ExpiresAt})
		}
		return out, nil
	}
}

// credentialSettle is how old an ingested dark-web record must be before
// the credential rule reads it (at most; less when --alert-feed-interval
// is shorter): a loader batch still committing is not skipped.
const credentialSettle = 30 * time.Second

// darkwebCredentials reads credential records for the credential rule
// through darkwebstore's enterprise listing (Credentials: records with a
// password or hash under an email domain and its subdomains, by ingest
// date). Only the email and the breach metadata leave this function.
func darkwebCredentials(dw *darkwebstore.Store) alerts.CredentialList {
	return func(ctx context.Context, domains []string, from, to int64, limit, offset int) ([]alerts.CredentialItem, error) {
		rs, _, err := dw.Credentials(ctx, darkwebstore.ListQuery{Domains: domains, From: from, To: to, Limit: limit, Offset: offset})
		if err != nil {
			return nil, err
		}
		out := make([]alerts.CredentialItem, len(rs))
		for i, r := range rs {
			out[i] = alerts.CredentialItem{ID: r.ID, Email: r.Record.Email, Breach: r.Record.Breach, BreachDate: r.Record.BreachDate,
				Source: r.Record.Source, DateAdded: r.DateAdded}
		}
		return out, nil
	}
}

// hostsInRange walks the hosts whose address is in a block, a page at a
// time, for the vulnerability rule's ranges.
func hostsInRange(hs *hoststore.Store) func(ctx context.Context, p netip.Prefix, fn func(host.Host) error) error {
	return func(ctx context.Context, p netip.Prefix, fn func(host.Host) error) error {
		const page = 1000
		for off := 0; ; off += page {
			res, err := hs.SearchHosts(ctx, hoststore.HostQuery{IPRange: p, Limit: page, Offset: off})
			if err != nil {
				return err
			}
			for _, h := range res.Hosts {
				if err := fn(h); err != nil {
					return err
				}
			}
			if len(res.Hosts) < page {
				return nil
			}
		}
	}
}
