package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/periscope-oss/periscope/internal/accesslog"
	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/brandwatch"
	"github.com/periscope-oss/periscope/internal/cli"
	"github.com/periscope-oss/periscope/internal/config"
	"github.com/periscope-oss/periscope/internal/darkwebstore"
	"github.com/periscope-oss/periscope/internal/hostingest"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/lease"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/whoislookup"
	"github.com/periscope-oss/periscope/internal/wire"
)

// worker is a background job owned by serve: it runs until ctx is done.
// Unless everyInstance is set, it runs on one instance at a time (see
// runWorker).
type worker struct {
	name string
	run  func(ctx context.Context) error
	// everyInstance marks a worker that keeps this process's own state (the
	// brand matcher), not shared work.
	everyInstance bool
}

// services holds what serve builds besides the API, for capabilities to add
// their collaborators and workers.
type services struct {
	cfg    *config.Config
	getenv config.Getenv // the environment, for default file locations
	// syncGiven: --sync-interval or its variable was given, so the
	// interval `periscope init` stored is not used.
	syncGiven  bool
	store      *store.Store
	log        *slog.Logger
	deps       *api.Deps
	workers    []worker
	hosts      *hostingest.Ingester // the host ingest path, with its enricher
	hostIndex  *hoststore.Store     // the host store the API reads, with the posting cache
	closers    []func() error       // run when serve returns
	brand      *brandConfig
	brandWatch *brandwatch.Watcher // the running brand watcher (setupBrand)
	leases     *lease.Manager      // runs each shared worker on one instance
	whois      *whoislookup.Service
	monitorCfg *config.Monitor
	// onServer run once the API server exists (to register metrics on
	// its registry).
	onServer []func(*api.Server) error
	darkweb  *darkwebConfig      // dark-web flags
	dw       *darkwebstore.Store // unlocked dark-web store, nil when off
	// ledger records host changes; the alert rules worker wakes on it.
	ledger *wire.Ledger
	alerts *alertsConfig // alert flags
	tor    *torConfig    // Tor exit list flags
}

func cmdServe(ctx context.Context, e env, args []string) error {
	svc, err := parseServeFlags(e, args)
	if err != nil {
		return err
	}
	cfg := svc.cfg
	defer cli.TuneGC(e.getenv, cli.ServeGCPercent)()
	// The service log and the access log write through one writer, so
	// their lines never interleave.
	logw := accesslog.New(e.stderr)
	log := newLogger(logw, cfg.LogLevel)
	st, err := cli.Open(ctx, cfg.Database, cli.Opening{Log: e.stderr, LogLevel: cfg.LogLevel,
		Options: []store.Option{store.Replicas(cfg.Instances.Replicas, cfg.Instances.ReplicaMaxLag)}})
	if err != nil {
		return err
	}
	defer st.Close()
	fresh, err := applySettings(ctx, st, cfg, svc.syncGiven)
	if err != nil {
		return err
	}

	// One host store answers every host query of serve, so they share one
	// posting cache of the budget given.
	hosts := hoststore.New(st)
	hosts.SetPostingCacheMiB(cfg.PostingCacheMiB)
	deps := wire.APIDeps(st, hosts, log)
	if log.Enabled(ctx, slog.LevelInfo) {
		deps.AccessLog = logw // request lines are INFO: --log-level warn turns them off
	}
	svc.store, svc.log, svc.deps, svc.ledger, svc.hostIndex = st, log, &deps, wire.NewLedger(st), hosts
	defer func() {
		for _, c := range svc.closers {
			c()
		}
	}()
	if err := setupServices(ctx, e, svc); err != nil {
		return err
	}
	srv, err := newAPIServer(svc)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	// net/http's own answers to requests it cannot parse are JSON too.
	ln = api.JSONErrorListener(ln)
	// Said before the address, so whoever waits for it has read this too.
	if cfg.Outbound.AllowPrivateTargets {
		fmt.Fprintln(e.stdout, "private targets allowed (--allow-private-targets): WHOIS, RDAP, webhooks, probes and feed downloads may reach loopback, private and metadata addresses, and organizations may claim private IP ranges")
	}
	fmt.Fprintf(e.stdout, "periscope %s listening on http://%s (database: %s, %s)\n", version, ln.Addr(), cli.RedactDSN(cfg.Database), st.Engine())
	fmt.Fprintf(e.stdout, "web console on http://%s/ (sign in with an API key)\n", ln.Addr())
	printSyncSchedule(e.stdout, cfg, svc.syncGiven)
	if fresh && !cfg.Demo {
		printNextSteps(e.stdout, cfg.Database)
	}
	if err := serveUntilDone(ctx, svc, srv, ln); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, "periscope stopped")
	return nil
}

