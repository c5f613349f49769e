package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/ledger"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/wire"
)

// historyScans are four nmap scans of one host, five days apart: it gains
// and loses ports (22 goes, 3389 comes), names (an A record comes, another
// goes, a CNAME comes) and certificates (three in turn), and its service,
// title and status move.
var historyScans = []struct {
	at       time.Time
	a, cname []string
	services []host.Service
	cert     string
	title    string
	status   int
}{
	{time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC), []string{"192.0.2.10"}, nil,
		[]host.Service{{Port: 22, Protocol: "tcp", Service: "ssh", Product: "OpenSSH", Version: "8.9"}, {Port: 443, Protocol: "tcp", Service: "http", Product: "nginx", Version: "1.18.0"}},
		"aa01", "Login", 200},
	{time.Date(2026, 11, 5, 10, 0, 0, 0, time.UTC), []string{"192.0.2.10", "192.0.2.11"}, nil,
		[]host.Service{{Port: 443, Protocol: "tcp", Service: "http", Product: "nginx", Version: "1.20.1"}, {Port: 3389, Protocol: "tcp", Service: "ms-wbt-server"}},
		"bb02", "VPN Login", 200},
	{time.Date(2026, 11, 10, 10, 0, 0, 0, time.UTC), []string{"192.0.2.11"}, []string{"vpn.edge.example.net"},
		[]host.Service{{Port: 443, Protocol: "tcp", Service: "http", Product: "nginx", Version: "1.20.1"}, {Port: 3389, Protocol: "tcp", Service: "ms-wbt-server"}},
		"bb02", "VPN Login", 302},
	{time.Date(2026, 11, 15, 10, 0, 0, 0, time.UTC), []string{"192.0.2.11"}, []string{"vpn.edge.example.net"},
		[]host.Service{{Port: 443, Protocol: "tcp", Service: "http", Product: "nginx", Version: "1.20.1"}},
		"cc03", "VPN Login", 302},
}

// tracked is what the ledger tracks of a host object, for comparing a
// rebuilt host with the one served at the time. A port the ledger restores
// from a removal row carries no service description (the row has none).
type tracked struct {
	DNS     map[string][]string
	Ports   []int
	Service []string
	Status  int
	Title   string
	Cert    string
}

func trackedOf(t *testing.T, m map[string]any) tracked {
	t.Helper()
	var tr tracked
	dns := m["dns"].(map[string]any)
	tr.DNS = map[string][]string{}
	for _, k := range []string{"a", "cname"} {
		for _, v := range dns[k].([]any) {
			tr.DNS[k] = append(tr.DNS[k], v.(string))
		}
	}
	for _, p := range m["network_ports"].([]any) {
		tr.Ports = append(tr.Ports, int(p.(float64)))
	}
	for _, s := range m["network_services"].([]any) {
		s := s.(map[string]any)
		tr.Service = append(tr.Service, fmt.Sprintf("%v/%v", s["port"], s["protocol"]))
		if s["port"].(float64) == 443 {
			tr.Service = append(tr.Service, fmt.Sprintf("443 %v %v %v", s["service"], s["product"], s["version"]))
		}
	}
	tr.Status, tr.Title = int(m["http_status_code"].(float64)), m["http_title"].(string)
	c := m["cert_object"].(map[string]any)
	tr.Cert = fmt.Sprintf("%v %v %v", c["sha256_fingerprint"], c["subject_common_name"], c["not_after"])
	return tr
}

