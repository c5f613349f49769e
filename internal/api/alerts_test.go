package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/alerts"
	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/ledger"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
)

// receiver is a webhook receiver that verifies every delivery's signature
// with the secrets it knows, as docs/api.md tells receivers to.
type receiver struct {
	t       *testing.T
	clock   func() time.Time
	mu      sync.Mutex
	secrets []string
	got     []received
	status  int
}

type received struct {
	id, event string
	body      map[string]any
	sigs      int
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.status != 0 {
		w.WriteHeader(rc.status)
		return
	}
	for _, s := range rc.secrets {
		if err := alerts.Verify(s, r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp"), r.Header.Get("webhook-signature"), body, rc.clock(), 5*time.Minute); err != nil {
			rc.t.Errorf("delivery %s does not verify with a known secret: %v", r.Header.Get("webhook-id"), err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		rc.t.Errorf("delivery is not JSON: %s", body)
	}
	ev, _ := m["type"].(string)
	rc.got = append(rc.got, received{id: r.Header.Get("webhook-id"), event: ev, body: m, sigs: len(strings.Fields(r.Header.Get("webhook-signature")))})
	w.WriteHeader(http.StatusNoContent)
}

func (rc *receiver) take() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	g := rc.got
	rc.got = nil
	return g
}

// hostWrite stands in for the host merge: it writes the ledger of merging
// obs into stored (nil: a new host) in one transaction, as hoststore will.
func hostWrite(t *testing.T, e *apitest.Env, stored *host.Host, obs host.Host, src ledger.Source) host.Host {
	t.Helper()
	st := alertstore.New(e.Store)
	var merged host.Host
	err := e.Store.Tx(context.Background(), func(tx *store.Tx) error {
		src.Time = e.Clock.Now().Unix()
		var names []string
		if stored != nil {
			names = []string{stored.Host}
		}
		tr, err := st.Track(context.Background(), tx, src, names)
		if err != nil {
			return err
		}
		if stored == nil {
			merged = host.Merge(host.Host{}, obs)
			tr.New(&merged)
		} else {
			merged = host.Merge(*stored, obs)
			tr.Diff(stored, &merged, &obs)
		}
		return tr.Flush(context.Background(), tx)
	})
	if err != nil {
		t.Fatal(err)
	}
	return merged
}

func TestAlertsEndToEnd(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		_, key := e.Account(periscope.Account{Company: "Acme", Plan: "enterprise", Enterprise: true, OEM: true, CreditsPerMonth: 100, OEMCreditsPerMonth: 10})
		_, other := e.Account(periscope.Account{Company: "Globex", Plan: "enterprise", Enterprise: true, CreditsPerMonth: 100})

		var org struct{ ID string }
		e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]any{"name": "Acme"}).JSON(t, &org)
		if r := e.Do("POST", "/api/v1/enterprise/organizations/"+org.ID+"/domains", key, map[string]any{"domain": "example.com"}); r.Status != 200 && r.Status != 201 {
			t.Fatalf("add domain: %d %s", r.Status, r.Body)
		}

		rc := &receiver{t: t, clock: e.Clock.Now}
		hook := httptest.NewServer(rc)
		defer hook.Close()
		r := e.Do("POST", "/api/v1/enterprise/organizations/"+org.ID+"/webhooks", key, map[string]any{"url": hook.URL + "/hook", "min_severity": "low"})
		var ep struct {
			ID, Secret, Status string
		}
		r.JSON(t, &ep)
		if r.Status != 201 || !strings.HasPrefix(ep.Secret, "whsec_") || ep.Status != "active" {
			t.Fatalf("create webhook: %d %s", r.Status, r.Body)
		}
		rc.secrets = []string{ep.Secret}
		if r := e.Do("GET", "/api/v1/enterprise/organizations/"+org.ID+"/webhooks", key, nil); r.Status != 200 || strings.Contains(string(r.Body), ep.Secret) {
			t.Fatalf("list shows the secret or fails: %d %s", r.Status, r.Body)
		}
		if r := e.Do("GET", "/api/v1/enterprise/organizations/"+org.ID+"/webhooks", other, nil); r.Status != 404 {
			t.Fatalf("another account lists the webhooks: %d", r.Status)
		}
		// A failing endpoint of the same organization: its status shows it.
		broken := &receiver{t: t, clock: e.Clock.Now, status: 500}
		brokenSrv := httptest.NewServer(broken)
		defer brokenSrv.Close()
		var bad struct{ ID string }
		e.Do("POST", "/api/v1/enterprise/organizations/"+org.ID+"/webhooks", key, map[string]any{"url": brokenSrv.URL, "format": "slack", "types": []string{"new_open_port"}}).JSON(t, &bad)

		worker := &alerts.Worker{DB: e.Store, Alerts: alertstore.New(e.Store)}
		disp := &alerts.Dispatcher{Alerts: sealedStore(t, e), Client: hook.Client(), Now: e.Clock.Now}
		step := func() {
			t.Helper()
			if _, err := worker.Step(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := disp.Step(ctx); err != nil {
				t.Fatal(err)
			}
		}

		// The asset's first data is a silent baseline.
		vpn := hostWrite(t, e, nil, host.Host{Host: "vpn.example.com", Domain: "example.com", TLD: "com", Subdomain: "vpn", IPAddress: "192.0.2.10",
			NetworkServices: []host.Service{{Port: 443, Protocol: "tcp", Service: "https"}}}, ledger.Source{Name: "nmap"})
		step()
		if got := rc.take(); len(got) != 0 {
			t.Fatalf("baseline delivered %v", got)
		}
		// Two hours on, RDP opens on the VPN host and a new subdomain appears.
		e.Clock.Advance(2 * time.Hour)
		obs := host.Host{Host: "vpn.example.com", IPAddress: "192.0.2.10", NetworkServices: []host.Service{
			{Port: 443, Protocol: "tcp", Service: "https"}, {Port: 3389, Protocol: "tcp", Service: "ms-wbt-server"}}}
		vpn = hostWrite(t, e, &vpn, obs, ledger.Source{Name: "nmap", Ports: []int{443, 3389}})
		hostWrite(t, e, nil, host.Host{Host: "staging.example.com", Domain: "example.com", TLD: "com", Subdomain: "staging"}, ledger.Source{Name: "ct"})
		// A host of another domain is nobody's business here.
		hostWrite(t, e, nil, host.Host{Host: "www.example.org", Domain: "example.org", TLD: "org", Subdomain: "www"}, ledger.Source{Name: "ct"})
		step()
		got := rc.take()
		if len(got) != 2 {
			t.Fatalf("deliveries: %+v", got)
		}
		types := map[string]string{}
		for _, d := range got {
			data := d.body["data"].(map[string]any)
			types[data["type"].(string)] = data["severity"].(string)
			if d.event != "alert.created" || !strings.HasPrefix(d.id, "msg_") {
				t.Errorf("delivery %+v", d)
			}
		}
		if types["new_open_port"] != "high" || types["new_subdomain_discovered"] != "medium" {
			t.Fatalf("alert types: %v", types)
		}
		var eps []struct {
			ID, Status string
			LastError  string `json:"last_error"`
			Failures   int
		}
		e.Do("GET", "/api/v1/enterprise/organizations/"+org.ID+"/webhooks", key, nil).JSON(t, &eps)
		for _, x := range eps {
			if x.ID == bad.ID && (x.Status != "failing" || x.LastError != "HTTP 500" || x.Failures != 1) {
				t.Fatalf("the failing endpoint's status: %+v", x)
			}
		}

		var list []struct {
			ID, Type, Title, Message, Severity, State, Host string
			IsSeen                                          bool `json:"is_seen"`
			Count                                           int
			Evidence                                        map[string]any
		}
		e.Do("GET", "/api/v1/enterprise/alerts?org="+org.ID+"&type=new_open_port", key, nil).JSON(t, &list)
		if len(list) != 1 || list[0].IsSeen || list[0].Count != 1 || list[0].Evidence["value"] != "3389/tcp" || !strings.Contains(list[0].Message, "192.0.2.10") {
			t.Fatalf("alerts: %+v", list)
		}
		portAlert := list[0].ID
		if r := e.Do("GET", "/api/v1/enterprise/alerts", other, nil); string(r.Body) != "[]\n" {
			t.Fatalf("another account sees %s", r.Body)
		}
		if r := e.Do("GET", "/api/v1/enterprise/alerts?org="+org.ID, other, nil); r.Status != 404 {
			t.Fatalf("another account's org filter: %d", r.Status)
		}
		if r := e.Do("GET", "/api/v1/enterprise/alerts?severity=urgent", key, nil); r.Status != 400 {
			t.Fatalf("bad severity: %d", r.Status)
		}
		if r := e.Do("POST", "/api/v1/enterprise/alerts/"+portAlert+"/acknowledge", other, nil); r.Status != 404 {
			t.Fatalf("another account acknowledges: %d %s", r.Status, r.Body)
		}
		if r := e.Do("POST", "/api/v1/enterprise/alerts/00000000-0000-4000-8000-000000000000/resolve", key, nil); r.Status != 404 {
			t.Fatalf("unknown alert: %d", r.Status)
		}
		var acked struct {
			State  string
			IsSeen bool `json:"is_seen"`
		}
		e.Do("POST", "/api/v1/enterprise/alerts/"+portAlert+"/acknowledge", key, nil).JSON(t, &acked)
		if acked.State != "acknowledged" || !acked.IsSeen {
			t.Fatalf("acknowledge: %+v", acked)
		}

		// RDP closes (missed by two full scans) and opens again: the
		// closure alerts, the reopening repeats the acknowledged alert.
		closed := host.Host{Host: "vpn.example.com", IPAddress: "192.0.2.10", NetworkServices: []host.Service{{Port: 443, Protocol: "tcp", Service: "https"}}}
		for range 2 {
			e.Clock.Advance(time.Hour)
			vpn = hostWrite(t, e, &vpn, closed, ledger.Source{Name: "nmap", AllPorts: true})
		}
		e.Clock.Advance(time.Hour)
		vpn = hostWrite(t, e, &vpn, obs, ledger.Source{Name: "nmap", Ports: []int{443, 3389}})
		step()
		got = rc.take()
		if len(got) != 1 || got[0].body["data"].(map[string]any)["type"] != "port_closed" {
			t.Fatalf("deliveries after close and reopen: %+v", got)
		}
		e.Do("GET", "/api/v1/enterprise/alerts?type=new_open_port&state=acknowledged", key, nil).JSON(t, &list)
		if len(list) != 1 || list[0].Count != 2 {
			t.Fatalf("the repeat was not deduplicated: %+v", list)
		}
		e.Do("POST", "/api/v1/enterprise/alerts/"+portAlert+"/resolve", key, nil).JSON(t, &acked)
		if acked.State != "resolved" {
			t.Fatal(acked)
		}
		e.Do("POST", "/api/v1/enterprise/alerts/"+portAlert+"/suppress", key, nil).JSON(t, &acked)
		if acked.State != "suppressed" {
			t.Fatal(acked)
		}

		// The ledger search: domain inferred, 1 OEM credit; bad input is
		// a 400 and free.
		var search struct {
			Query        struct{ Type, Value string }
			TotalResults int `json:"total_results"`
			Results      []struct {
				Host, Category, Change, Value, Timestamp string
				OldValue                                 string `json:"old_value"`
			}
		}
		r = e.Do("POST", "/api/v1/oem/alerts/search", key, map[string]any{"query": "example.com"})
		r.JSON(t, &search)
		if r.Status != 200 || search.Query.Type != "domain" || search.TotalResults != 5 || search.Results[0].Category != "port" || search.Results[0].Change != "new" {
			t.Fatalf("domain search: %d %s", r.Status, r.Body)
		}
		if search.Results[0].Timestamp != e.Clock.Now().UTC().Format("2006-01-02 15:04:05") {
			t.Fatalf("timestamp %q", search.Results[0].Timestamp)
		}
		e.Do("POST", "/api/v1/oem/alerts/search", key, map[string]any{"query": "vpn.example.com", "to": "22/11/2026"}).JSON(t, &search)
		if search.Query.Type != "host" || search.TotalResults != 4 || search.Results[1].OldValue != "3389/tcp" || search.Results[3].Category != "host" {
			t.Fatalf("host search: %+v", search)
		}
		e.Do("POST", "/api/v1/oem/alerts/search", key, map[string]any{"query": "vpn.example.com", "from": "23-11-2026"}).JSON(t, &search)
		if search.TotalResults != 0 || len(search.Results) != 0 {
			t.Fatalf("host search from tomorrow: %+v", search)
		}
		credits := func() float64 {
			var c struct{ Response map[string]any }
			e.Do("POST", "/api/v1/oem/account/credits", key, map[string]any{}).JSON(t, &c)
			return c.Response["credits_remaining"].(float64)
		}
		before := credits()
		for _, b := range []any{map[string]any{}, map[string]any{"query": "exa mple"}, map[string]any{"query": "example.com", "type": "ip"},
			map[string]any{"query": "example.com", "from": "31/02/2026"}, map[string]any{"query": "192.0.2.1", "type": "domain"},
			map[string]any{"query": "example.com", "page": 0}, map[string]any{"query": "a\u0000b.com"}} {
			if r := e.Do("POST", "/api/v1/oem/alerts/search", key, b); r.Status != 400 {
				t.Errorf("%v: %d %s", b, r.Status, r.Body)
			}
		}
		if after := credits(); after != before {
			t.Fatalf("bad input was charged: %v → %v", before, after)
		}

		// Test delivery, rotation (both secrets sign), update and delete.
		var test struct {
			DeliveryID string `json:"delivery_id"`
		}
		r = e.Do("POST", "/api/v1/enterprise/organizations/"+org.ID+"/webhooks/"+ep.ID+"/test", key, nil)
		r.JSON(t, &test)
		if r.Status != 202 {
			t.Fatalf("test: %d %s", r.Status, r.Body)
		}
		step()
		if got := rc.take(); len(got) != 1 || got[0].id != test.DeliveryID || got[0].event != "webhook.test" {
			t.Fatalf("test delivery: %+v", got)
		}
		var rot struct{ Secret string }
		e.Do("POST", "/api/v1/enterprise/organizations/"+org.ID+"/webhooks/"+ep.ID+"/rotate-secret", key, nil).JSON(t, &rot)
		if rot.Secret == ep.Secret || !strings.HasPrefix(rot.Secret, "whsec_") {
			t.Fatalf("rotate: %+v", rot)
		}
		rc.secrets = []string{rot.Secret, ep.Secret}
		e.Do("POST", "/api/v1/enterprise/organizations/"+org.ID+"/webhooks/"+ep.ID+"/test", key, nil)
		step()
		if got := rc.take(); len(got) != 1 || got[0].sigs != 2 {
			t.Fatalf("delivery during rotation: %+v", got)
		}
		var upd struct {
			MinSeverity string `json:"min_severity"`
			Types       []string
		}
		r = e.Do("PATCH", "/api/v1/enterprise/organizations/"+org.ID+"/webhooks/"+ep.ID, key, map[string]any{"min_severity": "critical", "types": []string{"port_closed"}})
		r.JSON(t, &upd)
		if r.Status != 200 || upd.MinSeverity != "critical" || len(upd.Types) != 1 {
			t.Fatalf("update: %d %s", r.Status, r.Body)
		}
		for _, b := range []map[string]any{{"url": "ftp://example.com"}, {"url": "https://user:pw@example.com/"}, {"format": "xml"}, {"types": []string{"nope"}}} {
			if r := e.Do("PATCH", "/api/v1/enterprise/organizations/"+org.ID+"/webhooks/"+ep.ID, key, b); r.Status != 400 {
				t.Errorf("update %v: %d", b, r.Status)
			}
		}
		if r := e.Do("DELETE", "/api/v1/enterprise/organizations/"+org.ID+"/webhooks/"+ep.ID, other, nil); r.Status != 404 {
			t.Fatalf("another account deletes: %d", r.Status)
		}
		if r := e.Do("DELETE", "/api/v1/enterprise/organizations/"+org.ID+"/webhooks/"+ep.ID, key, nil); r.Status != 200 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		if r := e.Do("POST", "/api/v1/enterprise/organizations/"+org.ID+"/webhooks/"+ep.ID+"/test", key, nil); r.Status != 404 {
			t.Fatalf("test of a deleted endpoint: %d", r.Status)
		}
	})
}

