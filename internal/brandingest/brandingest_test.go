package brandingest_test

import (
	"context"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/brand"
	"github.com/periscope-oss/periscope/internal/brandingest"
	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/brandwatch"
	"github.com/periscope-oss/periscope/internal/ct/cttest"
	"github.com/periscope-oss/periscope/internal/hostingest"
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

// monitoredStore opens a database of engine with one organization
// monitoring domains.
func monitoredStore(t *testing.T, engine string, domains ...string) (*store.Store, periscope.Account) {
	t.Helper()
	ctx := context.Background()
	st := storetest.Open(t, engine, schema.Sets()...)
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

// ingest runs one source of kind through a new run, as `periscope ingest`
// does, and returns the run.
func ingest(t *testing.T, st *store.Store, kind, src string) (*brandingest.Run, error) {
	t.Helper()
	ctx := context.Background()
	mon := brandwatch.New(st, hoststore.New(st), brandstore.New(st), brandwatch.Options{})
	if err := mon.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	b := brandingest.New(mon, st)
	read, ok := b.Source(kind)
	if !ok {
		t.Fatalf("no reader of %q", kind)
	}
	err := read(ctx, src)
	if err == nil {
		err = b.Flush(ctx)
	}
	b.Finish()
	return b, err
}

// counts is read, inserted, updated, unchanged, rejected.
func counts(s hostingest.Summary) [5]int {
	return [5]int{s.Read, s.Inserted, s.Updated, s.Unchanged, s.Rejected}
}

func TestCTLog(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the client's retry backoff")
	}
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			st, acct := monitoredStore(t, engine, "letsencrypt.org")
			log := cttest.New()
			defer log.Close()
			le := pemBlocks(t, "../ct/testdata/netbox-ssl_letsencrypt_chain.pem")
			dc := pemBlocks(t, "../ct/testdata/netbox-ssl_digicert_chain.pem")
			gh := pemBlocks(t, "../ct/testdata/appmattus_github-chain.pem")
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

			b, err := ingest(t, st, brandingest.CT, log.URL())
			if err != nil {
				t.Fatalf("ingest ct: %v", err)
			}
			if got, want := counts(b.Sum), [5]int{4, 2, 0, 1, 1}; got != want {
				t.Errorf("first run: read, inserted, updated, unchanged, rejected %v, want %v", got, want)
			}
			if len(b.Sum.Rejects) != 1 || !strings.Contains(b.Sum.Rejects[0], "entry 2:") || b.Links != 1 {
				t.Errorf("rejects %q, links %d", b.Sum.Rejects, b.Links)
			}
			certs, n, err := brandstore.New(st).OrgCertificates(ctx, brandstore.ListQuery{AccountID: acct.ID, Limit: 10})
			if err != nil || n != 1 || certs[0].Domain != "letsencrypt.org" {
				t.Errorf("linked certificates %d %+v %v", n, certs, err)
			}
			if _, err := hoststore.New(st).Host(ctx, "www.digicert.com"); err != nil {
				t.Errorf("SAN name not in the host index: %v", err)
			}

			// The checkpoint: a second run reads only what was appended.
			if err := log.AddCert(gh[0], gh[1:]...); err != nil {
				t.Fatal(err)
			}
			b, err = ingest(t, st, brandingest.CT, log.URL())
			if err != nil {
				t.Fatal(err)
			}
			if got, want := counts(b.Sum), [5]int{1, 1, 0, 0, 0}; got != want {
				t.Errorf("second run: %v, want %v (one new entry)", got, want)
			}

			// The checkpoint is past every entry, the undecodable one included.
			if next, _ := brandstore.New(st).CTCheckpoint(ctx, log.URL()); next != 5 {
				t.Errorf("checkpoint %d, want 5", next)
			}
		})
	}
}

