package activescan_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/activescan"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/scanstore"
)

// rangeLab serves the lab's three services (HTTP, HTTPS, a bare TCP port)
// on the same ports of every address of a loopback prefix, recording
// every accepted connection's time.
type rangeLab struct {
	mu       sync.Mutex
	times    []time.Time
	ports    []int // web, tls web, raw, then closed ports
	webPorts map[int]bool
	tlsPorts map[int]bool
}

type stampListener struct {
	net.Listener
	lab *rangeLab
}

func (l stampListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.lab.mu.Lock()
		l.lab.times = append(l.lab.times, time.Now())
		l.lab.mu.Unlock()
	}
	return c, err
}

// newRangeLab listens on every address of pref; closed adds that many
// ports nothing listens on (connects refused), as a real host's port list
// mostly is.
func newRangeLab(b *testing.B, pref netip.Prefix, closed int) *rangeLab {
	b.Helper()
	ts := httptest.NewUnstartedServer(http.HandlerFunc(page))
	ts.StartTLS() // for its certificate
	b.Cleanup(ts.Close)
	lab := &rangeLab{}
	for attempt := 0; ; attempt++ {
		lab.ports = nil
		var lns []net.Listener
		ok := true
		for svc := range 3 {
			var port int
			for a := pref.Addr(); pref.Contains(a) && ok; a = a.Next() {
				l, err := net.Listen("tcp", net.JoinHostPort(a.String(), strconv.Itoa(port)))
				if err != nil {
					ok = false
					break
				}
				if port == 0 {
					port = l.Addr().(*net.TCPAddr).Port
				}
				lns = append(lns, wrapService(lab, l, svc, ts.TLS))
			}
			lab.ports = append(lab.ports, port)
		}
		if ok {
			break
		}
		for _, l := range lns {
			l.Close()
		}
		if attempt == 5 {
			b.Fatal("could not bind the same ports on every lab address")
		}
	}
	for range closed {
		l, err := net.Listen("tcp", net.JoinHostPort(pref.Addr().String(), "0"))
		if err != nil {
			b.Fatal(err)
		}
		lab.ports = append(lab.ports, l.Addr().(*net.TCPAddr).Port)
		l.Close()
	}
	lab.webPorts = map[int]bool{lab.ports[0]: false, lab.ports[1]: true}
	lab.tlsPorts = map[int]bool{lab.ports[1]: true}
	return lab
}

