package activescan

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/probe"
	"github.com/periscope-oss/periscope/internal/scanstore"
)

// plan is what one scan covers.
type plan struct {
	names []string
	addrs []netip.Addr // of the authorised ranges
}

// maxRangeAddrs bounds the addresses one scan takes from authorised
// ranges: a scan of more would outlast the interval at the default rate.
const maxRangeAddrs = 1 << 16

// planScan reads what sc covers, from the organization's assets as they
// are now: an asset unverified since the scan was queued is dropped.
func (s *Service) planScan(ctx context.Context, sc scanstore.Scan) (plan, error) {
	assets, err := s.d.Store.Assets(ctx, sc.OrganizationID)
	if err != nil {
		return plan{}, err
	}
	var p plan
	seen := map[string]bool{}
	addName := func(n string) {
		if !seen[n] {
			seen[n] = true
			p.names = append(p.names, n)
		}
	}
	addDomain := func(d string) error {
		addName(d)
		for _, l := range CommonLabels {
			addName(l + "." + d)
		}
		if s.d.Names == nil {
			return nil
		}
		names, _, err := s.d.Names.Subdomains(ctx, d, false, s.opt.MaxNames, s.opt.MaxNames)
		if err != nil {
			return fmt.Errorf("list names under %s: %w", d, err)
		}
		for _, n := range names {
			addName(n)
		}
		return nil
	}
	addRange := func(pref netip.Prefix) {
		for a := pref.Masked().Addr(); pref.Contains(a) && len(p.addrs) < maxRangeAddrs; a = a.Next() {
			p.addrs = append(p.addrs, a)
		}
	}
	t := Target{Type: sc.TargetType, Value: sc.Target}
	for _, a := range assets {
		if !a.Authorized || sc.Origin == scanstore.OriginScheduled && !a.Continuous {
			continue
		}
		switch sc.TargetType {
		case scanstore.TargetOrganization:
			if a.Kind == periscope.AssetDomain {
				if err := addDomain(a.Value); err != nil {
					return p, err
				}
			} else if pref, err := netip.ParsePrefix(a.Value); err == nil {
				addRange(pref)
			}
		case scanstore.TargetDomain:
			if a.Kind == periscope.AssetDomain && a.Value == sc.Target {
				if err := addDomain(a.Value); err != nil {
					return p, err
				}
			}
		case scanstore.TargetIPRange:
			if pref, err := netip.ParsePrefix(sc.Target); err == nil && a.Kind == periscope.AssetIPRange && a.Value == sc.Target {
				addRange(pref)
			}
		case scanstore.TargetHost:
			if addr, err := netip.ParseAddr(sc.Target); err == nil {
				t.addr = addr
			} else {
				t.name = sc.Target
			}
			if covers(a, t) {
				if t.addr.IsValid() {
					addRange(netip.PrefixFrom(t.addr, t.addr.BitLen()))
				} else {
					addName(t.name)
				}
				return p, nil
			}
		}
	}
	return p, nil
}

// target is one probed endpoint: a name with its first allowed address,
// or an address of a range.
type target struct {
	name string // "" for a bare address
	addr netip.Addr
	obs  *host.Host
}

// RunScan runs one scan to its end: it takes the organization's lock (and
// returns false without running when another scan of it runs), probes,
// stores the observations and records the progress and the result. Only
// ctx's end or a storage failure stop it early.
func (s *Service) RunScan(ctx context.Context, sc scanstore.Scan) (bool, error) {
	s.mu.Lock()
	if s.running[sc.OrganizationID] {
		s.mu.Unlock()
		return false, nil
	}
	s.running[sc.OrganizationID] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.running, sc.OrganizationID)
		s.mu.Unlock()
	}()
	return s.runScan(ctx, sc, func(context.Context) error { return nil })
}

// runScan runs sc (its organization marked running here by the caller);
// yield is called between slices of a large range's port scan, to give
// the caller's scan slot to the scans waiting for one.
func (s *Service) runScan(ctx context.Context, sc scanstore.Scan, yield func(context.Context) error) (bool, error) {
	ok, err := s.d.Store.Start(ctx, sc, s.opt.Lease)
	if err != nil || !ok {
		return false, err
	}
	start := time.Now()
	s.metrics.running.Inc()
	defer s.metrics.running.Dec()
	c, err := s.scan(ctx, sc, yield)
	result := "completed"
	errText := ""
	if err != nil {
		result, errText = "failed", err.Error()
		s.d.Log.Error("monitor scan failed", "scan", sc.ID, "organization", sc.OrganizationID, "err", err)
	}
	s.metrics.scans.WithLabelValues(originLabel(sc.Origin), result).Inc()
	s.metrics.duration.WithLabelValues(originLabel(sc.Origin)).Observe(time.Since(start).Seconds())
	if ctx.Err() != nil {
		// Shutting down: leave the scan started; its lock expires and a
		// runner takes it over from the start.
		return true, ctx.Err()
	}
	return true, s.d.Store.Finish(context.WithoutCancel(ctx), sc, c, errText)
}