func TestCertsZoneCertstream(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			st, acct := monitoredStore(t, engine, "google.com", "github.com")
			dir := t.TempDir()
			// Garbage between PEM blocks and a block that is not a certificate.
			leaf, err := os.ReadFile("../cert/testdata/appmattus_google-cert.pem")
			if err != nil {
				t.Fatal(err)
			}
			bad := "junk before\n" + string(leaf) + "junk between\n-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
			if err := os.WriteFile(filepath.Join(dir, "bad.pem"), []byte(bad), 0o600); err != nil {
				t.Fatal(err)
			}
			b, err := ingest(t, st, brandingest.Certs, filepath.Join(dir, "bad.pem"))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := counts(b.Sum), [5]int{2, 1, 0, 0, 1}; got != want || len(b.Skips) == 0 ||
				len(b.Sum.Rejects) != 1 || !strings.Contains(b.Sum.Rejects[0], "malformed certificate") {
				t.Errorf("certs: %v, want %v; skips %q, rejects %q", got, want, b.Skips, b.Sum.Rejects)
			}
			if _, n, _ := brandstore.New(st).OrgCertificates(ctx, brandstore.ListQuery{AccountID: acct.ID, Limit: 10}); n != 1 {
				t.Errorf("*.google.com certificate not linked: %d", n)
			}

			zone := "$ORIGIN com.\n$INCLUDE /etc/passwd\n@ 3600 IN SOA a.gtld. nstld. 1 2 3 4 5\n" +
				"gooogle 3600 IN NS ns1.example.net.\ngithub-login 3600 IN NS ns1.example.net.\nunrelated 3600 IN NS ns1.example.net.\n"
			zf := filepath.Join(dir, "com.zone")
			if err := os.WriteFile(zf, []byte(zone), 0o600); err != nil {
				t.Fatal(err)
			}
			b, err = ingest(t, st, brandingest.Zone, zf)
			if err != nil {
				t.Fatal(err)
			}
			if len(b.Sum.Rejects) != 1 || !strings.Contains(b.Sum.Rejects[0], "$INCLUDE is not supported") || b.Match.Matched != 2 || b.Match.Inserted != 2 {
				t.Errorf("zone: rejects %q, matched %d, new findings %d", b.Sum.Rejects, b.Match.Matched, b.Match.Inserted)
			}
			typos, _, _ := brandstore.New(st).Findings(ctx, brandstore.ListQuery{AccountID: acct.ID, Kind: brand.TypoSquatting, Limit: 10})
			phish, _, _ := brandstore.New(st).Findings(ctx, brandstore.ListQuery{AccountID: acct.ID, Kind: brand.PotentialPhishing, Limit: 10})
			// The other names of google.com's own certificate (google.ca,
			// google.co.uk, ...) are not reported as phishing.
			if len(typos) != 1 || typos[0].Domain != "gooogle.com" || len(phish) != 1 || phish[0].Domain != "github-login.com" ||
				len(typos[0].DNSHistory) != 1 || typos[0].DNS.NS[0] != "ns1.example.net" {
				t.Errorf("findings from the zone: %+v %+v", typos, phish)
			}

			b, err = ingest(t, st, brandingest.Certstream, "../ct/testdata/certstream.ndjson")
			if err != nil {
				t.Fatal(err)
			}
			rejects := strings.Join(b.Sum.Rejects, "\n")
			if !strings.Contains(rejects, "bad JSON") || !strings.Contains(rejects, `unknown message_type "something_else"`) {
				t.Errorf("certstream rejects:\n%s", rejects)
			}
			if _, err := hoststore.New(st).Host(ctx, "b.example.net"); err != nil {
				t.Errorf("certstream names not in the host index: %v", err)
			}

			// Missing inputs are errors naming them.
			if _, err := ingest(t, st, brandingest.Zone, filepath.Join(dir, "nope.zone")); err == nil || !strings.Contains(err.Error(), "nope.zone") {
				t.Errorf("missing zone file: %v", err)
			}
		})
	}
}

// TestCertsSearchableWithoutWatcher checks that certificates read by
// `ingest certs` are found by the certificate name search of the host
// index (what /nexus/cloud-certs/dns-search answers from) by any of their
// names, with no organization watching their domains, on every engine.
func TestCertsSearchableWithoutWatcher(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			st, _ := monitoredStore(t, engine) // no monitored domain
			if _, err := ingest(t, st, brandingest.Certs, "../cert/testdata/netbox-ssl_digicert_leaf.pem"); err != nil {
				t.Fatal(err)
			}
			hs := hoststore.New(st)
			for _, prefix := range []string{"digicert.c", "www.digicert.com", "DIGICERT.COM"} {
				got, err := hs.CertNamePrefix(ctx, prefix, 10)
				if err != nil || len(got) != 1 {
					t.Fatalf("prefix %q: %d hosts, %v", prefix, len(got), err)
				}
				if got[0].Cert.SHA256Fingerprint == "" || len(got[0].Cert.DNSNames) < 2 {
					t.Errorf("prefix %q: host %s cert %+v", prefix, got[0].Host, got[0].Cert)
				}
			}
		})
	}
}
