package main

import (
	"context"
	"encoding/pem"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/brand"
	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/ct/cttest"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/schema"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// pemBlocks returns the DER of every CERTIFICATE block of a test file.
func pemBlocks(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return out
		}
		out = append(out, blk.Bytes)
	}
}

// monitoredStore opens the database at dsn with one organization
// monitoring domains.
func monitoredStore(t *testing.T, dsn string, domains ...string) (*store.Store, periscope.Account) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Migrate(ctx, schema.Sets()...); err != nil {
		t.Fatal(err)
	}
	a := periscope.Account{Company: "Brand Co", Enterprise: true}
	if err := st.CreateAccount(ctx, &a, &periscope.User{Email: "b@brand.test"}); err != nil {
		t.Fatal(err)
	}
	o := periscope.Organization{AccountID: a.ID, Name: "Brand"}
	if err := st.CreateOrganization(ctx, &o); err != nil {
		t.Fatal(err)
	}
	for _, d := range domains {
		if _, err := st.AddAsset(ctx, periscope.Asset{OrganizationID: o.ID, AccountID: a.ID, Kind: periscope.AssetDomain, Value: d}); err != nil {
			t.Fatal(err)
		}
	}
	return st, a
}

var summaryLine = regexp.MustCompile(`read (\d+) \w+, inserted (\d+), updated (\d+), unchanged (\d+), rejected (\d+)`)

func summary(t *testing.T, out string) string {
	t.Helper()
	m := summaryLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no summary in:\n%s", out)
	}
	return strings.Join(m[1:], " ")
}

func TestIngestCTLog(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the client's retry backoff")
	}
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			dsn := storetest.DSN(t, engine)
			st, acct := monitoredStore(t, dsn, "letsencrypt.org")
			log := cttest.New()
			defer log.Close()
			le := pemBlocks(t, "../../internal/ct/testdata/netbox-ssl_letsencrypt_chain.pem")
			dc := pemBlocks(t, "../../internal/ct/testdata/netbox-ssl_digicert_chain.pem")
			gh := pemBlocks(t, "../../internal/ct/testdata/appmattus_github-chain.pem")
			for _, chain := range [][][]byte{le, dc} {
				if err := log.AddCert(chain[0], chain[1:]...); err != nil {
					t.Fatal(err)
				}
			}
			log.AddRaw([]byte("not a merkle tree leaf"), nil)
			if err := log.AddCert(le[0], le[1:]...); err != nil { // logged twice, stored once
				t.Fatal(err)
			}
			// A short batch, a 500 and a 429: retried, nothing lost.
			log.SetMaxBatch(2)
			log.Fail(cttest.Fault{Status: 500, Body: "boom"}, cttest.Fault{Status: 429, RetryAfter: "1"})

			out, stderr, err := runCLI(t, "ingest", "ct", log.URL(), "--database", dsn)
			if err != nil {
				t.Fatalf("ingest ct: %v\n%s\n%s", err, out, stderr)
			}
			if got := summary(t, out); got != "4 2 0 1 1" {
				t.Errorf("first run: %s, want read 4 inserted 2 unchanged 1 rejected 1\n%s", got, out)
			}
			if !strings.Contains(out, "entry 2:") || !strings.Contains(out, "1 new certificate links") {
				t.Errorf("summary:\n%s", out)
			}
			certs, n, err := brandstore.New(st).OrgCertificates(context.Background(), brandstore.ListQuery{AccountID: acct.ID, Limit: 10})
			if err != nil || n != 1 || certs[0].Domain != "letsencrypt.org" {
				t.Errorf("linked certificates %d %+v %v", n, certs, err)
			}
			if _, err := hoststore.New(st).Host(context.Background(), "www.digicert.com"); err != nil {
				t.Errorf("SAN name not in the host index: %v", err)
			}

			// The checkpoint: a second run reads only what was appended.
			if err := log.AddCert(gh[0], gh[1:]...); err != nil {
				t.Fatal(err)
			}
			out, _, err = runCLI(t, "ingest", "ct", log.URL(), "--database", dsn)
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(t, out); got != "1 1 0 0 0" {
				t.Errorf("second run: %s, want one new entry\n%s", got, out)
			}

			// The checkpoint is past every entry, the undecodable one included.
			if next, _ := brandstore.New(st).CTCheckpoint(context.Background(), log.URL()); next != 5 {
				t.Errorf("checkpoint %d, want 5", next)
			}
		})
	}
}