// sealedStore is an alerts store on e's database that opens the webhook
// secrets e's API sealed.
func sealedStore(t *testing.T, e *apitest.Env) *alertstore.Store {
	st := alertstore.New(e.Store)
	if _, err := st.UnlockSecrets(context.Background(), apitest.TestSecretsKey(t)); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestWebhookChangesCountInTheChangeLimit: creating, changing and
// test-firing webhook endpoints spend the account's change budget (all its
// keys together), so many keys cannot multiply outbound test deliveries.
func TestWebhookChangesCountInTheChangeLimit(t *testing.T) {
	cfg := api.DefaultConfig()
	cfg.AssetChangeLimit = 4
	eachWith(t, apitest.Options{Config: &cfg}, func(t *testing.T, e *apitest.Env) {
		acct, key := e.Account(periscope.Account{Company: "Hooks", Enterprise: true, CreditsPerMonth: 10})
		p, err := e.Store.Authenticate(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		key2, _, err := e.Store.CreateKey(context.Background(), acct.ID, p.User.ID, "second")
		if err != nil {
			t.Fatal(err)
		}
		var org, ep struct {
			ID string `json:"id"`
		}
		e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]any{"name": "Hooks"}).JSON(t, &org)                                  // 1
		r := e.Do("POST", "/api/v1/enterprise/organizations/"+org.ID+"/webhooks", key, map[string]any{"url": "https://hooks.example.com/in"}) // 2
		if r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &ep)
		test := "/api/v1/enterprise/organizations/" + org.ID + "/webhooks/" + ep.ID + "/test"
		if r := e.Do("POST", test, key, nil); r.Status != 202 { // 3
			t.Fatalf("test: %d %s", r.Status, r.Body)
		}
		if r := e.Do("PATCH", "/api/v1/enterprise/organizations/"+org.ID+"/webhooks/"+ep.ID, key2, map[string]any{"min_severity": "low"}); r.Status != 200 { // 4
			t.Fatalf("update: %d %s", r.Status, r.Body)
		}
		if r := e.Do("POST", test, key2, nil); r.Status != 429 || r.ErrorCode() != "rate_limited" {
			t.Fatalf("a fifth change from another key: %d %s", r.Status, r.Body)
		}
		// Reads are not counted.
		if r := e.Do("GET", "/api/v1/enterprise/organizations/"+org.ID+"/webhooks", key, nil); r.Status != 200 {
			t.Fatalf("list: %d %s", r.Status, r.Body)
		}
	})
}