func TestHostHistory(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		hs := wire.Hosts(e.Store, wire.NewLedger(e.Store))
		free, key := e.Account(periscope.Account{Company: "History Co", Plan: "free", CreditsPerMonth: 100})
		_, oemKey := e.Account(periscope.Account{Company: "History OEM", Plan: "enterprise", Enterprise: true, OEM: true, CreditsPerMonth: 100, OEMCreditsPerMonth: 100})
		const name = "vpn.example.com"
		var served []tracked // GET /host/{host} right after each scan
		for i, sc := range historyScans {
			e.Clock.Set(sc.at)
			exp := time.Date(2027, 1, 1+i, 0, 0, 0, 0, time.UTC).Unix()
			obs := host.Host{Host: name, IPAddress: sc.a[len(sc.a)-1], DNS: host.DNS{A: sc.a, CNAME: sc.cname},
				NetworkServices: sc.services, HTTPTitle: sc.title, HTTPStatusCode: sc.status,
				Cert: host.Cert{SHA256Fingerprint: sc.cert, SubjectCommonName: name, NotAfter: exp}}
			src := ledger.Source{Name: "nmap", Ports: []int{22, 443, 3389}}
			if _, err := hs.UpsertHostsFrom(ctx, src, []host.Host{obs}); err != nil {
				t.Fatal(err)
			}
			r := e.Do(http.MethodGet, "/api/v1/host/"+name, key, nil)
			if r.Status != 200 {
				t.Fatalf("scan %d: %d %s", i, r.Status, r.Body)
			}
			served = append(served, trackedOf(t, r.Map(t)))
		}
		// The losses took effect: 22 after two misses, 192.0.2.10 too.
		last := served[len(served)-1]
		if slices.Contains(last.Ports, 22) || slices.Contains(last.DNS["a"], "192.0.2.10") || !slices.Contains(served[2].Ports, 3389) {
			t.Fatalf("the scans did not gain and lose what they should: %+v", served)
		}
		e.Clock.Set(time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC))

		// As of an hour after each scan: what was served then.
		for i, sc := range historyScans {
			at := sc.at.Add(time.Hour).Format(time.RFC3339)
			r := e.Do(http.MethodGet, "/api/v1/host/"+name+"?at="+url.QueryEscape(at), key, nil)
			if r.Status != 200 {
				t.Fatalf("at %s: %d %s", at, r.Status, r.Body)
			}
			m := r.Map(t)
			if diff := cmp.Diff(served[i], trackedOf(t, m)); diff != "" {
				t.Errorf("at %s (-served then +rebuilt):\n%s", at, diff)
			}
			if m["as_of"].(float64) != float64(sc.at.Add(time.Hour).Unix()) || m["raw"] == nil {
				t.Errorf("at %s: as_of %v", at, m["as_of"])
			}
		}
		// Before the first scan the host was not known: 404, not charged.
		before := usageOf(t, e, free.ID)
		if r := e.Do(http.MethodGet, "/api/v1/host/"+name+"?at=2026-10-31", key, nil); r.Status != 404 {
			t.Errorf("before the first scan: %d %s", r.Status, r.Body)
		}
		for _, bad := range []string{"yesterday", "", "2026-13-01"} {
			if r := e.Do(http.MethodGet, "/api/v1/host/"+name+"?at="+bad, key, nil); r.Status != 400 {
				t.Errorf("at=%q: %d %s", bad, r.Status, r.Body)
			}
		}
		if got := usageOf(t, e, free.ID); got != before {
			t.Errorf("failed requests were charged: %d → %d", before, got)
		}

		// The events, newest first, two a page through the cursor.
		var all []map[string]any
		cursor := ""
		for pages := 0; ; pages++ {
			r := e.Do(http.MethodGet, "/api/v1/host/"+name+"/history?limit=2&cursor="+url.QueryEscape(cursor), key, nil)
			if r.Status != 200 || pages > 20 {
				t.Fatalf("history page %d: %d %s", pages, r.Status, r.Body)
			}
			var p struct {
				Host       string           `json:"host"`
				Events     []map[string]any `json:"events"`
				NextCursor string           `json:"next_cursor"`
			}
			r.JSON(t, &p)
			if p.Host != name || len(p.Events) > 2 {
				t.Fatalf("page: %s", r.Body)
			}
			all = append(all, p.Events...)
			if cursor = p.NextCursor; cursor == "" {
				break
			}
		}
		var got []string
		for _, ev := range all {
			got = append(got, fmt.Sprintf("%s %s %s %s|%s", time.Unix(int64(ev["time"].(float64)), 0).UTC().Format("01-02"), ev["category"], ev["change"], ev["value"], ev["old_value"]))
		}
		// Every event is accounted for: the host row first seen on 11-01,
		// nothing removed before two misses, in time order newest first.
		if len(got) == 0 || got[len(got)-1] != "11-01 host new "+name+"|" {
			t.Errorf("oldest event: %q", got)
		}
		for _, w := range []string{"11-05 dns_a new 192.0.2.11|", "11-05 port new 3389/tcp|", "11-05 service changed 443/tcp http nginx 1.20.1|443/tcp http nginx 1.18.0",
			"11-10 port removed |22/tcp", "11-10 dns_cname new vpn.edge.example.net|", "11-15 dns_a removed |192.0.2.10", "11-10 http_status changed 302|200"} {
			if !slices.Contains(got, w) {
				t.Errorf("missing event %q in %q", w, got)
			}
		}
		if r := e.Do(http.MethodGet, "/api/v1/host/"+name+"/history?from=2026-11-10&to=2026-11-10", key, nil); r.Status != 200 {
			t.Errorf("window: %d %s", r.Status, r.Body)
		} else {
			for _, ev := range r.Map(t)["events"].([]any) {
				if ts := int64(ev.(map[string]any)["time"].(float64)); ts != historyScans[2].at.Unix() {
					t.Errorf("event outside the window: %v", ev)
				}
			}
		}
		for _, bad := range []string{"?cursor=zzz", "?limit=0", "?from=2026-11-10&to=2026-11-01", "?from=soon"} {
			if r := e.Do(http.MethodGet, "/api/v1/host/"+name+"/history"+bad, key, nil); r.Status != 400 {
				t.Errorf("history%s: %d %s", bad, r.Status, r.Body)
			}
		}
		if r := e.Do(http.MethodGet, "/api/v1/host/unknown.example.org/history", key, nil); r.Status != 404 {
			t.Errorf("unknown host: %d", r.Status)
		}

		// The diff between the first and the last scan.
		r := e.Do(http.MethodGet, "/api/v1/host/"+name+"/diff?from=2026-11-01T12:00:00Z&to=2026-11-16", key, nil)
		if r.Status != 200 {
			t.Fatalf("diff: %d %s", r.Status, r.Body)
		}
		var d struct {
			Host    string `json:"host"`
			Total   int    `json:"total_changes"`
			Changes []struct {
				Category, Change, Value string
				Old                     string `json:"old_value"`
			} `json:"changes"`
		}
		r.JSON(t, &d)
		var changes []string
		for _, c := range d.Changes {
			changes = append(changes, c.Category+" "+c.Change+" "+c.Value+"|"+c.Old)
		}
		slices.Sort(changes)
		wantChanges := []string{
			"dns_a new 192.0.2.11|", "dns_a removed |192.0.2.10", "dns_cname new vpn.edge.example.net|",
			"http_status changed 302|200", "http_title changed VPN Login|Login",
			"port new 3389/tcp|", // missed once on 11-15: not yet removed
			"port removed |22/tcp",
			"service changed 443/tcp http nginx 1.20.1|443/tcp http nginx 1.18.0",
			"tls_cert changed cc03 CN=vpn.example.com expires 2027-01-04|aa01 CN=vpn.example.com expires 2027-01-01",
		}
		if diff := cmp.Diff(wantChanges, changes); diff != "" || d.Total != len(wantChanges) || d.Host != name {
			t.Errorf("diff (-want +got):\n%s", diff)
		}
		if r := e.Do(http.MethodGet, "/api/v1/host/"+name+"/diff?from=2026-10-01&to=2026-11-02", key, nil); r.Status != 200 || !strings.Contains(string(r.Body), `"category":"host","change":"new"`) {
			t.Errorf("diff from before the host: %d %s", r.Status, r.Body)
		}
		for path, want := range map[string]int{"/diff": 400, "/diff?from=2026-11-10&to=2026-11-01": 400, "/diff?from=2026-10-01&to=2026-10-02": 404} {
			if r := e.Do(http.MethodGet, "/api/v1/host/"+name+path, key, nil); r.Status != want {
				t.Errorf("%s: %d %s", path, r.Status, r.Body)
			}
		}

		// FullHunt's historical-hosts search: one result per state.
		r = e.Do(http.MethodPost, "/api/v1/oem/historical-hosts/search", oemKey, map[string]any{"type": "host", "query": name})
		if r.Status != 200 {
			t.Fatalf("historical hosts: %d %s", r.Status, r.Body)
		}
		var hh struct {
			Query   map[string]string `json:"query"`
			Total   int               `json:"total_results"`
			Results []map[string]any  `json:"results"`
		}
		r.JSON(t, &hh)
		if hh.Query["type"] != "host" || hh.Total != len(historyScans) || len(hh.Results) != len(historyScans) {
			t.Fatalf("historical hosts: %s", r.Body)
		}
		for i, res := range hh.Results {
			scan := len(historyScans) - 1 - i
			if diff := cmp.Diff(served[scan], trackedOf(t, res)); diff != "" {
				t.Errorf("state %d (-served +state):\n%s", i, diff)
			}
			if res["valid_from"].(float64) != float64(historyScans[scan].at.Unix()) || res["is_current"].(bool) != (i == 0) {
				t.Errorf("state %d: from %v current %v", i, res["valid_from"], res["is_current"])
			}
		}
		r = e.Do(http.MethodPost, "/api/v1/oem/historical-hosts/search", oemKey, map[string]any{"query": "example.com"})
		if r.JSON(t, &hh); r.Status != 200 || hh.Query["type"] != "domain" || hh.Total != len(historyScans) {
			t.Errorf("by domain: %d %s", r.Status, r.Body)
		}
		for body, want := range map[string]int{`{}`: 400, `{"query":"example.com","type":"asn"}`: 400, `{"query":"192.0.2.1","type":"domain"}`: 400} {
			if r := e.Do(http.MethodPost, "/api/v1/oem/historical-hosts/search", oemKey, body); r.Status != want {
				t.Errorf("%s: %d %s", body, r.Status, r.Body)
			}
		}
		if r := e.Do(http.MethodPost, "/api/v1/oem/historical-hosts/search", key, map[string]any{"query": name}); r.Status != 403 || r.ErrorCode() != "oem_required" {
			t.Errorf("without OEM: %d %s", r.Status, r.Body)
		}
		r = e.Do(http.MethodPost, "/api/v1/oem/historical-hosts/search", oemKey, map[string]any{"query": "nothing.example.org"})
		if r.JSON(t, &hh); r.Status != 200 || hh.Total != 0 || len(hh.Results) != 0 {
			t.Errorf("a domain without history: %d %s", r.Status, r.Body)
		}
	})
}

func usageOf(t *testing.T, e *apitest.Env, id string) int64 {
	t.Helper()
	a, err := e.Store.Account(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a.CreditsUsed
}
