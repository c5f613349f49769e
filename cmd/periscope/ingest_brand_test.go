package main

import (
	"context"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/brand"
	"github.com/periscope-oss/periscope/internal/brandstore"
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
	st, err := store.Open(ctx, dsn, store.Files(schema.Sets()...))
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

// The brand kinds of `periscope ingest` print the run's totals, the
// rejected inputs and what the host index and the monitor did
// (internal/brandingest tests the pipeline itself).
func TestIngestBrandPrintsTotals(t *testing.T) {
	dsn := storetest.DSN(t, "sqlite")
	monitoredStore(t, dsn, "github.com")
	dir := t.TempDir()
	zone := "$ORIGIN com.\n$INCLUDE /etc/passwd\n@ 3600 IN SOA a.gtld. nstld. 1 2 3 4 5\n" +
		"github-login 3600 IN NS ns1.example.net.\nunrelated 3600 IN NS ns1.example.net.\n"
	zf := filepath.Join(dir, "com.zone")
	if err := os.WriteFile(zf, []byte(zone), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, "ingest", "zone", zf, "--database", dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"zone: 1 source(s): read 3, stored 0 (inserted 0, updated 0), unchanged 0, skipped 0, rejected 1, ",
		"  rejected " + zf + ":2:1: $INCLUDE is not supported",
		"brand_findings_new 1, brand_findings_updated 0, brand_matches 1, ",
		"monitored_domains 1, ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, _, err = runCLI(t, "ingest", "certs", "../../internal/cert/testdata/appmattus_google-cert.pem", "--database", dsn)
	if err != nil || !strings.Contains(out, "certs: 1 source(s): read 1, stored 1 (inserted 1,") || !strings.Contains(out, "host_names_inserted ") {
		t.Errorf("ingest certs: %v\n%s", err, out)
	}
	if _, _, err := runCLI(t, "ingest", "zone", filepath.Join(dir, "nope.zone"), "--database", dsn); err == nil || !strings.Contains(err.Error(), "nope.zone") {
		t.Errorf("missing zone file: %v", err)
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
