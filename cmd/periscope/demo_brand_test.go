package main

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/ct/cttest"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// TestServeDemoBrand checks that the demo enterprise organization has
// certificates, typosquats and phishing candidates, through the real server.
func TestServeDemoBrand(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			s := startServer(t, storetest.DSN(t, engine), "--demo")
			s.client.Transport = apitest.Validator(t, fetchOpenAPI(t, s.base)).Transport(http.DefaultTransport)
			keys := demoKeys(t, s.stdout.String())
			want := map[string]string{
				"/api/v1/enterprise/darkweb/typosquatting":               "githuh.com",
				"/api/v1/enterprise/darkweb/potential-phishing?q=github": "github-login.com",
				"/api/v1/enterprise/certificates?q=letsencrypt":          "letsencrypt.org",
			}
			for path, name := range want {
				status, body := s.do(t, "GET", path, keys["enterprise"], "")
				var l struct {
					TotalResults int `json:"total_results"`
					Results      struct {
						Items []map[string]any `json:"items"`
					} `json:"results"`
				}
				if err := json.Unmarshal(body, &l); err != nil || status != 200 || l.TotalResults == 0 {
					t.Fatalf("%s: %d %s", path, status, body)
				}
				found := false
				for _, it := range l.Results.Items {
					found = found || it["domain"] == name || it["domain_name"] == name
				}
				if !found {
					t.Errorf("%s: %s not listed: %s", path, name, body)
				}
			}
			if status, body := s.do(t, "GET", "/api/v1/enterprise/darkweb/typosquatting", keys["free"], ""); status != 403 {
				t.Errorf("free account: %d %s", status, body)
			}
		})
	}
}

// TestServeFollowsCTAndReconcilesOnNudge runs serve with a local CT log:
// the follower worker stores what the log holds, adding a domain through
// the API links those certificates at once (the monitor is nudged; its
// poll is an hour), and serve stops cleanly.
func TestServeFollowsCTAndReconcilesOnNudge(t *testing.T) {
	log := cttest.New()
	defer log.Close()
	chain := pemBlocks(t, "../../internal/ct/testdata/appmattus_bloomberg.pem")
	if err := log.AddCert(chain[0]); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, storetest.DSN(t, "sqlite"), "--demo", "--allow-private-targets", "--ct-logs", log.URL(), "--ct-poll", "50ms", "--brand-poll", "1h")
	keys := demoKeys(t, s.stdout.String())
	deadline := time.Now().Add(20 * time.Second)
	for {
		status, _ := s.do(t, "GET", "/api/v1/host/wmkt1.cirrus.bloomberg.com", keys["free"], "")
		if status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the CT entry never reached the host index (%d)\n%s", status, s.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, body := s.do(t, "GET", "/api/v1/enterprise/organizations", keys["enterprise"], "")
	var orgs []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &orgs); err != nil || len(orgs) == 0 {
		t.Fatalf("organizations: %s", body)
	}
	if status, body := s.do(t, "POST", "/api/v1/enterprise/organizations/"+orgs[0].ID+"/domains", keys["enterprise"], `{"domain":"bloomberg.com"}`); status != 201 {
		t.Fatalf("add domain: %d %s", status, body)
	}
	for {
		_, body := s.do(t, "GET", "/api/v1/enterprise/certificates?q=bloomberg", keys["enterprise"], "")
		if strings.Contains(string(body), `"domain_name":"wmkt1.cirrus.bloomberg.com"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the certificate was not linked after adding the domain: %s", body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// bloomberg.co.uk, blomberggovernment.com, ... share the certificate:
	// they are Bloomberg's, not phishing.
	if _, body := s.do(t, "GET", "/api/v1/enterprise/darkweb/potential-phishing?q=blo", keys["enterprise"], ""); !strings.Contains(string(body), `"total_query_results":0`) {
		t.Errorf("phishing: %s", body)
	}
	if err := s.stop(); err != nil {
		t.Errorf("serve did not stop cleanly: %v", err)
	}
}

func TestServeBrandFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--ct-poll", "0s"}, nil, "--ct-poll must be positive"},
		{nil, map[string]string{"PERISCOPE_BRAND_POLL": "soon"}, "PERISCOPE_BRAND_POLL must be a positive duration"},
		{[]string{"--brand-dictionary", "/nonexistent/words"}, nil, "--brand-dictionary"},
		{[]string{"--ct-logs", "ftp://log.example"}, nil, "--ct-logs"},
	} {
		var out, errb strings.Builder
		args := append([]string{"serve", "--addr", "127.0.0.1:0", "--database", filepath.Join(t.TempDir(), "db")}, c.args...)
		err := run(context.Background(), args, func(k string) string { return c.env[k] }, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %v: %v, want an error containing %q", c.args, c.env, err, c.want)
		}
	}
}
