package main

import (
	"fmt"
	"net"

	"github.com/periscope-oss/periscope/internal/activescan"
	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/probe"
	"github.com/periscope-oss/periscope/internal/scanstore"
)

// setupMonitor adds active monitoring to serve: the service behind domain
// verification and on-demand scans, and its worker (Run: a pass every
// minute, scheduled scans every --monitor-interval).
//
// Until the SSRF-safe dialer (internal/egress) is wired here, probes dial
// with a plain net.Dialer: every probe dials an address literal that
// probe.PublicOnly allowed just before (names are resolved by the monitor
// itself and redirects are never followed), so no name can rebind to a
// private address between the check and the connect.
func setupMonitor(svc *services) error {
	m := svc.monitor
	if !m.Enabled {
		return nil
	}
	if err := m.Validate(); err != nil {
		return err
	}
	ports, _ := m.PortList()
	mon := activescan.New(activescan.Options{
		Interval: m.Interval, GlobalRate: m.Rate, OrgRate: m.OrgRate, Concurrency: m.Concurrency,
		Timeout: m.Timeout, Ports: ports,
	}, activescan.Deps{
		Store:    scanstore.New(svc.store),
		Names:    svc.store,
		Sink:     svc.hosts,
		Resolver: probe.NewDNSResolver(m.ResolverList(), m.Timeout),
		Dial:     (&net.Dialer{}).DialContext,
		Log:      svc.log,
	})
	svc.deps.Scans = mon
	svc.workers = append(svc.workers, worker{name: "active-monitor", run: mon.Run})
	svc.onServer = append(svc.onServer, func(srv *api.Server) error {
		if err := mon.RegisterMetrics(srv.Registry()); err != nil {
			return fmt.Errorf("active monitoring: %w", err)
		}
		return nil
	})
	return nil
}