// TestWebhookEndpointCap: an organization's eleventh endpoint (the default
// --webhook-limit is 10) is a 403 quota_exceeded, and is not stored.
func TestWebhookEndpointCap(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		_, key := e.Account(periscope.Account{Company: "Many Hooks", Enterprise: true, CreditsPerMonth: 10})
		var org struct {
			ID string `json:"id"`
		}
		e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]any{"name": "Hooks"}).JSON(t, &org)
		path := "/api/v1/enterprise/organizations/" + org.ID + "/webhooks"
		for i := range 11 {
			r := e.Do("POST", path, key, map[string]any{"url": fmt.Sprintf("https://hooks.example.com/%d", i)})
			if want := 201; i == 10 && (r.Status != 403 || r.ErrorCode() != "quota_exceeded") || i < 10 && r.Status != want {
				t.Fatalf("endpoint %d: %d %s", i+1, r.Status, r.Body)
			}
		}
		var eps []map[string]any
		e.Do("GET", path, key, nil).JSON(t, &eps)
		if len(eps) != 10 {
			t.Fatalf("%d endpoints stored, want 10", len(eps))
		}
	})
}

// TestAddAssetSaysAlertBaseline: adding a domain or range says how long its
// first data stays silent, in the operator's --alert-baseline; without
// alerts the answer has no such field.
func TestAddAssetSaysAlertBaseline(t *testing.T) {
	cfg := api.DefaultConfig()
	cfg.AlertBaseline = 20 * time.Minute
	eachWith(t, apitest.Options{Config: &cfg}, func(t *testing.T, e *apitest.Env) {
		_, key := e.Account(periscope.Account{Company: "Baseline Co", Enterprise: true, CreditsPerMonth: 10})
		var org struct {
			ID string `json:"id"`
		}
		e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]any{"name": "B"}).JSON(t, &org)
		type answer struct {
			Asset         string `json:"asset"`
			AlertBaseline *struct {
				Seconds int64  `json:"seconds"`
				Message string `json:"message"`
			} `json:"alert_baseline"`
		}
		for _, add := range []struct{ path, field, value string }{{"domains", "domain", "baseline-example.com"}, {"ip-ranges", "ip_range", "8.8.8.0/24"}} {
			var got answer
			r := e.Do("POST", "/api/v1/enterprise/organizations/"+org.ID+"/"+add.path, key, map[string]any{add.field: add.value})
			r.JSON(t, &got)
			if r.Status != 201 || got.AlertBaseline == nil || got.AlertBaseline.Seconds != 1200 || !strings.Contains(got.AlertBaseline.Message, "20 minutes") {
				t.Fatalf("add %s: %d %s", add.value, r.Status, r.Body)
			}
		}
	})
	each(t, func(t *testing.T, e *apitest.Env) {
		_, key := e.Account(periscope.Account{Company: "Quiet Co", Enterprise: true, CreditsPerMonth: 10})
		var org struct {
			ID string `json:"id"`
		}
		e.Do("POST", "/api/v1/enterprise/organizations", key, map[string]any{"name": "Q"}).JSON(t, &org)
		r := e.Do("POST", "/api/v1/enterprise/organizations/"+org.ID+"/domains", key, map[string]any{"domain": "quiet-example.com"})
		if r.Status != 201 || strings.Contains(string(r.Body), "alert_baseline") {
			t.Fatalf("without alerts: %d %s", r.Status, r.Body)
		}
	})
}