// parseServeFlags reads serve's flags and environment into the services'
// configuration, validated.
func parseServeFlags(e env, args []string) (*services, error) {
	svc := &services{cfg: &config.Config{}, getenv: e.getenv}
	cfg := svc.cfg
	fs := cli.NewFlags(e.stdout, "serve")
	cli.SetUsage(fs, serveUsage)
	cfg.Register(fs, e.getenv)
	if err := cfg.RegisterServe(fs, e.getenv); err != nil {
		return nil, err
	}
	if err := cfg.RegisterOutbound(fs, e.getenv); err != nil {
		return nil, err
	}
	var err error
	if svc.brand, err = registerBrandFlags(fs, e.getenv); err != nil {
		return nil, err
	}
	if svc.monitorCfg, err = config.RegisterMonitor(fs, e.getenv); err != nil {
		return nil, err
	}
	svc.darkweb = registerDarkwebFlags(fs, e.getenv)
	if svc.tor, err = registerTorFlags(fs, e.getenv); err != nil {
		return nil, err
	}
	if svc.alerts, err = registerAlertFlags(fs, e.getenv); err != nil {
		return nil, err
	}
	if pos, err := cli.Parse(fs, args); err != nil {
		return nil, err
	} else if len(pos) > 0 {
		return nil, cli.Usagef("serve", "unexpected argument %q", pos[0])
	}
	svc.syncGiven = cli.Given(fs, "sync-interval") || e.getenv("PERISCOPE_SYNC_INTERVAL") != ""
	if cfg.Demo {
		demoAlertSettings(fs, e.getenv, svc.alerts)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.ValidateOutbound(); err != nil {
		return nil, err
	}
	return svc, nil
}

// setupServices sets up what serve runs beside the API: instances and
// replicas, every capability and its workers, and the demo data.
func setupServices(ctx context.Context, e env, svc *services) error {
	if err := setupInstances(ctx, svc); err != nil {
		return err
	}
	setupReplicas(svc)
	if err := setupCapabilities(ctx, svc); err != nil {
		return err
	}
	if svc.dw != nil {
		// Organization profiles count the dark-web records of their domains.
		svc.deps.OrgProfiles = wire.OrgProfiles(svc.store, svc.hostIndex, svc.dw)
	}
	if svc.cfg.AuditRetention > 0 {
		svc.workers = append(svc.workers, auditPruner(svc.store, svc.cfg.AuditRetention, auditPruneInterval, svc.log))
	}
	if svc.cfg.Demo {
		if err := loadDemo(ctx, svc, e.stdout, svc.cfg.Addr); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	return nil
}

// newAPIServer builds the API server on the services' dependencies.
func newAPIServer(svc *services) (*api.Server, error) {
	cfg := svc.cfg
	acfg := api.DefaultConfig()
	acfg.RateLimit, acfg.AuthFailLimit, acfg.Version = cfg.RateLimit, cfg.AuthFailLimit, version
	acfg.TrustedProxies = cfg.TrustedProxies
	acfg.AssetChangeLimit = cfg.Instances.AssetChangeLimit
	// With --allow-private-targets an organization may claim internal
	// ranges; they are probed once the operator authorises them.
	acfg.RangeLimits.AllowPrivate = cfg.Outbound.AllowPrivateTargets
	acfg.AlertBaseline = svc.alerts.Baseline
	if !cfg.Outbound.AllowPrivateTargets {
		acfg.WebhookPorts = WebhookPorts
	}
	srv := api.NewServer(acfg, *svc.deps)
	for _, f := range svc.onServer {
		if err := f(srv); err != nil {
			return nil, err
		}
	}
	return srv, nil
}

// serveUntilDone runs the workers and serves srv on ln until ctx ends,
// then drains the server, shuts it down within the shutdown timeout and
// stops the workers.
func serveUntilDone(ctx context.Context, svc *services, srv *api.Server, ln net.Listener) error {
	hs := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      120 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(svc.log.Handler(), slog.LevelWarn),
	}
	wctx, stopWorkers := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, w := range svc.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := svc.runWorker(wctx, w); err != nil && !errors.Is(err, context.Canceled) {
				svc.log.Error("worker stopped", "worker", w.name, "err", err)
			}
		}()
	}

	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()
	select {
	case err := <-serveErr:
		stopWorkers()
		wg.Wait()
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	svc.log.Info("shutting down", "timeout", svc.cfg.ShutdownTimeout.String())
	srv.Drain()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), svc.cfg.ShutdownTimeout)
	defer cancel()
	err := hs.Shutdown(sctx)
	stopWorkers()
	wg.Wait()
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// setupCapabilities lets each capability add its collaborators to the API and
// its workers to serve. Each capability adds one line here.
func setupCapabilities(ctx context.Context, svc *services) error {
	// <setup:vuln>
	if err := setupVulnSync(ctx, svc); err != nil {
		return err
	}
	// <setup:hosts>
	if err := setupHosts(ctx, svc); err != nil {
		return err
	}
	// <setup:brand>
	if err := setupBrand(svc); err != nil {
		return err
	}
	// <setup:whois>
	if err := setupWhois(ctx, svc); err != nil {
		return err
	}
	// <setup:monitor>
	if err := setupMonitor(svc); err != nil {
		return err
	}
	// <setup:darkweb>
	if err := setupDarkweb(ctx, svc); err != nil {
		return err
	}
	// <setup:tor>
	if err := setupTor(svc); err != nil {
		return err
	}
	// <setup:console>
	setupConsole(svc)
	// <setup:alerts>
	return setupAlerts(ctx, svc)
}
