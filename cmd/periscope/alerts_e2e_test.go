package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/alerts"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// hookReceiver is a loopback webhook endpoint that verifies every delivery
// with the endpoint's secret.
type hookReceiver struct {
	t      *testing.T
	mu     sync.Mutex
	secret string
	got    []map[string]any
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := alerts.Verify(h.secret, r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp"), r.Header.Get("webhook-signature"), body, time.Now(), 5*time.Minute); err != nil {
		h.t.Errorf("delivery does not verify: %v", err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		h.t.Errorf("delivery is not JSON: %s", body)
	}
	h.got = append(h.got, m)
	w.WriteHeader(http.StatusNoContent)
}

func (h *hookReceiver) deliveries() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]map[string]any(nil), h.got...)
}

// TestAlertsServeEndToEnd runs serve, ingests a scan with the ingest
// command (another "process" on the same database), ingests it again with
// a new open port, and follows the change through the ledger search, the
// enterprise alert list and a signed webhook POST to a loopback receiver.
func TestAlertsServeEndToEnd(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			dsn := storetest.DSN(t, engine)
			s := startServer(t, dsn, "--demo", "--allow-private-targets", "--alert-baseline", "1s")
			keys := demoKeys(t, s.stdout.String())
			ent, oem := keys["enterprise"], keys["oem"]

			status, body := s.do(t, "POST", "/api/v1/enterprise/organizations", ent, `{"name":"E2E Alerts"}`)
			var org struct{ ID string }
			json.Unmarshal(body, &org)
			if status != 201 && status != 200 || org.ID == "" {
				t.Fatalf("create organization: %d %s", status, body)
			}
			if status, body = s.do(t, "POST", "/api/v1/enterprise/organizations/"+org.ID+"/domains", ent, `{"domain":"periscope-e2e.com"}`); status != 200 && status != 201 {
				t.Fatalf("add domain: %d %s", status, body)
			}
			rc := &hookReceiver{t: t}
			hook := httptest.NewServer(rc)
			defer hook.Close()
			status, body = s.do(t, "POST", "/api/v1/enterprise/organizations/"+org.ID+"/webhooks", ent, `{"url":"`+hook.URL+`/hook","min_severity":"low"}`)
			var ep struct{ ID, Secret string }
			json.Unmarshal(body, &ep)
			if status != 201 || !strings.HasPrefix(ep.Secret, "whsec_") {
				t.Fatalf("create webhook: %d %s", status, body)
			}
			rc.mu.Lock()
			rc.secret = ep.Secret
			rc.mu.Unlock()

			scan := func(ports ...string) {
				t.Helper()
				var b strings.Builder
				for _, p := range ports {
					b.WriteString(`{"host":"vpn.periscope-e2e.com","ip":"203.0.113.10","port":` + p + `,"protocol":"tcp","tls":false}` + "\n")
				}
				f := writeFile(t, "naabu.jsonl", b.String())
				if out, stderr, err := runCLI(t, "ingest", "naabu", f, "--database", dsn); err != nil {
					t.Fatalf("ingest: %v\n%s\n%s", err, out, stderr)
				}
			}
			scan("443")
			time.Sleep(1100 * time.Millisecond) // past the asset's 1 s baseline
			scan("443", "3389")

			// The ledger: the host's new row, then the new port.
			status, body = s.do(t, "POST", "/api/v1/oem/alerts/search", oem, `{"query":"periscope-e2e.com"}`)
			var search struct {
				Query   struct{ Type string } `json:"query"`
				Total   int                   `json:"total_results"`
				Results []struct {
					Host, Category, Change, Value string
				} `json:"results"`
			}
			json.Unmarshal(body, &search)
			if status != 200 || search.Query.Type != "domain" || search.Total != 2 ||
				search.Results[0].Category != "port" || search.Results[0].Change != "new" || search.Results[0].Value != "3389/tcp" ||
				search.Results[1].Category != "host" || search.Results[1].Value != "vpn.periscope-e2e.com" {
				t.Fatalf("ledger search: %d %s", status, body)
			}

			// The rules worker turns the new port into an alert, and the
			// dispatcher posts it to the receiver.
			var list []struct {
				ID, Type, Host, Message string
				IsSeen                  bool `json:"is_seen"`
			}
			deadline := time.Now().Add(20 * time.Second)
			for {
				status, body = s.do(t, "GET", "/api/v1/enterprise/alerts?org="+org.ID, ent, "")
				list = nil
				json.Unmarshal(body, &list)
				if status == 200 && len(list) > 0 && len(rc.deliveries()) > 0 || time.Now().After(deadline) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if status != 200 || len(list) != 1 || list[0].Type != "new_open_port" || list[0].Host != "vpn.periscope-e2e.com" || !strings.Contains(list[0].Message, "3389") || list[0].IsSeen {
				t.Fatalf("alerts: %d %s", status, body)
			}
			ds := rc.deliveries()
			if len(ds) != 1 || !strings.Contains(mustJSON(t, ds[0]), "3389") || !strings.Contains(mustJSON(t, ds[0]), "new_open_port") {
				t.Fatalf("webhook deliveries: %v", ds)
			}
			if err := s.stop(); err != nil {
				t.Fatalf("stop: %v\n%s", err, s.stderr.String())
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
