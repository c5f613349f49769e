package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/keyfile"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// e2eAlert is an alert as GET /enterprise/alerts shows it.
type e2eAlert struct {
	ID, Type, Title, Message, Host, Domain, Severity string
	Count                                            int64
	Evidence                                         json.RawMessage
}

// TestVulnerabilityAndCredentialAlertsEndToEnd runs serve, ingests a host
// running Apache httpd 2.4.49 with the ingest command, then an NVD record
// and the KEV entry of CVE-2021-41773: a new_vulnerability alert appears in
// GET /enterprise/alerts with its evidence; another host with the product
// grows the same alert (count 2) instead of opening a second. Then a
// combolist with accounts under the organization's domain: one
// compromised_credential alert, emails masked, no password anywhere. The
// domain is claimed, not verified (issue 29): the alert and its webhook
// delivery say masked_reason domain_not_verified, the listing masks the
// passwords; once the operator authorises the domain (org
// authorize-domain, audited) the listing shows them.
func TestVulnerabilityAndCredentialAlertsEndToEnd(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			dsn := storetest.DSN(t, engine)
			s := startServer(t, dsn, "--demo", "--allow-private-targets", "--alert-baseline", "1s", "--alert-feed-interval", "1s")
			ent := demoKeys(t, s.stdout.String())["enterprise"]
			status, body := s.do(t, "POST", "/api/v1/enterprise/organizations", ent, `{"name":"E2E Vulns"}`)
			var org struct{ ID string }
			json.Unmarshal(body, &org)
			if status != 201 && status != 200 || org.ID == "" {
				t.Fatalf("create organization: %d %s", status, body)
			}
			if status, body = s.do(t, "POST", "/api/v1/enterprise/organizations/"+org.ID+"/domains", ent, `{"domain":"periscope-vuln-e2e.com"}`); status != 200 && status != 201 {
				t.Fatalf("add domain: %d %s", status, body)
			}
			ingest := func(kind, name, content string, extra ...string) {
				t.Helper()
				f := writeFile(t, name, content)
				args := append([]string{"ingest", kind, f, "--database", dsn}, extra...)
				if out, stderr, err := runCLI(t, args...); err != nil {
					t.Fatalf("ingest %s: %v\n%s\n%s", kind, err, out, stderr)
				}
			}
			hostDoc := func(name, ip string) string {
				return `{"host":"` + name + `","ip_address":"` + ip + `","network_services":[{"port":443,"protocol":"tcp","service":"https","product":"Apache httpd","version":"2.4.49"}]}` + "\n"
			}
			ingest("hosts", "hosts.jsonl", hostDoc("www.periscope-vuln-e2e.com", "203.0.113.20"))
			time.Sleep(1100 * time.Millisecond) // past the asset's 1 s baseline
			ingest("nvd", "nvd.json", `{"format":"NVD_CVE","version":"2.0","vulnerabilities":[{"cve":{"id":"CVE-2021-41773","published":"2021-10-05T09:15:07.593","lastModified":"2025-02-04T15:15:00.000","vulnStatus":"Analyzed",
				"descriptions":[{"lang":"en","value":"Path traversal in Apache HTTP Server 2.4.49."}],
				"metrics":{"cvssMetricV31":[{"source":"nvd@nist.gov","type":"Primary","cvssData":{"version":"3.1","vectorString":"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N","baseScore":7.5,"baseSeverity":"HIGH"}}]},
				"configurations":[{"nodes":[{"operator":"OR","negate":false,"cpeMatch":[{"vulnerable":true,"criteria":"cpe:2.3:a:apache:http_server:2.4.49:*:*:*:*:*:*:*","matchCriteriaId":"X"}]}]}]}}]}`)
			ingest("kev", "kev.json", `{"title":"CISA Catalog","catalogVersion":"2026.11.26","count":1,"vulnerabilities":[{"cveID":"CVE-2021-41773","vendorProject":"Apache","product":"HTTP Server",
				"vulnerabilityName":"Apache HTTP Server Path Traversal Vulnerability","dateAdded":"2021-11-03","shortDescription":"Path traversal.","requiredAction":"Apply updates.","dueDate":"2021-11-17","knownRansomwareCampaignUse":"Unknown","notes":""}]}`)

			poll := func(typ string, ok func([]e2eAlert) bool) []e2eAlert {
				t.Helper()
				deadline := time.Now().Add(20 * time.Second)
				for {
					status, body := s.do(t, "GET", "/api/v1/enterprise/alerts?org="+org.ID+"&type="+typ, ent, "")
					var list []e2eAlert
					json.Unmarshal(body, &list)
					if status == 200 && ok(list) || time.Now().After(deadline) {
						if status != 200 || !ok(list) {
							_, all := s.do(t, "GET", "/api/v1/enterprise/alerts?org="+org.ID, ent, "")
							t.Fatalf("%s alerts: %d %s\nall alerts: %s\nserver log: %s", typ, status, body, all, s.stderr.String())
						}
						return list
					}
					time.Sleep(time.Second)
				}
			}
			list := poll("new_vulnerability", func(l []e2eAlert) bool { return len(l) == 1 })
			a := list[0]
			for _, want := range []string{"CVE-2021-41773", "CVSS 7.5", "CISA KEV since 2021-11-03", "Apache httpd 2.4.49", "www.periscope-vuln-e2e.com"} {
				if !strings.Contains(a.Title+" "+a.Message, want) {
					t.Errorf("alert lacks %q: %s / %s", want, a.Title, a.Message)
				}
			}
			if a.Severity != "critical" || a.Domain != "periscope-vuln-e2e.com" || !strings.Contains(string(a.Evidence), `"kev":true`) {
				t.Errorf("alert %+v", a)
			}
			// A second host with the product: the same alert, grown.
			ingest("hosts", "hosts2.jsonl", hostDoc("api.periscope-vuln-e2e.com", "203.0.113.21"))
			list = poll("new_vulnerability", func(l []e2eAlert) bool { return len(l) == 1 && l[0].Count == 2 })
			if list[0].ID != a.ID || !strings.Contains(list[0].Message, "api.periscope-vuln-e2e.com") {
				t.Fatalf("after a second host: %+v", list)
			}

			// Dark-web credentials under the organization's domain.
			// The key file serve --demo made, at the default place of the
			// environment serve was given (none).
			key, err := keyfile.Default(dsn, keyfile.Darkweb, func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			rc := &hookReceiver{t: t}
			hook := httptest.NewServer(rc)
			defer hook.Close()
			status, body = s.do(t, "POST", "/api/v1/enterprise/organizations/"+org.ID+"/webhooks", ent, `{"url":"`+hook.URL+`/hook","min_severity":"low","types":["compromised_credential"]}`)
			var ep struct{ Secret string }
			json.Unmarshal(body, &ep)
			if status != 201 {
				t.Fatalf("create webhook: %d %s", status, body)
			}
			rc.mu.Lock()
			rc.secret = ep.Secret
			rc.mu.Unlock()
			ingest("combolist", "combo.txt", "alice.smith@periscope-vuln-e2e.com:Sup3rSecretPw!\nbob@mail.periscope-vuln-e2e.com:hunter2hunter2\ncarol@elsewhere.example:other-pass\n",
				"--breach", "E2EBreach", "--breach-date", "2026-11-01", "--darkweb-key-file", key)
			creds := poll("compromised_credential", func(l []e2eAlert) bool { return len(l) == 1 })
			c := creds[0]
			all := c.Title + c.Message + string(c.Evidence)
			for _, clear := range []string{"Sup3rSecretPw", "hunter2", "alice.smith", "carol", "bob@"} {
				if strings.Contains(all, clear) {
					t.Errorf("the credential alert shows %q: %s", clear, all)
				}
			}
			if !strings.Contains(c.Title, "2 accounts") || !strings.Contains(c.Message, "a***h@periscope-vuln-e2e.com") || !strings.Contains(c.Message, "E2EBreach") {
				t.Errorf("credential alert %+v", c)
			}
			if !strings.Contains(string(c.Evidence), `"masked_reason":"domain_not_verified"`) {
				t.Errorf("credential alert of an unverified domain: %s", c.Evidence)
			}
			deadline := time.Now().Add(20 * time.Second)
			for len(rc.deliveries()) == 0 && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
			}
			ds := rc.deliveries()
			if len(ds) != 1 || !strings.Contains(mustJSON(t, ds[0]), `"masked_reason":"domain_not_verified"`) {
				t.Fatalf("webhook deliveries: %v", ds)
			}
			for _, clear := range []string{"Sup3rSecretPw", "hunter2", "alice.smith", "bob@"} {
				if strings.Contains(mustJSON(t, ds[0]), clear) {
					t.Errorf("the webhook delivery shows %q: %v", clear, ds[0])
				}
			}
			listing := func() []map[string]any {
				t.Helper()
				status, body := s.do(t, "GET", "/api/v1/enterprise/darkweb/compromised-credentials?query=periscope-vuln-e2e.com", ent, "")
				var l struct {
					Results []map[string]any `json:"results"`
				}
				if json.Unmarshal(body, &l); status != 200 || len(l.Results) != 2 {
					t.Fatalf("listing: %d %s", status, body)
				}
				return l.Results
			}
			for _, r := range listing() {
				if r["masked"] != true || r["masked_reason"] != "domain_not_verified" || strings.Contains(r["password"].(string), "Pw") {
					t.Errorf("listing of an unverified domain: %v", r)
				}
			}
			if out, stderr, err := runCLI(t, "org", "authorize-domain", "--database", dsn, org.ID, "periscope-vuln-e2e.com"); err != nil {
				t.Fatalf("authorize-domain: %v\n%s\n%s", err, out, stderr)
			}
			for _, r := range listing() {
				if r["masked"] != false || r["password"] != "Sup3rSecretPw!" && r["password"] != "hunter2hunter2" {
					t.Errorf("listing of a verified domain: %v", r)
				}
			}
			if err := s.stop(); err != nil {
				t.Fatalf("stop: %v\n%s", err, s.stderr.String())
			}
		})
	}
}

