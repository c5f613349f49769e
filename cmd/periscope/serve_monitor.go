package main

import (
	"fmt"

	"github.com/periscope-oss/periscope/internal/activescan"
	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/egress"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/ledger"
	"github.com/periscope-oss/periscope/internal/probe"
	"github.com/periscope-oss/periscope/internal/scanstore"
)

// setupMonitor adds active monitoring to serve: the service behind domain
// verification and on-demand scans, and its worker (Run: a pass every
// minute, scheduled scans every --monitor-interval).
//
// Probes dial through the one SSRF-safe dialer (internal/egress), opened to
// the monitored ports; every probe dials an address literal that
// probe.PublicOnly allowed just before, and egress checks it again at
// connect time.
func setupMonitor(svc *services) error {
	m := svc.monitorCfg
	if !m.Enabled {
		return nil
	}
	if err := m.Validate(); err != nil {
		return err
	}
	ports, _ := m.PortList()
	mon := activescan.New(activescan.Options{
		Interval: m.Interval, GlobalRate: m.Rate, OrgRate: m.OrgRate, Concurrency: m.Concurrency,
		Timeout: m.Timeout, Ports: ports, AllowPrivate: svc.cfg.Outbound.AllowPrivateTargets,
	}, activescan.Deps{
		Store:    scanstore.New(svc.store),
		Names:    hoststore.New(svc.store),
		Sink:     svc.hosts,
		Resolver: probe.NewDNSResolver(m.ResolverList(), m.Timeout),
		Dial:     egress.New(egress.Options{AllowPrivate: svc.cfg.Outbound.AllowPrivateTargets, Ports: ports, Timeout: m.Timeout}).DialContext,
		Log:      svc.log,
	})
	svc.deps.Scans = mon
	// The change ledger: a probe pass covers the DNS records it asks for
	// and the ports it connects to, so what it misses twice in a row is
	// removed (a scan of other ports removes nothing).
	if svc.hosts.Sources == nil {
		svc.hosts.Sources = map[string]ledger.Source{}
	}
	svc.hosts.Sources[activescan.Source] = ledger.Source{Ports: ports, Covers: []ledger.Category{ledger.CategoryPort,
		ledger.CategoryDNSA, ledger.CategoryDNSAAAA, ledger.CategoryDNSCNAME, ledger.CategoryDNSMX, ledger.CategoryDNSNS, ledger.CategoryDNSTXT}}
	svc.workers = append(svc.workers, worker{name: "active-monitor", run: mon.Run})
	svc.onServer = append(svc.onServer, func(srv *api.Server) error {
		if err := mon.RegisterMetrics(srv.Registry()); err != nil {
			return fmt.Errorf("active monitoring: %w", err)
		}
		return nil
	})
	return nil
}
