package activescan_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/activescan"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/scanstore"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// TestScanOnLoopback verifies a domain by its TXT record, runs a scheduled
// scan against loopback services and finds what they serve in the host
// index; a registered but unverified domain is never asked about.
func TestScanOnLoopback(t *testing.T) {
	for _, e := range storetest.Engines() {
		t.Run(e, func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t, e, "example.com", "unverified.org")
			// A name only the index knows: the scan must find it there.
			if _, err := f.hosts.UpsertHosts(ctx, []host.Host{{Host: "legacy.example.com", Domain: "example.com", TLD: "com", Subdomain: "legacy", FirstSeen: 1, LastSeen: 1}}); err != nil {
				t.Fatal(err)
			}
			z := newZone(t,
				"example.com. 60 IN A 127.0.0.1",
				"example.com. 60 IN MX 10 mail.example.com.",
				"example.com. 60 IN NS ns1.example.com.",
				"www.example.com. 60 IN CNAME example.com.",
				"legacy.example.com. 60 IN A 127.0.0.1",
				"unverified.org. 60 IN A 127.0.0.1",
				"www.unverified.org. 60 IN A 127.0.0.1",
			)
			lb := newLab(t)
			d := &countingDial{}
			svc := f.service(z, lb, d, activescan.Options{AllowPrivate: true, OrgRate: 1000, GlobalRate: 1000})

			// Before verification nothing is scheduled.
			if err := svc.Tick(ctx); err != nil {
				t.Fatal(err)
			}
			if d.count() != 0 || z.questions("example.com") != 0 {
				t.Fatalf("before verification: %d connections, %d questions", d.count(), z.questions("example.com"))
			}
			if err := svc.VerifyDomain(ctx, f.org, "example.com"); periscope.ErrorCode(err) != periscope.EInvalid {
				t.Fatalf("verify without the record: %v, want invalid_parameter", err)
			}
			tok, err := svc.Token(ctx, f.org)
			if err != nil {
				t.Fatal(err)
			}
			z.add(t, `example.com. 60 IN TXT "v=spf1 -all"`)
			z.add(t, `example.com. 60 IN TXT "periscope-verification=`+tok+`"`)
			if err := svc.VerifyDomain(ctx, f.org, "example.com"); err != nil {
				t.Fatalf("verify: %v", err)
			}
			if err := svc.VerifyDomain(ctx, f.org, "unverified.org"); periscope.ErrorCode(err) != periscope.EInvalid {
				t.Fatalf("verify unverified.org: %v", err)
			}
			asked := z.questions("unverified.org") + z.questions("www.unverified.org")
			if err := svc.Tick(ctx); err != nil {
				t.Fatal(err)
			}
			if n := lb.connections(); n == 0 {
				t.Fatal("no connection reached the lab")
			}
			if q := z.questions("unverified.org") + z.questions("www.unverified.org") - asked; q != 0 {
				t.Fatalf("unverified domain asked about %d times", q)
			}
			h, err := f.hosts.Host(ctx, "example.com")
			if err != nil {
				t.Fatal(err)
			}
			if h.IPAddress != "127.0.0.1" || !slices.Equal(h.DNS.MX, []string{"mail.example.com"}) || len(h.DNS.TXT) != 2 {
				t.Fatalf("example.com DNS: ip %q, %+v", h.IPAddress, h.DNS)
			}
			wantPorts := []int{port(lb.web), port(lb.tlsWeb), port(lb.raw)}
			slices.Sort(wantPorts)
			if !slices.Equal(h.NetworkPorts, wantPorts) {
				t.Fatalf("ports %v, want %v (not the closed %d)", h.NetworkPorts, wantPorts, lb.ports[3])
			}
			if h.HTTPStatusCode != 200 || h.HTTPTitle != "Welcome to example.com:"+itoa(port(lb.web)) && h.HTTPTitle != "Welcome to example.com:"+itoa(port(lb.tlsWeb)) {
				t.Fatalf("http %d %q", h.HTTPStatusCode, h.HTTPTitle)
			}
			if h.Cert.SHA256Fingerprint == "" || h.Cert.SubjectOrg != "Acme Co" {
				t.Fatalf("cert %+v", h.Cert)
			}
			if !slices.Contains(h.Products, "nginx/1.25.3") || !slices.Contains(h.Web, "PHP/8.2.1") {
				t.Fatalf("products %v web %v", h.Products, h.Web)
			}
			www, err := f.hosts.Host(ctx, "www.example.com")
			if err != nil || !slices.Equal(www.DNS.CNAME, []string{"example.com"}) || www.IPAddress != "127.0.0.1" {
				t.Fatalf("www.example.com: %+v %v", www.DNS, err)
			}
			legacy, err := f.hosts.Host(ctx, "legacy.example.com")
			if err != nil || legacy.IPAddress != "127.0.0.1" || legacy.FirstSeen != 1 {
				t.Fatalf("legacy.example.com: %+v %v", legacy, err)
			}
			if _, err := f.hosts.Host(ctx, "unverified.org"); periscope.ErrorCode(err) != periscope.ENotFound {
				t.Fatalf("unverified.org stored: %v", err)
			}
			// The scheduled scan completed and is not due again.
			before := d.count()
			if err := svc.Tick(ctx); err != nil {
				t.Fatal(err)
			}
			if d.count() != before {
				t.Fatalf("a second pass inside the interval made %d connections", d.count()-before)
			}
		})
	}
}

