package activescan_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/periscope-oss/periscope/internal/activescan"
	"github.com/periscope-oss/periscope/internal/hostingest"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/probe"
	"github.com/periscope-oss/periscope/internal/scanstore"
	"github.com/periscope-oss/periscope/internal/schema"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// zone is a loopback authoritative DNS server (miekg/dns on UDP) answering
// from a map of records, counting the questions asked per name.
type zone struct {
	mu      sync.Mutex
	records map[string][]dns.RR // by lower-case FQDN
	asked   map[string]int
	addr    string
}

func newZone(tb testing.TB, rrs ...string) *zone {
	tb.Helper()
	z := &zone{records: map[string][]dns.RR{}, asked: map[string]int{}}
	for _, s := range rrs {
		z.add(tb, s)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	z.addr = pc.LocalAddr().String()
	started := make(chan struct{})
	srv := &dns.Server{PacketConn: pc, Handler: z, NotifyStartedFunc: func() { close(started) }}
	go srv.ActivateAndServe()
	<-started
	tb.Cleanup(func() { srv.Shutdown() })
	return z
}

func (z *zone) add(tb testing.TB, s string) {
	rr, err := dns.NewRR(s)
	if err != nil {
		tb.Fatalf("record %q: %v", s, err)
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	name := strings.ToLower(rr.Header().Name)
	z.records[name] = append(z.records[name], rr)
}

func (z *zone) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	q := req.Question[0]
	name := strings.ToLower(q.Name)
	z.mu.Lock()
	z.asked[strings.TrimSuffix(name, ".")]++
	rrs, ok := z.records[name]
	z.mu.Unlock()
	if !ok {
		m.Rcode = dns.RcodeNameError
	}
	// Like a recursive resolver, follow a CNAME chain inside the zone.
	for hops := 0; hops < 8; hops++ {
		next := ""
		for _, rr := range rrs {
			switch {
			case rr.Header().Rrtype == q.Qtype:
				m.Answer = append(m.Answer, rr)
			case rr.Header().Rrtype == dns.TypeCNAME:
				m.Answer = append(m.Answer, rr)
				next = strings.ToLower(rr.(*dns.CNAME).Target)
			}
		}
		if next == "" || q.Qtype == dns.TypeCNAME {
			break
		}
		z.mu.Lock()
		rrs = z.records[next]
		z.mu.Unlock()
	}
	w.WriteMsg(m)
}

func (z *zone) questions(name string) int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.asked[name]
}

// countingListener records when each connection was accepted.
type countingListener struct {
	net.Listener
	mu    sync.Mutex
	times []time.Time
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.times = append(l.times, time.Now())
		l.mu.Unlock()
	}
	return c, err
}

func (l *countingListener) accepted() []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Time(nil), l.times...)
}

// lab is a set of loopback services: a web server, a TLS web server and a
// plain TCP service (an SSH-like banner-less port), on addr.
type lab struct {
	web, tlsWeb, raw *countingListener
	ports            []int
	webPorts         map[int]bool
	tlsPorts         map[int]bool
}

func listen(tb testing.TB, addr string) *countingListener {
	tb.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	return &countingListener{Listener: l}
}

func port(l net.Listener) int { return l.Addr().(*net.TCPAddr).Port }

func page(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Server", "nginx/1.25.3")
	w.Header().Set("X-Powered-By", "PHP/8.2.1")
	fmt.Fprintf(w, "<html><head><title>Welcome to %s</title></head><body>hello</body></html>", r.Host)
}

