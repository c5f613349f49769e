package whoislookup

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/egress"
	"github.com/periscope-oss/periscope/internal/rdap"
	"github.com/periscope-oss/periscope/internal/store/storetest"
	"github.com/periscope-oss/periscope/internal/whois"
	"github.com/periscope-oss/periscope/internal/whoisstore"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type fixture struct {
	svc       *Service
	clock     *clock
	rdapHits  atomic.Int64
	whoisHits atomic.Int64
	rdapDown  atomic.Bool
	whoisDown atomic.Bool
	delay     time.Duration
}

func newFixture(t *testing.T, engine string) *fixture {
	f := &fixture{clock: &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}}
	googleRDAP, err := os.ReadFile("testdata/whoisit_rdap.verisign.com_domain_GOOGLE.COM.json")
	if err != nil {
		t.Fatal(err)
	}
	var rdapSrv *httptest.Server
	rdapSrv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/com/v1/") {
			f.rdapHits.Add(1)
		}
		time.Sleep(f.delay)
		switch {
		case f.rdapDown.Load():
			w.WriteHeader(http.StatusTooManyRequests)
		case r.URL.Path == "/com/v1/domain/google.com":
			// The related link is pointed back here, where the registrar
			// is unknown: the registry's answer stands alone.
			w.Write([]byte(strings.ReplaceAll(string(googleRDAP), "https://rdap.markmonitor.com/rdap", rdapSrv.URL+"/registrar")))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(rdapSrv.Close)
	itRaw, _ := os.ReadFile("testdata/it_google.it.txt")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f.whoisHits.Add(1)
			go func() {
				defer c.Close()
				bufio.NewReader(c).ReadString('\n')
				if !f.whoisDown.Load() {
					io.WriteString(c, string(itRaw))
				}
			}()
		}
	}()
	lab := egress.New(egress.Options{AllowPrivate: true})
	st := whoisstore.New(storetest.Open(t, engine, whoisstore.Migrations()))
	f.svc = New(Config{
		Store:        st,
		RDAP:         &rdap.Client{HTTP: lab.HTTPClient(5 * time.Second)},
		WHOIS:        &whois.Client{Dial: lab.DialContext, Servers: whois.Servers{"it": ln.Addr().String()}, Timeout: 2 * time.Second},
		Limiter:      NewLimiter(6000, 100, time.Second, time.Now),
		Now:          f.clock.Now,
		DNSBootstrap: &rdap.Registry{Services: [][][]string{{{"com"}, {rdapSrv.URL + "/com/v1/"}}}},
	})
	return f
}

func TestLookup(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t, engine)
			res, err := f.svc.Lookup(ctx, "google.com", "com", false)
			if err != nil {
				t.Fatal(err)
			}
			if res.Cached || !res.WhoisData.Registered || res.WhoisData.WHOIS != nil || !strings.Contains(string(res.WhoisData.RDAP), `"registrar":"MarkMonitor Inc."`) {
				t.Fatalf("first lookup %+v rdap %s", res, res.WhoisData.RDAP)
			}
			if !strings.Contains(string(res.WhoisData.RDAP), `"expires_at":"2028-09-14T04:00:00Z"`) {
				t.Fatalf("rdap view %s", res.WhoisData.RDAP)
			}
			res, err = f.svc.Lookup(ctx, "google.com", "com", false)
			if err != nil || !res.Cached || f.rdapHits.Load() != 1 {
				t.Fatalf("second lookup cached=%v hits=%d err=%v", res != nil && res.Cached, f.rdapHits.Load(), err)
			}
			if res, err = f.svc.Lookup(ctx, "google.com", "com", true); err != nil || res.Cached || f.rdapHits.Load() != 2 {
				t.Fatalf("no_cache lookup: hits %d err %v", f.rdapHits.Load(), err)
			}
			// Not registered: RDAP 404, kept an hour.
			res, err = f.svc.Lookup(ctx, "nosuchname-xyz.com", "com", false)
			if err != nil || res.WhoisData.Registered {
				t.Fatalf("404: %+v %v", res, err)
			}
			f.clock.Add(30 * time.Minute)
			if res, _ := f.svc.Lookup(ctx, "nosuchname-xyz.com", "com", false); !res.Cached {
				t.Fatal("not-found answer not cached for 30 min")
			}
			f.clock.Add(31 * time.Minute)
			if res, _ := f.svc.Lookup(ctx, "nosuchname-xyz.com", "com", false); res.Cached {
				t.Fatal("not-found answer cached past an hour")
			}
			// .it has no RDAP server in this bootstrap: port 43.
			res, err = f.svc.Lookup(ctx, "google.it", "it", false)
			if err != nil || res.WhoisData.WHOIS == nil || res.WhoisData.WHOIS.Registrar != "MARKMONITOR-REG" || f.whoisHits.Load() != 1 {
				t.Fatalf("port 43: %+v %v", res, err)
			}
			if got := *res.WhoisData.WHOIS.ExpiresAt; got != "2020-04-21T00:00:00Z" {
				t.Fatalf("expires %s", got)
			}
			// A day later upstream throttles: the stale answer, marked.
			f.clock.Add(25 * time.Hour)
			f.rdapDown.Store(true)
			res, err = f.svc.Lookup(ctx, "google.com", "com", false)
			if err != nil || !res.Stale || res.WhoisData.Domain != "google.com" {
				t.Fatalf("stale: %+v %v", res, err)
			}
			// Nothing stored and upstream throttled: unavailable, with a retry time.
			_, err = f.svc.Lookup(ctx, "other.com", "com", false)
			var un *UnavailableError
			if !errors.As(err, &un) || un.RetryAfter < time.Second {
				t.Fatalf("unavailable: %v", err)
			}
			// Search sees what was looked up.
			data, total, err := f.svc.Search(ctx, whoisstore.Filter{Registrar: "markmonitor", Limit: 10})
			if err != nil || total != 2 || len(data) != 2 {
				t.Fatalf("search: %d %v", total, err)
			}
		})
	}
}