// TestPrivateAddressesAreNotProbed: without AllowPrivate, names that
// resolve to loopback or private addresses get their DNS facts recorded
// and no connection at all.
func TestPrivateAddressesAreNotProbed(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "sqlite", "example.com")
	z := newZone(t,
		"example.com. 60 IN A 127.0.0.1",
		"www.example.com. 60 IN A 10.1.2.3",
		"api.example.com. 60 IN AAAA ::1",
		"dev.example.com. 60 IN A 192.168.1.1",
	)
	lb := newLab(t)
	d := &countingDial{}
	svc := f.service(z, lb, d, activescan.Options{})
	if err := svc.Authorize(ctx, f.org, periscope.AssetDomain, "example.com"); err != nil {
		t.Fatal(err)
	}
	sc, _, err := svc.RequestScan(ctx, f.acct, scanstore.OriginOnDemand, mustTarget(t, "", "example.com"), periscope.PoolNone)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if d.count() != 0 || lb.connections() != 0 {
		t.Fatalf("%d dials, %d connections to private addresses", d.count(), lb.connections())
	}
	got, err := svc.Scan(ctx, f.acct, sc.ID)
	if err != nil || got.Status != scanstore.StatusCompleted || got.Counts.SkippedPrivate != 4 || got.Counts.Names != 4 {
		t.Fatalf("scan %+v %v; want completed, 4 names, 4 skipped", got, err)
	}
	h, err := f.hosts.Host(ctx, "www.example.com")
	if err != nil || !h.HasPrivateIP || len(h.NetworkPorts) != 0 {
		t.Fatalf("www.example.com %+v %v", h, err)
	}
}

// TestRateIsNeverExceeded measures the connections at the listeners: in no
// one-second window more than the rate plus the one-connection burst.
func TestRateIsNeverExceeded(t *testing.T) {
	if testing.Short() {
		t.Skip("takes seconds by design")
	}
	ctx := context.Background()
	f := newFixture(t, "sqlite", "example.com")
	var rrs []string
	for i := range 30 {
		rrs = append(rrs, "n"+itoa(i)+".example.com. 60 IN A 127.0.0.1")
	}
	z := newZone(t, rrs...)
	lb := newLab(t)
	for i := range 30 {
		if _, err := f.hosts.UpsertHosts(ctx, []host.Host{{Host: "n" + itoa(i) + ".example.com", Domain: "example.com", TLD: "com", Subdomain: "n" + itoa(i), FirstSeen: 1, LastSeen: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	const rate = 25
	d := &countingDial{}
	svc := f.service(z, lb, d, activescan.Options{AllowPrivate: true, OrgRate: rate, GlobalRate: 1000, Concurrency: 64})
	if err := svc.Authorize(ctx, f.org, periscope.AssetDomain, "example.com"); err != nil {
		t.Fatal(err)
	}
	if err := svc.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	var times []time.Time
	times = append(times, lb.web.accepted()...)
	times = append(times, lb.tlsWeb.accepted()...)
	times = append(times, lb.raw.accepted()...)
	if len(times) < 60 {
		t.Fatalf("only %d connections reached the lab", len(times))
	}
	// The pacer grants at most rate+1 connections in any second (a
	// token bucket of burst one). What a test can observe, the time a dial
	// starts or an accept returns, lags the grant by the scheduling of a
	// machine shared with many builds, so the bound is checked over two
	// seconds with a quarter second (dials) or half a second (accepts) of
	// lag allowed: a pacer off by even 20% fails it.
	d.mu.Lock()
	dials := slices.Clone(d.times)
	d.mu.Unlock()
	if p := peak(dials, 2*time.Second); p > 2*rate+1+rate/4 {
		t.Fatalf("%d connections opened in two seconds at a rate of %d/s", p, rate)
	}
	if p := peak(times, 2*time.Second); p > 2*rate+1+rate/2 {
		t.Fatalf("%d connections accepted in two seconds at a rate of %d/s", p, rate)
	}
	span := dials[len(dials)-1].Sub(dials[0]).Seconds()
	if mean := float64(len(dials)-1) / span; mean > rate*1.02 {
		t.Fatalf("%.1f connections/s on average at a rate of %d/s", mean, rate)
	}
	t.Logf("%d connections in %.2f s; most opened in 1 s: %d, in 2 s: %d; most accepted in 1 s: %d, in 2 s: %d (rate %d/s)",
		len(dials), span, peak(dials, time.Second), peak(dials, 2*time.Second), peak(times, time.Second), peak(times, 2*time.Second), rate)
}

func mustTarget(t *testing.T, typ, s string) activescan.Target {
	t.Helper()
	tg, err := activescan.ParseTarget(typ, s, true)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func itoa(i int) string { return fmtInt(i) }
