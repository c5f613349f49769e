package main

import (
	"context"
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/scanstore"
	"github.com/periscope-oss/periscope/internal/schema"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// TestOrgAuthorizesAssets: the operator verifies a domain and authorises
// a range; each is recorded in the account's audit log.
func TestOrgAuthorizesAssets(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) { testOrgAuthorizesAssets(t, engine) })
	}
}

func testOrgAuthorizesAssets(t *testing.T, engine string) {
	ctx := context.Background()
	db := storetest.DSN(t, engine)
	d := "--database=" + db
	if _, _, err := runCLI(t, "migrate", d); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, db, store.Files(schema.Sets()...))
	if err != nil {
		t.Fatal(err)
	}
	a := periscope.Account{Company: "Acme", Enterprise: true}
	if err := st.CreateAccount(ctx, &a, &periscope.User{Email: "a@acme.test"}); err != nil {
		t.Fatal(err)
	}
	o := periscope.Organization{AccountID: a.ID, Name: "Acme"}
	if err := st.CreateOrganization(ctx, &o); err != nil {
		t.Fatal(err)
	}
	for _, as := range []periscope.Asset{{Kind: periscope.AssetDomain, Value: "acme.com"}, {Kind: periscope.AssetIPRange, Value: "8.8.4.0/24"}} {
		as.OrganizationID, as.AccountID = o.ID, a.ID
		if _, err := st.AddAsset(ctx, as); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	if _, _, err := runCLI(t, "org", "authorize-domain", d, o.ID, "ACME.com."); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "org", "authorize-range", d, o.ID, "8.8.4.7/24"); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, "org", "assets", d, o.ID)
	if err != nil || !strings.Contains(out, "acme.com    true    "+scanstore.MethodOperator) || !strings.Contains(out, "8.8.4.0/24  true    operator") {
		t.Fatalf("assets: %v\n%s", err, out)
	}
	st, err = store.Open(ctx, db, store.Files(schema.Sets()...))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	logs, n, err := st.AuditLogs(ctx, store.AuditFilter{AccountID: a.ID, Page: 1, PerPage: 10})
	if err != nil || n != 2 {
		t.Fatalf("audit: %d records, %v", n, err)
	}
	for i, want := range []string{"periscope org authorize-range", "periscope org authorize-domain"} {
		if l := logs[i]; l.Endpoint != want || l.KeyPrefix != "operator" || l.Method != "CLI" || !strings.Contains(string(l.Request), o.ID) {
			t.Errorf("audit record %d: %+v %s", i, l, l.Request)
		}
	}
	for _, bad := range [][]string{
		{"org", "verify-domain", d, o.ID, "other.com"},
		{"org", "authorize-range", d, o.ID, "1.1.1.0/24"},
		{"org", "verify-domain", d, "00000000-0000-4000-8000-000000000000", "acme.com"},
		{"org", "nope", d},
	} {
		if _, _, err := runCLI(t, bad...); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