func originLabel(o string) string {
	switch o {
	case scanstore.OriginScheduled, scanstore.OriginOnDemand, scanstore.OriginOEM:
		return o
	}
	return "other"
}

// sliceAddrs is how many addresses a scan port-scans between two yields
// of its slot (and two renewals of its lease): a /16 is 256 slices.
const sliceAddrs = 256

// scan probes what sc covers, phase by phase, recording each phase.
func (s *Service) scan(ctx context.Context, sc scanstore.Scan, yield func(context.Context) error) (scanstore.Counts, error) {
	var c scanstore.Counts
	p, err := s.planScan(ctx, sc)
	if err != nil {
		return c, err
	}
	pr := s.prober(s.pace(sc.OrganizationID))
	now := s.d.Now().Unix()
	progress := func(status string) error {
		return s.d.Store.Progress(ctx, sc, status, c, s.opt.Lease)
	}

	// DNS: every name, its records; its first allowed address is probed.
	var mu sync.Mutex
	var targets []*target
	s.each(ctx, sc.OrganizationID, len(p.names), func(i int) {
		name := p.names[i]
		rec, err := pr.Resolve(ctx, name)
		s.metrics.dns.WithLabelValues(resultLabel(err == nil && rec.Failed == 0)).Inc()
		if err != nil || !rec.Exists() {
			return
		}
		h := &host.Host{Host: name, DNS: rec.DNS, FirstSeen: now, LastSeen: now}
		t := &target{name: name, obs: h}
		skipped := false
		for _, a := range rec.Addresses {
			if !s.d.Policy.Allowed(a) {
				skipped = true
				continue
			}
			if !t.addr.IsValid() {
				t.addr = a
			}
		}
		mu.Lock()
		defer mu.Unlock()
		c.Names++
		if skipped && !t.addr.IsValid() {
			c.SkippedPrivate++
			s.metrics.skipped.Inc()
		}
		targets = append(targets, t)
	})
	for _, a := range p.addrs {
		if !s.d.Policy.Allowed(a) {
			c.SkippedPrivate++
			s.metrics.skipped.Inc()
			continue
		}
		targets = append(targets, &target{addr: a})
	}
	if err := ctx.Err(); err != nil {
		return c, err
	}
	if err := progress(scanstore.StatusDNSCompleted); err != nil {
		return c, err
	}

	// Ports: each address once, however many names share it.
	if err := progress(scanstore.StatusPortsStarted); err != nil {
		return c, err
	}
	// A set, not a scan of the list: a /16 is 65,536 targets.
	var addrs []netip.Addr
	seenAddr := map[netip.Addr]bool{}
	for _, t := range targets {
		if t.addr.IsValid() && !seenAddr[t.addr] {
			seenAddr[t.addr] = true
			addrs = append(addrs, t.addr)
		}
	}
	open := map[netip.Addr][]int{}
	type job struct {
		addr netip.Addr
		port int
	}
	// In slices: between two, the scan gives its slot to the scans
	// waiting (another organization's host scan does not wait for a /16)
	// and renews its lease.
	for lo := 0; lo < len(addrs); lo += sliceAddrs {
		if lo > 0 {
			if err := s.d.Store.Progress(ctx, sc, scanstore.StatusPortsStarted, c, s.opt.Lease); err != nil {
				return c, err
			}
			if err := yield(ctx); err != nil {
				return c, err
			}
		}
		var jobs []job
		for _, a := range addrs[lo:min(lo+sliceAddrs, len(addrs))] {
			for _, port := range s.opt.Ports {
				jobs = append(jobs, job{a, port})
			}
		}
		s.each(ctx, sc.OrganizationID, len(jobs), func(i int) {
			j := jobs[i]
			ok, err := pr.Open(ctx, j.addr, j.port)
			s.metrics.connections.WithLabelValues("tcp", openLabel(ok, err)).Inc()
			if ok {
				mu.Lock()
				open[j.addr] = append(open[j.addr], j.port)
				mu.Unlock()
			}
		})
	}
	c.Addresses = len(addrs)
	for _, ports := range open {
		c.OpenPorts += len(ports)
	}
	if err := ctx.Err(); err != nil {
		return c, err
	}
	if err := progress(scanstore.StatusPortsCompleted); err != nil {
		return c, err
	}

	// Bare addresses with nothing open are not stored: an address of a
	// range that answers nothing is not a host.
	kept := targets[:0]
	for _, t := range targets {
		if t.obs == nil {
			if len(open[t.addr]) == 0 {
				continue
			}
			t.obs = &host.Host{Host: t.addr.String(), FirstSeen: now, LastSeen: now}
		}
		if t.addr.IsValid() {
			t.obs.IPAddress = t.addr.String()
			for _, port := range open[t.addr] {
				t.obs.NetworkServices = append(t.obs.NetworkServices, host.Service{Port: port, Protocol: "tcp",
					Service: serviceName(port, s.opt), FirstSeen: now, LastSeen: now})
			}
		}
		kept = append(kept, t)
	}
	targets = kept

	// TLS: one handshake per open TLS port of each target.
	type endpoint struct {
		t    *target
		port int
	}
	var tlsJobs, webJobs []endpoint
	for _, t := range targets {
		for _, port := range open[t.addr] {
			if s.opt.TLSPorts[port] {
				tlsJobs = append(tlsJobs, endpoint{t, port})
			}
			if _, ok := s.opt.WebPorts[port]; ok {
				webJobs = append(webJobs, endpoint{t, port})
			}
		}
	}
	if err := progress(scanstore.StatusTLSStarted); err != nil {
		return c, err
	}
	s.each(ctx, sc.OrganizationID, len(tlsJobs), func(i int) {
		e := tlsJobs[i]
		crt, err := pr.Handshake(ctx, e.t.addr, e.port, e.t.name)
		s.metrics.connections.WithLabelValues("tls", resultLabel(err == nil)).Inc()
		if err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		// The first certificate seen (lowest port) describes the host.
		if e.t.obs.Cert.SHA256Fingerprint == "" || e.port == 443 {
			e.t.obs.Cert = host.CertOf(crt)
		}
	})
	if err := progress(scanstore.StatusTLSCompleted); err != nil {
		return c, err
	}

	// HTTP: one GET per web port of each target.
	if err := progress(scanstore.StatusHTTPStarted); err != nil {
		return c, err
	}
	s.each(ctx, sc.OrganizationID, len(webJobs), func(i int) {
		e := webJobs[i]
		hostName := e.t.name
		if hostName == "" {
			hostName = e.t.addr.String()
		}
		pg, err := pr.Get(ctx, e.t.addr, e.port, hostName, s.opt.WebPorts[e.port])
		s.metrics.connections.WithLabelValues("http", resultLabel(err == nil)).Inc()
		if err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		h := e.t.obs
		// The host's status and title are its main page's: the TLS port
		// (443) when it answers, else the first answering.
		if h.HTTPStatusCode == 0 || e.port == 443 {
			h.HTTPStatusCode, h.HTTPTitle = pg.Status, pg.Title
		}
		h.Web = append(h.Web, pg.Tech...)
		if pg.Server != "" {
			h.Products = append(h.Products, pg.Server)
		}
		for j := range h.NetworkServices {
			if h.NetworkServices[j].Port == e.port {
				h.NetworkServices[j].Product = pg.Server
			}
		}
	})
	if err := ctx.Err(); err != nil {
		return c, err
	}
	if err := progress(scanstore.StatusHTTPCompleted); err != nil {
		return c, err
	}

	hs := make([]host.Host, 0, len(targets))
	for _, t := range targets {
		hs = append(hs, *t.obs)
	}
	if len(hs) > 0 && s.d.Sink != nil {
		n, err := s.d.Sink.IngestHosts(ctx, Source, hs)
		c.HostsStored = n
		if err != nil {
			return c, fmt.Errorf("store observations: %w", err)
		}
	}
	return c, nil
}

