package api_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/periscope-oss/periscope/internal/activescan"
	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/hostingest"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/probe"
	"github.com/periscope-oss/periscope/internal/scanstore"
	"github.com/periscope-oss/periscope/internal/store"
)

// txtZone is a loopback DNS server holding TXT records set by the test.
type txtZone struct {
	mu  sync.Mutex
	txt map[string]string
}

func (z *txtZone) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	q := req.Question[0]
	z.mu.Lock()
	v, ok := z.txt[strings.TrimSuffix(strings.ToLower(q.Name), ".")]
	z.mu.Unlock()
	if ok && q.Qtype == dns.TypeTXT {
		m.Answer = append(m.Answer, &dns.TXT{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60}, Txt: []string{v}})
	}
	w.WriteMsg(m)
}

func startTXTZone(t *testing.T) (*txtZone, string) {
	z := &txtZone{txt: map[string]string{}}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	srv := &dns.Server{PacketConn: pc, Handler: z, NotifyStartedFunc: func() { close(started) }}
	go srv.ActivateAndServe()
	<-started
	t.Cleanup(func() { srv.Shutdown() })
	return z, pc.LocalAddr().String()
}

// TestActiveMonitoringRoutes goes through verification, on-demand scans
// (charged once, deduplicated, refused for foreign or private targets)
// and the scan status, with a real monitor behind the API.
func TestActiveMonitoringRoutes(t *testing.T) {
	var svc *activescan.Service
	z, addr := startTXTZone(t)
	eachWith(t, apitest.Options{Deps: func(d *api.Deps, st *store.Store) {
		if _, err := st.Migrate(context.Background(), scanstore.Migrations()); err != nil {
			t.Fatal(err)
		}
		svc = activescan.New(activescan.Options{Ports: []int{1}, Timeout: time.Second}, activescan.Deps{
			Store: scanstore.New(st), Names: hoststore.New(st), Sink: &hostingest.Ingester{Store: hoststore.New(st)},
			Resolver: probe.NewDNSResolver([]string{addr}, 2*time.Second),
			Dial:     (&net.Dialer{}).DialContext, Now: d.Now,
		})
		d.Scans = svc
	}}, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		acct, key := e.Account(periscope.Account{Company: "Scan Co", Enterprise: true, OEM: true, CreditsPerMonth: 10, OEMCreditsPerMonth: 10})
		_, other := e.Account(periscope.Account{Company: "Other Co", Enterprise: true, OEM: true, CreditsPerMonth: 10, OEMCreditsPerMonth: 10})
		var org struct {
			ID string `json:"id"`
		}
		e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]any{"name": "Scan"}).JSON(t, &org)
		if r := e.Do("POST", "/api/v1/enterprise/organizations/"+org.ID+"/domains", key, map[string]any{"domain": "scan-example.com"}); r.Status != 201 {
			t.Fatalf("add domain: %d %s", r.Status, r.Body)
		}
		if r := e.Do("POST", "/api/v1/enterprise/organizations/"+org.ID+"/ip-ranges", key, map[string]any{"ip_range": "8.8.4.0/24"}); r.Status != 201 {
			t.Fatalf("add range: %d %s", r.Status, r.Body)
		}
		var detail struct {
			Token  string `json:"verification_token"`
			Assets []struct {
				Type     string `json:"type"`
				Value    string `json:"value"`
				Verified bool   `json:"verified"`
			} `json:"assets"`
		}
		e.Do("GET", "/api/v1/enterprise/organizations/"+org.ID, key, nil).JSON(t, &detail)
		if len(detail.Token) != 32 || len(detail.Assets) != 2 || detail.Assets[0].Verified || detail.Assets[1].Verified {
			t.Fatalf("organization before verification: %+v", detail)
		}
		credits := func() (int64, int64) {
			a, err := e.Store.Account(ctx, acct.ID)
			if err != nil {
				t.Fatal(err)
			}
			return a.CreditsUsed, a.OEMCreditsUsed
		}

		// Registered but unverified: 403, not charged.
		if r := e.Do("GET", "/api/v1/enterprise/on-demand-scans?target=scan-example.com", key, nil); r.Status != 403 || r.ErrorCode() != "forbidden" {
			t.Fatalf("unverified target: %d %s", r.Status, r.Body)
		}
		verify := func(k string) apitest.Response {
			return e.Do("POST", "/api/v1/enterprise/organizations/"+org.ID+"/domains/verify", k, map[string]any{"domain": "scan-example.com"})
		}
		if r := verify(key); r.Status != 400 {
			t.Fatalf("verify without the record: %d %s", r.Status, r.Body)
		}
		z.mu.Lock()
		z.txt["scan-example.com"] = "periscope-verification=" + detail.Token
		z.mu.Unlock()
		if r := verify(other); r.Status != 404 {
			t.Fatalf("verify another account's organization: %d %s", r.Status, r.Body)
		}
		if r := verify(key); r.Status != 200 {
			t.Fatalf("verify: %d %s", r.Status, r.Body)
		}
		e.Do("GET", "/api/v1/enterprise/organizations/"+org.ID, key, nil).JSON(t, &detail)
		if !detail.Assets[0].Verified || detail.Assets[0].Value != "scan-example.com" || detail.Assets[1].Verified {
			t.Fatalf("organization after verification: %+v", detail)
		}

		// On demand: charged once, then deduplicated for free.
		var first, again struct {
			Status       int    `json:"status"`
			Target       string `json:"target"`
			ScanID       string `json:"scan_id"`
			Deduplicated bool   `json:"deduplicated"`
		}
		e.Do("GET", "/api/v1/enterprise/on-demand-scans?target=Scan-Example.com", key, nil).JSON(t, &first)
		e.Do("GET", "/api/v1/enterprise/on-demand-scans?target=scan-example.com", key, nil).JSON(t, &again)
		if first.ScanID == "" || first.Deduplicated || again.ScanID != first.ScanID || !again.Deduplicated || first.Target != "scan-example.com" {
			t.Fatalf("on-demand: %+v then %+v", first, again)
		}
		if used, _ := credits(); used != 1 {
			t.Fatalf("%d credits used, want 1", used)
		}
		for _, target := range []string{"example.org", "8.8.4.0/24", "not a domain"} {
			r := e.Do("GET", "/api/v1/enterprise/on-demand-scans?target="+strings.ReplaceAll(target, " ", "%20"), key, nil)
			if r.Status != 403 && r.Status != 400 {
				t.Fatalf("target %q: %d %s", target, r.Status, r.Body)
			}
		}
		if r := e.Do("GET", "/api/v1/enterprise/on-demand-scans?target=scan-example.com", other, nil); r.Status != 403 {
			t.Fatalf("another account's domain: %d %s", r.Status, r.Body)
		}
		if used, _ := credits(); used != 1 {
			t.Fatalf("%d credits used after refusals, want 1", used)
		}

		// OEM: private space is 400; a host under the verified domain is queued.
		if r := e.Do("POST", "/api/v1/oem/on-demand-scan", key, map[string]any{"type": "ip_range", "target": "10.0.0.0/8"}); r.Status != 400 {
			t.Fatalf("private range: %d %s", r.Status, r.Body)
		}
		if r := e.Do("POST", "/api/v1/oem/on-demand-scan", key, map[string]any{"type": "subnet", "target": "8.8.4.0/24"}); r.Status != 400 {
			t.Fatalf("bad type: %d %s", r.Status, r.Body)
		}
		var oem struct {
			Response struct {
				Status string `json:"status"`
				Target string `json:"target"`
				Type   string `json:"type"`
				ScanID string `json:"scan_id"`
			} `json:"response"`
		}
		e.Do("POST", "/api/v1/oem/on-demand-scan", key, map[string]any{"type": "host", "target": "www.scan-example.com"}).JSON(t, &oem)
		if oem.Response.ScanID == "" || oem.Response.Type != "host" || oem.Response.Target != "www.scan-example.com" {
			t.Fatalf("oem scan: %+v", oem)
		}
		if _, oemUsed := credits(); oemUsed != 1 {
			t.Fatalf("%d OEM credits used, want 1", oemUsed)
		}

		type status struct {
			Response struct {
				ScanInfo struct {
					ScanID      string `json:"scan_id"`
					Status      string `json:"status"`
					CompletedAt *int64 `json:"completed_at"`
				} `json:"scan_info"`
			} `json:"response"`
		}
		var st status
		e.Do("POST", "/api/v1/oem/on-demand-scan/scan-status", key, map[string]any{"scan_id": first.ScanID}).JSON(t, &st)
		if st.Response.ScanInfo.Status != "queued" || st.Response.ScanInfo.CompletedAt != nil {
			t.Fatalf("status before running: %+v", st)
		}
		if r := e.Do("POST", "/api/v1/oem/on-demand-scan/scan-status", other, map[string]any{"scan_id": first.ScanID}); r.Status != 404 {
			t.Fatalf("another account's scan: %d %s", r.Status, r.Body)
		}
		if err := svc.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		e.Do("POST", "/api/v1/oem/on-demand-scan/scan-status", key, map[string]any{"scan_id": first.ScanID}).JSON(t, &st)
		if st.Response.ScanInfo.Status != "scan_completed" || st.Response.ScanInfo.CompletedAt == nil {
			t.Fatalf("status after running: %+v", st)
		}
		if _, oemUsed := credits(); oemUsed != 1 {
			t.Fatalf("scan status charged: %d OEM credits used", oemUsed)
		}

		// FullHunt's other spelling: the same rules, the same scan.
		var alias struct {
			Status       int    `json:"status"`
			Target       string `json:"target"`
			Type         string `json:"type"`
			ScanID       string `json:"scan_id"`
			Timestamp    int64  `json:"timestamp"`
			Deduplicated bool   `json:"deduplicated"`
		}
		r := e.Do("GET", "/api/v1/attack-surface/on-demand-scan?target=scan-example.com", key, nil)
		if r.JSON(t, &alias); r.Status != 200 ||
			alias.ScanID != first.ScanID || !alias.Deduplicated || alias.Type != "domain" || alias.Timestamp != e.Clock.Now().Unix() {
			t.Fatalf("alias of a scanned target: %d %s", r.Status, r.Body)
		}
		if r := e.Do("POST", "/api/v1/enterprise/organizations/"+org.ID+"/domains", key, map[string]any{"domain": "scan-example.net"}); r.Status != 201 {
			t.Fatalf("add domain: %d %s", r.Status, r.Body)
		}
		if r := e.Do("GET", "/api/v1/attack-surface/on-demand-scan?target=scan-example.net", key, nil); r.Status != 403 {
			t.Fatalf("alias, unverified: %d %s", r.Status, r.Body)
		}
		z.mu.Lock()
		z.txt["scan-example.net"] = "periscope-verification=" + detail.Token
		z.mu.Unlock()
		if r := e.Do("POST", "/api/v1/enterprise/organizations/"+org.ID+"/domains/verify", key, map[string]any{"domain": "scan-example.net"}); r.Status != 200 {
			t.Fatalf("verify: %d %s", r.Status, r.Body)
		}
		r = e.Do("GET", "/api/v1/attack-surface/on-demand-scan?target=scan-example.net", key, nil)
		if r.JSON(t, &alias); r.Status != 200 || alias.Deduplicated || alias.Target != "scan-example.net" {
			t.Fatalf("alias, new target: %d %s", r.Status, r.Body)
		}
		if used, _ := credits(); used != 2 {
			t.Fatalf("%d credits used after the alias's new scan, want 2", used)
		}
		e.Do("GET", "/api/v1/enterprise/on-demand-scans?target=scan-example.net", key, nil).JSON(t, &again)
		if again.ScanID != alias.ScanID || !again.Deduplicated {
			t.Fatalf("the enterprise route after the alias: %+v", again)
		}
		_, free := e.Account(periscope.Account{Company: "Free Scan Co", CreditsPerMonth: 10})
		if r := e.Do("GET", "/api/v1/attack-surface/on-demand-scan?target=scan-example.net", free, nil); r.Status != 403 || r.ErrorCode() != "enterprise_required" {
			t.Fatalf("alias without Enterprise: %d %s", r.Status, r.Body)
		}
		if r := e.Do("GET", "/api/v1/attack-surface/on-demand-scan", key, nil); r.Status != 400 {
			t.Fatalf("alias without target: %d %s", r.Status, r.Body)
		}
		if used, _ := credits(); used != 2 {
			t.Fatalf("%d credits used after refusals, want 2", used)
		}

		// The enterprise status route: an Enterprise account without the
		// OEM module reads the status of the scan it started, free.
		a, err := e.Store.Account(ctx, acct.ID)
		if err != nil {
			t.Fatal(err)
		}
		a.OEM = false
		if err := e.Store.UpdateAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
		if r := e.Do("POST", "/api/v1/oem/on-demand-scan/scan-status", key, map[string]any{"scan_id": first.ScanID}); r.Status != 403 {
			t.Fatalf("OEM status without OEM: %d %s", r.Status, r.Body)
		}
		var es struct {
			Status   int    `json:"status"`
			Message  string `json:"message"`
			ScanInfo struct {
				ScanID      string `json:"scan_id"`
				Target      string `json:"target"`
				Status      string `json:"status"`
				CompletedAt *int64 `json:"completed_at"`
			} `json:"scan_info"`
		}
		e.Do("GET", "/api/v1/enterprise/on-demand-scans/scan-status?scan_id="+first.ScanID, key, nil).JSON(t, &es)
		if es.Status != 200 || es.ScanInfo.ScanID != first.ScanID || es.ScanInfo.Target != "scan-example.com" || es.ScanInfo.Status != "scan_completed" || es.ScanInfo.CompletedAt == nil {
			t.Fatalf("enterprise scan status: %+v", es)
		}
		for q, want := range map[string]int{"": 400, "?scan_id=" + strings.Repeat("a", 65): 400, "?scan_id=00000000-0000-0000-0000-000000000000": 404} {
			if r := e.Do("GET", "/api/v1/enterprise/on-demand-scans/scan-status"+q, key, nil); r.Status != want {
				t.Fatalf("status %q: %d %s, want %d", q, r.Status, r.Body, want)
			}
		}
		if r := e.Do("GET", "/api/v1/enterprise/on-demand-scans/scan-status?scan_id="+first.ScanID, other, nil); r.Status != 404 {
			t.Fatalf("another account's scan: %d %s", r.Status, r.Body)
		}
		if used, _ := credits(); used != 2 {
			t.Fatalf("enterprise scan status charged: %d credits used", used)
		}
	})
}