func wrapService(lab *rangeLab, l net.Listener, svc int, cfg *tls.Config) net.Listener {
	sl := stampListener{Listener: l, lab: lab}
	srv := &http.Server{Handler: http.HandlerFunc(page), ErrorLog: log.New(io.Discard, "", 0)}
	switch svc {
	case 0:
		go srv.Serve(sl)
	case 1:
		go srv.Serve(tls.NewListener(sl, cfg))
	default:
		go func() {
			for {
				c, err := sl.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	return l
}

// rates are the mean connections per second and the most in any one
// second, over the accepted connections.
func (lab *rangeLab) rates() (n int, mean float64, peak int) {
	lab.mu.Lock()
	times := slices.Clone(lab.times)
	lab.mu.Unlock()
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	n = len(times)
	if n < 2 {
		return n, 0, n
	}
	mean = float64(n-1) / times[n-1].Sub(times[0]).Seconds()
	for i := range times {
		j := i
		for j < n && times[j].Sub(times[i]) < time.Second {
			j++
		}
		peak = max(peak, j-i)
	}
	return n, mean, peak
}

// benchScan scans an organization holding bench-example.com (names of it
// in the index, resolving to one loopback address) and the loopback range
// pref, and reports the wall time, hosts stored per minute and the
// connection rate measured at the listeners.
func benchScan(b *testing.B, names int, pref netip.Prefix, closed int, opt activescan.Options) {
	ctx := context.Background()
	def := activescan.DefaultOptions()
	if opt.OrgRate == 0 {
		opt.OrgRate, opt.GlobalRate = def.OrgRate, def.GlobalRate
	}
	for range b.N {
		b.StopTimer()
		lab := newRangeLab(b, pref, closed)
		f := newFixture(b, "sqlite", "bench-example.com")
		if _, err := f.core.AddAsset(ctx, periscope.Asset{OrganizationID: f.org, AccountID: f.acct, Kind: periscope.AssetIPRange, Value: pref.String()}); err != nil {
			b.Fatal(err)
		}
		var rrs []string
		var hs []host.Host
		for i := range names {
			n := fmt.Sprintf("n%d.bench-example.com", i)
			rrs = append(rrs, n+". 60 IN A "+pref.Addr().String())
			hs = append(hs, host.Host{Host: n, Domain: "bench-example.com", TLD: "com", Subdomain: fmt.Sprintf("n%d", i), FirstSeen: 1, LastSeen: 1})
		}
		if len(hs) > 0 {
			if _, err := f.hosts.UpsertHosts(ctx, hs); err != nil {
				b.Fatal(err)
			}
		}
		z := newZone(b, rrs...)
		opt.AllowPrivate = true
		opt.Ports, opt.WebPorts, opt.TLSPorts = lab.ports, lab.webPorts, lab.tlsPorts
		d := &countingDial{}
		svc := activescan.New(opt, depsFor(f, z, d))
		for _, a := range []struct{ kind, v string }{{periscope.AssetDomain, "bench-example.com"}, {periscope.AssetIPRange, pref.String()}} {
			if err := svc.Authorize(ctx, f.org, a.kind, a.v); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		start := time.Now()
		if err := svc.Tick(ctx); err != nil {
			b.Fatal(err)
		}
		wall := time.Since(start)
		b.StopTimer()
		scans, err := f.st.Runnable(ctx, time.Now().Unix()+1, 10)
		if err != nil || len(scans) != 0 {
			b.Fatalf("scans left: %v %v", scans, err)
		}
		sc, _, err := f.st.Enqueue(ctx, scanstore.Request{AccountID: f.acct, OrganizationID: f.org, Origin: scanstore.OriginScheduled,
			TargetType: scanstore.TargetOrganization, Target: f.org}, time.Hour)
		if err != nil {
			b.Fatal(err)
		}
		n, mean, peak := lab.rates()
		b.ReportMetric(wall.Seconds(), "wall-s")
		got := sc // the scan Tick ran: a request inside the window returns it
		if got.Status != scanstore.StatusCompleted {
			b.Fatalf("scan %+v", got)
		}
		b.ReportMetric(float64(got.Counts.HostsStored)/wall.Minutes(), "hosts/min")
		b.ReportMetric(float64(d.count())/wall.Seconds(), "dials/s")
		b.ReportMetric(mean, "accepts/s")
		b.ReportMetric(float64(peak), "peak-accepts-in-1s")
		b.Logf("%d names + %s (%d ports): %d dials, %d accepted, %d hosts stored in %s; configured %.0f/s per org, %.0f/s global",
			names, pref, len(lab.ports), d.count(), n, got.Counts.HostsStored, wall.Round(time.Millisecond), opt.OrgRate, opt.GlobalRate)
	}
}

// BenchmarkScanDefaultRate: probe throughput at the default rates (10
// connections/s per organization, 50 global) and the default port count
// (16: the three lab services and 13 closed ports) over a loopback /28.
func BenchmarkScanDefaultRate(b *testing.B) {
	benchScan(b, 0, netip.MustParsePrefix("127.0.2.0/28"), 13, activescan.Options{})
}

// BenchmarkScanOrg1000NamesAnd24: a full scan of an organization with
// 1,000 names and a /24, at 500 connections/s (the default rate would
// take most of ten minutes: see BENCHMARKS.md).
func BenchmarkScanOrg1000NamesAnd24(b *testing.B) {
	benchScan(b, 1000, netip.MustParsePrefix("127.0.1.0/24"), 1, activescan.Options{OrgRate: 500, GlobalRate: 500, Concurrency: 64})
}