// each runs fn(0..n-1) with at most OrgConcurrency calls of the
// organization and Concurrency calls of every scan in flight, returning
// when all have returned (early when ctx ends: calls not started are
// skipped). The organization's share is taken first, so one
// organization's scan never holds every probe slot.
func (s *Service) each(ctx context.Context, orgID string, n int, fn func(i int)) {
	org := s.orgSlots(orgID)
	var wg sync.WaitGroup
	for i := range n {
		select {
		case org <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return
		}
		select {
		case s.sem <- struct{}{}:
		case <-ctx.Done():
			<-org
			wg.Wait()
			return
		}
		wg.Add(1)
		go func() {
			defer func() { <-s.sem; <-org; wg.Done() }()
			fn(i)
		}()
	}
	wg.Wait()
}

// orgSlots is the organization's share of the probe slots.
func (s *Service) orgSlots(orgID string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.orgSem[orgID]
	if c == nil {
		c = make(chan struct{}, s.opt.OrgConcurrency)
		s.orgSem[orgID] = c
	}
	return c
}

func resultLabel(ok bool) string {
	if ok {
		return "ok"
	}
	return "failed"
}

func openLabel(open bool, err error) string {
	switch {
	case open:
		return "open"
	case errors.Is(err, probe.ErrNotAllowed):
		return "refused_private"
	}
	return "closed"
}

// serviceName names the usual service of a port.
func serviceName(port int, opt Options) string {
	if tls, ok := opt.WebPorts[port]; ok {
		if tls {
			return "https"
		}
		return "http"
	}
	switch port {
	case 21:
		return "ftp"
	case 22:
		return "ssh"
	case 25, 465, 587:
		return "smtp"
	case 53:
		return "domain"
	case 110, 995:
		return "pop3"
	case 143, 993:
		return "imap"
	case 3306:
		return "mysql"
	case 3389:
		return "ms-wbt-server"
	case 5432:
		return "postgresql"
	}
	if opt.TLSPorts[port] {
		return "tls"
	}
	return "tcp/" + strconv.Itoa(port)
}