// TestOnDemandScanCreditsUnderConcurrency is issue 29's concurrent scan
// test: many concurrent on-demand requests for distinct targets from an
// account with fewer credits than requests. A scan exists only if its
// credit was taken (one transaction): scans stored = credits taken =
// requests answered 200, on both routes and pools; a refused target asked
// again is refused again (no scan was queued for it), not "deduplicated".
func TestOnDemandScanCreditsUnderConcurrency(t *testing.T) {
	cfg := api.DefaultConfig()
	cfg.RateLimit = 0
	eachWith(t, apitest.Options{Config: &cfg, Deps: func(d *api.Deps, st *store.Store) {
		d.Scans = activescan.New(activescan.Options{}, activescan.Deps{Store: scanstore.New(st), Now: d.Now})
	}}, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		const credits, requests = 20, 60
		acct, key := e.Account(periscope.Account{Company: "Racer", Enterprise: true, OEM: true, CreditsPerMonth: credits, OEMCreditsPerMonth: credits})
		var org struct {
			ID string `json:"id"`
		}
		e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]any{"name": "Race"}).JSON(t, &org)
		if r := e.Do("POST", "/api/v1/enterprise/organizations/"+org.ID+"/ip-ranges", key, map[string]any{"ip_range": "8.8.0.0/16"}); r.Status != 201 {
			t.Fatalf("add range: %d %s", r.Status, r.Body)
		}
		if err := scanstore.New(e.Store).Authorize(ctx, org.ID, periscope.AssetIPRange, "8.8.0.0/16", scanstore.MethodOperator); err != nil {
			t.Fatal(err)
		}
		routes := []struct {
			name string
			do   func(i int) apitest.Response
			used func(a periscope.Account) int64
		}{
			{"oem", func(i int) apitest.Response {
				return e.Do("POST", "/api/v1/oem/on-demand-scan", key, map[string]any{"type": "host", "target": fmt.Sprintf("8.8.%d.%d", i/256, i%256)})
			}, func(a periscope.Account) int64 { return a.OEMCreditsUsed }},
			{"enterprise", func(i int) apitest.Response {
				return e.Do("GET", fmt.Sprintf("/api/v1/enterprise/on-demand-scans?target=8.8.%d.%d", 100+i/256, i%256), key, nil)
			}, func(a periscope.Account) int64 { return a.CreditsUsed }},
		}
		stored := 0
		for _, rt := range routes {
			codes := make([]int, requests)
			var wg sync.WaitGroup
			for i := range requests {
				wg.Go(func() { codes[i] = rt.do(i).Status })
			}
			wg.Wait()
			ok, refused := 0, 0
			var refusedAt []int
			for i, c := range codes {
				switch c {
				case 200:
					ok++
				case 403:
					refused++
					refusedAt = append(refusedAt, i)
				default:
					t.Fatalf("%s: request %d answered %d", rt.name, i, c)
				}
			}
			var n int
			if err := e.Store.DB().QueryRowContext(ctx, e.Store.Rebind(`SELECT COUNT(*) FROM scans WHERE account_id = ?`), acct.ID).Scan(&n); err != nil {
				t.Fatal(err)
			}
			a, err := e.Store.Account(ctx, acct.ID)
			if err != nil {
				t.Fatal(err)
			}
			stored = n - stored
			t.Logf("%s: %d requests, %d answered 200, %d refused, %d scans stored, %d credits taken", rt.name, requests, ok, refused, stored, rt.used(a))
			if ok != credits || refused != requests-credits || stored != credits || rt.used(a) != credits {
				t.Fatalf("%s: %d answered 200, %d refused, %d scans stored, %d credits taken; want %d each", rt.name, ok, refused, stored, rt.used(a), credits)
			}
			stored = n
			if r := rt.do(refusedAt[0]); r.Status != 403 || strings.Contains(string(r.Body), "deduplicated") {
				t.Fatalf("%s: a refused target asked again: %d %s", rt.name, r.Status, r.Body)
			}
		}
	})
}