// newLab starts the services on addr ("127.0.0.1:0" or a fixed port on
// another loopback address).
func newLab(tb testing.TB) *lab {
	tb.Helper()
	lb := &lab{web: listen(tb, "127.0.0.1:0"), tlsWeb: listen(tb, "127.0.0.1:0"), raw: listen(tb, "127.0.0.1:0")}
	web := httptest.NewUnstartedServer(http.HandlerFunc(page))
	web.Listener = lb.web
	web.Start()
	tb.Cleanup(web.Close)
	tw := httptest.NewUnstartedServer(http.HandlerFunc(page))
	tw.Listener = lb.tlsWeb
	tw.Config.ErrorLog = log.New(io.Discard, "", 0) // the port scan's bare connects
	tw.StartTLS()
	tb.Cleanup(tw.Close)
	go func() {
		for {
			c, err := lb.raw.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	tb.Cleanup(func() { lb.raw.Close() })
	closed := listen(tb, "127.0.0.1:0") // a port nothing listens on
	closedPort := port(closed)
	closed.Close()
	lb.ports = []int{port(lb.web), port(lb.tlsWeb), port(lb.raw), closedPort}
	lb.webPorts = map[int]bool{port(lb.web): false, port(lb.tlsWeb): true}
	lb.tlsPorts = map[int]bool{port(lb.tlsWeb): true}
	return lb
}

func (lb *lab) connections() int {
	return len(lb.web.accepted()) + len(lb.tlsWeb.accepted()) + len(lb.raw.accepted())
}

// fixture is a store with an enterprise account and an organization.
type fixture struct {
	core  *store.Store
	hosts *hoststore.Store
	st    *scanstore.Store
	acct  string
	org   string
}

func newFixture(tb testing.TB, engine string, assets ...string) *fixture {
	tb.Helper()
	ctx := context.Background()
	core := storetest.Open(tb, engine, schema.Sets()...)
	a := periscope.Account{Company: "Example", Enterprise: true, OEM: true, CreditsPerMonth: 100, OEMCreditsPerMonth: 100}
	if err := core.CreateAccount(ctx, &a, &periscope.User{Email: "a@example.com"}); err != nil {
		tb.Fatal(err)
	}
	o := periscope.Organization{AccountID: a.ID, Name: "Example"}
	if err := core.CreateOrganization(ctx, &o); err != nil {
		tb.Fatal(err)
	}
	f := &fixture{core: core, hosts: hoststore.New(core), st: scanstore.New(core), acct: a.ID, org: o.ID}
	for _, v := range assets {
		kind := periscope.AssetDomain
		if strings.Contains(v, "/") {
			kind = periscope.AssetIPRange
		}
		if _, err := core.AddAsset(ctx, periscope.Asset{OrganizationID: o.ID, AccountID: a.ID, Kind: kind, Value: v}); err != nil {
			tb.Fatal(err)
		}
	}
	return f
}

// countingDial is a plain dialer counting the connections asked of it.
type countingDial struct {
	mu    sync.Mutex
	n     int
	times []time.Time
}

func (d *countingDial) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	d.n++
	d.times = append(d.times, time.Now())
	d.mu.Unlock()
	return (&net.Dialer{}).DialContext(ctx, network, addr)
}

func (d *countingDial) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n
}

// service returns the monitor of f on the lab, resolving through z.
func (f *fixture) service(z *zone, lb *lab, d *countingDial, opt activescan.Options) *activescan.Service {
	opt.Ports, opt.WebPorts, opt.TLSPorts = lb.ports, lb.webPorts, lb.tlsPorts
	if opt.Timeout == 0 {
		opt.Timeout = 2 * time.Second
	}
	return activescan.New(opt, depsFor(f, z, d))
}

func depsFor(f *fixture, z *zone, d *countingDial) activescan.Deps {
	return activescan.Deps{
		Store:    f.st,
		Names:    f.hosts,
		Sink:     &hostingest.Ingester{Store: f.hosts},
		Resolver: probe.NewDNSResolver([]string{z.addr}, 2*time.Second),
		Dial:     d.dial,
	}
}

func fmtInt(i int) string { return fmt.Sprint(i) }

// peak is the most times in any window of length w.
func peak(times []time.Time, w time.Duration) int {
	times = slices.Clone(times)
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	most := 0
	for i := range times {
		j := i
		for j < len(times) && times[j].Sub(times[i]) < w {
			j++
		}
		most = max(most, j-i)
	}
	return most
}