func TestLookupSharesOneUpstreamQuery(t *testing.T) {
	f := newFixture(t, "sqlite")
	f.delay = 200 * time.Millisecond
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			if _, err := f.svc.Lookup(context.Background(), "google.com", "com", false); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := f.rdapHits.Load(); n != 1 {
		t.Fatalf("20 concurrent lookups made %d upstream queries, want 1", n)
	}
}

func TestLimiter(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	l := NewLimiter(60, 2, 5*time.Second, c.Now) // one a second, bursts of 2
	var slept []time.Duration
	l.sleep = func(_ context.Context, d time.Duration) error { slept = append(slept, d); c.Add(d); return nil }
	ctx := context.Background()
	for range 3 {
		if err := l.Wait(ctx, "whois.example:43"); err != nil {
			t.Fatal(err)
		}
	}
	if len(slept) != 1 || slept[0] != time.Second {
		t.Fatalf("slept %v, want one 1s wait after the burst", slept)
	}
	// A caller whose turn is over 5 s away is refused with a retry time.
	var th *ThrottledError
	l.hosts["whois.example"].waiting = 6
	if err := l.Wait(ctx, "whois.example"); !errors.As(err, &th) || th.RetryAfter != 7*time.Second {
		t.Fatalf("over max wait: %v", err)
	}
	l.hosts["whois.example"].waiting = 0
	// Another host has its own bucket.
	if err := l.Wait(ctx, "rdap.example"); err != nil {
		t.Fatal(err)
	}
	// Backoff after a 429 doubles from 30 s.
	if d := l.Backoff("rdap.example", 0); d != 30*time.Second {
		t.Fatalf("first backoff %v", d)
	}
	if d := l.Backoff("rdap.example", 0); d != time.Minute {
		t.Fatalf("second backoff %v", d)
	}
	if err := l.Wait(ctx, "rdap.example"); !errors.As(err, &th) || th.RetryAfter != time.Minute {
		t.Fatalf("during backoff: %v", err)
	}
	c.Add(61 * time.Second)
	if err := l.Wait(ctx, "rdap.example"); err != nil {
		t.Fatalf("after backoff: %v", err)
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"google.com":        "google.com",
		"WWW.Google.COM.":   "google.com",
		"bbc.co.uk":         "bbc.co.uk",
		"news.bbc.co.uk":    "bbc.co.uk",
		"bücher.de":         "xn--bcher-kva.de",
		"foo.github.io":     "github.io",
		"xn--p1ai.xn--p1ai": "xn--p1ai.xn--p1ai",
	} {
		got, _, err := Normalize(in)
		if err != nil || got != want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "com", "co.uk", "1.2.3.4", "https://google.com", "google.com/x", "-bad-.com", "a..com", "goo gle.com", "x.invalidtld"} {
		if got, _, err := Normalize(bad); err == nil {
			t.Errorf("Normalize(%q) = %q, want error", bad, got)
		}
	}
}

func TestIngest(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			st := whoisstore.New(storetest.Open(t, engine, whoisstore.Migrations()))
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			rdapJSON, _ := os.ReadFile("testdata/whoisit_rdap.verisign.com_domain_GOOGLE.COM.json")
			it, _ := os.ReadFile("testdata/it_google.it.txt")
			for _, tc := range []struct {
				data []byte
				want string
			}{{rdapJSON, "google.com"}, {it, "google.it"}, {[]byte("Domain Name: GOOGLE.COM\nRegistrar: MarkMonitor Inc.\n"), "google.com"}} {
				got, _, err := Ingest(ctx, st, tc.data, "test", now, time.Hour)
				if err != nil || got != tc.want {
					t.Fatalf("Ingest = %q, %v; want %q", got, err, tc.want)
				}
			}
			rec, err := st.Get(ctx, "google.com")
			if err != nil || rec.RDAPJSON == "" || rec.WhoisRaw == "" || rec.Source != "ingest" || !rec.CacheExpires.Equal(now.Add(time.Hour)) {
				t.Fatalf("merged record %+v %v", rec, err)
			}
			for _, bad := range [][]byte{[]byte("no domain here"), []byte(`{"objectClassName":"domain","ldhName":"co.uk"}`), []byte("Domain Name: a\x00.com"), {0xff, 0xfe}, []byte("{broken")} {
				if _, _, err := Ingest(ctx, st, bad, "bad", now, time.Hour); err == nil {
					t.Errorf("Ingest(%q) accepted", bad)
				}
			}
			// A Latin-1 answer is decoded as every ingested text is
			// (textenc), the same on both engines, not refused.
			got, _, err := Ingest(ctx, st, []byte("Domain Name: m\xfcller.de\nRegistrant Organization: Caf\xe9 M\xfcller\n"), "latin1", now, time.Hour)
			if err != nil || got != "xn--mller-kva.de" {
				t.Fatalf("latin-1 answer: %q %v", got, err)
			}
			if rec, err := st.Get(ctx, got); err != nil || !strings.Contains(rec.WhoisRaw, "Café Müller") {
				t.Errorf("latin-1 raw stored as %q, %v", rec.WhoisRaw, err)
			}
			// An RDAP answer of another class says what it is.
			ip, _ := os.ReadFile("../rdap/testdata/whoisit_ip_v4.json")
			if _, _, err := Ingest(ctx, st, ip, "ip.json", now, time.Hour); err == nil || !strings.Contains(err.Error(), "ip.json: an RDAP ip network answer, not a domain") {
				t.Errorf("ip answer: %v", err)
			}
		})
	}
}