// TestServeWebhookSecretsKeyFile: serve creates the secrets key file (mode
// 0600, logged) beside a new SQLite database, webhook secrets are stored
// sealed, and serve refuses to start with another key file.
func TestServeWebhookSecretsKeyFile(t *testing.T) {
	dsn := storetest.DSN(t, "sqlite")
	keyFile := filepath.Join(filepath.Dir(dsn), "periscope-secrets.key")
	s := startServer(t, dsn, "--demo")
	ent := demoKeys(t, s.stdout.String())["enterprise"]
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	if !strings.Contains(s.stderr.String(), "created a new webhook secrets key") {
		t.Errorf("no log line for the new key: %s", s.stderr.String())
	}
	status, body := s.do(t, "POST", "/api/v1/enterprise/organizations", ent, `{"name":"Keys"}`)
	var org struct{ ID string }
	json.Unmarshal(body, &org)
	if status != 201 && status != 200 || org.ID == "" {
		t.Fatalf("create organization: %d %s", status, body)
	}
	status, body = s.do(t, "POST", "/api/v1/enterprise/organizations/"+org.ID+"/webhooks", ent, `{"url":"https://hooks.example.com/x"}`)
	var ep struct{ Secret string }
	json.Unmarshal(body, &ep)
	if status != 201 || !strings.HasPrefix(ep.Secret, "whsec_") {
		t.Fatalf("create webhook: %d %s", status, body)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(dsn)
	if err != nil {
		t.Fatal(err)
	}
	wal, _ := os.ReadFile(dsn + "-wal")
	if strings.Contains(string(raw)+string(wal), strings.TrimPrefix(ep.Secret, "whsec_")) {
		t.Fatal("the database file holds the webhook secret in clear")
	}
	other := filepath.Join(t.TempDir(), "other.key")
	if err := os.WriteFile(other, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := runCLI(t, "serve", "--addr", "127.0.0.1:0", "--database", dsn, "--secrets-key-file", other)
	if err == nil || !strings.Contains(err.Error(), "sealed with another key") {
		t.Fatalf("serve with another key: %v\n%s", err, stderr)
	}
}