func TestIngestCertsZoneCertstream(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			dsn := storetest.DSN(t, engine)
			st, acct := monitoredStore(t, dsn, "google.com", "github.com")
			dir := t.TempDir()
			// Garbage between PEM blocks and a block that is not a certificate.
			leaf, _ := os.ReadFile("../../internal/cert/testdata/appmattus_google-cert.pem")
			bad := "junk before\n" + string(leaf) + "junk between\n-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
			if err := os.WriteFile(filepath.Join(dir, "bad.pem"), []byte(bad), 0o600); err != nil {
				t.Fatal(err)
			}
			out, _, err := runCLI(t, "ingest", "certs", filepath.Join(dir, "bad.pem"), "--database", dsn)
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(t, out); got != "2 1 0 0 1" || !strings.Contains(out, "skipped") || !strings.Contains(out, "malformed certificate") {
				t.Errorf("certs: %s\n%s", got, out)
			}
			if _, n, _ := brandstore.New(st).OrgCertificates(context.Background(), brandstore.ListQuery{AccountID: acct.ID, Limit: 10}); n != 1 {
				t.Errorf("*.google.com certificate not linked: %d", n)
			}

			zone := "$ORIGIN com.\n$INCLUDE /etc/passwd\n@ 3600 IN SOA a.gtld. nstld. 1 2 3 4 5\n" +
				"gooogle 3600 IN NS ns1.example.net.\ngithub-login 3600 IN NS ns1.example.net.\nunrelated 3600 IN NS ns1.example.net.\n"
			zf := filepath.Join(dir, "com.zone")
			if err := os.WriteFile(zf, []byte(zone), 0o600); err != nil {
				t.Fatal(err)
			}
			out, _, err = runCLI(t, "ingest", "zone", zf, "--database", dsn)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, "$INCLUDE is not supported") || !strings.Contains(out, "2 names matched, 2 new findings") {
				t.Errorf("zone:\n%s", out)
			}
			typos, _, _ := brandstore.New(st).Findings(context.Background(), brandstore.ListQuery{AccountID: acct.ID, Kind: brand.TypoSquatting, Limit: 10})
			phish, _, _ := brandstore.New(st).Findings(context.Background(), brandstore.ListQuery{AccountID: acct.ID, Kind: brand.PotentialPhishing, Limit: 10})
			// The other names of google.com's own certificate (google.ca,
			// google.co.uk, ...) are not reported as phishing.
			if len(typos) != 1 || typos[0].Domain != "gooogle.com" || len(phish) != 1 || phish[0].Domain != "github-login.com" ||
				len(typos[0].DNSHistory) != 1 || typos[0].DNS.NS[0] != "ns1.example.net" {
				t.Errorf("findings from the zone: %+v %+v", typos, phish)
			}

			out, _, err = runCLI(t, "ingest", "certstream", "../../internal/ct/testdata/certstream.ndjson", "--database", dsn)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, "bad JSON") || !strings.Contains(out, `unknown message_type "something_else"`) {
				t.Errorf("certstream:\n%s", out)
			}
			if _, err := hoststore.New(st).Host(context.Background(), "b.example.net"); err != nil {
				t.Errorf("certstream names not in the host index: %v", err)
			}

			// Missing inputs are errors naming them.
			if _, _, err := runCLI(t, "ingest", "zone", filepath.Join(dir, "nope.zone"), "--database", dsn); err == nil || !strings.Contains(err.Error(), "nope.zone") {
				t.Errorf("missing zone file: %v", err)
			}
		})
	}
}

func TestPermute(t *testing.T) {
	out, _, err := runCLI(t, "permute", "google.com", "--dictionary", "../../internal/typo/testdata/english.dict", "--tld", "../../internal/typo/testdata/common_tlds.dict")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../internal/typo/testdata/google.com.csv")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		got[l] = true
	}
	for _, l := range strings.Split(strings.TrimSpace(string(want)), "\n") {
		if !got[strings.TrimSpace(l)] {
			t.Errorf("dnstwist row %q missing", l)
		}
	}
	if !strings.HasPrefix(out, "fuzzer,domain\n*original,google.com\n") {
		t.Errorf("header: %.60q", out)
	}
	for _, bad := range [][]string{{"permute", "co.uk"}, {"permute"}, {"permute", strings.Repeat("a", 200) + ".com"}, {"permute", "x.com", "--tld", "/nonexistent"}} {
		if _, _, err := runCLI(t, bad...); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// TestIngestHostsFeedsTheMonitor checks the observe hook of the host index:
// host observations are matched as they are stored, and a name's changing
// DNS answers (the host index's, which merges observations) build its
// history; seeing the same answers again adds nothing.
func TestIngestHostsFeedsTheMonitor(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			dsn := storetest.DSN(t, engine)
			st, acct := monitoredStore(t, dsn, "paypal.com")
			dir := t.TempDir()
			for i, ip := range []string{"192.0.2.1", "192.0.2.1", "192.0.2.2"} {
				f := filepath.Join(dir, "hosts.ndjson")
				line := `{"host":"paypal-login.com","dns":{"a":["` + ip + `"]},"last_seen":` + []string{"1790000000", "1790000001", "1790000002"}[i] + "}\n"
				if err := os.WriteFile(f, []byte(line+`{"host":"www.unrelated.org"}`+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				if out, stderr, err := runCLI(t, "ingest", "hosts", f, "--database", dsn); err != nil {
					t.Fatalf("ingest hosts: %v\n%s\n%s", err, out, stderr)
				}
			}
			fs, _, err := brandstore.New(st).Findings(context.Background(), brandstore.ListQuery{AccountID: acct.ID, Kind: brand.PotentialPhishing, Limit: 10})
			if err != nil || len(fs) != 1 {
				t.Fatalf("findings %+v %v", fs, err)
			}
			h := fs[0].DNSHistory
			if len(h) != 2 || strings.Join(h[0].DNS.A, " ") != "192.0.2.1" || strings.Join(h[1].DNS.A, " ") != "192.0.2.1 192.0.2.2" ||
				h[1].Timestamp != 1790000002 || fs[0].LastSeen != 1790000002 {
				t.Errorf("dns history %+v", h)
			}
		})
	}
}
