package brandwatch_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/periscope-oss/periscope/internal/brand"
	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/brandwatch"
	"github.com/periscope-oss/periscope/internal/cert"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// newCert issues a self-signed certificate for names and parses it with
// the real parser.
func newCert(t *testing.T, cn string, names ...string) cert.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"Test"}},
		NotBefore:    time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:     time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
		DNSNames:     names,
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cert.Parse(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type fixture struct {
	st         *store.Store
	bs         *brandstore.Store
	acct, othr periscope.Account
	org, org2  periscope.Organization
	other      periscope.Organization
}

func setup(t *testing.T, st *store.Store, bs *brandstore.Store) fixture {
	t.Helper()
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	st.Now = func() time.Time { return now }
	f := fixture{st: st, bs: bs}
	for _, a := range []*periscope.Account{&f.acct, &f.othr} {
		a.Company = "co-" + time.Now().Format("150405.000000000")
		a.Enterprise = true
		u := periscope.User{Email: a.Company + "@example.com"}
		if err := st.CreateAccount(ctx, a, &u); err != nil {
			t.Fatal(err)
		}
	}
	mk := func(o *periscope.Organization, acct string) {
		o.AccountID, o.Name = acct, "org"
		if err := st.CreateOrganization(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	mk(&f.org, f.acct.ID)
	mk(&f.org2, f.acct.ID)
	mk(&f.other, f.othr.ID)
	return f
}

func (f fixture) add(t *testing.T, o periscope.Organization, domain string) {
	t.Helper()
	if _, err := f.st.AddAsset(context.Background(), periscope.Asset{OrganizationID: o.ID, AccountID: o.AccountID, Kind: periscope.AssetDomain, Value: domain}); err != nil {
		t.Fatal(err)
	}
}

func (f fixture) findings(t *testing.T, acct, kind string) map[string]brandstore.Finding {
	t.Helper()
	fs, total, err := f.bs.Findings(context.Background(), brandstore.ListQuery{AccountID: acct, Kind: kind, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if total != len(fs) {
		t.Fatalf("total %d, listed %d", total, len(fs))
	}
	out := map[string]brandstore.Finding{}
	for _, x := range fs {
		out[x.Domain] = x
	}
	return out
}

func keys(m map[string]brandstore.Finding) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestWatcherLifecycle(t *testing.T) {
	each(t, func(t *testing.T, st *store.Store, hs *hoststore.Store, bs *brandstore.Store) {
		ctx := context.Background()
		f := setup(t, st, bs)
		// Data observed before anyone monitors paypal.com.
		if _, err := hs.UpsertHosts(ctx, []host.Host{
			{Host: "paypal-login.com", DNS: host.DNS{A: []string{"203.0.113.7"}}},
			{Host: "paypall.com"},
			{Host: "www.example.org"},
		}); err != nil {
			t.Fatal(err)
		}
		old := newCert(t, "www.paypal.com", "www.paypal.com", "paypal.com")
		m := brandwatch.New(st, hs, bs, brandwatch.Options{})
		if _, err := m.IngestCerts(ctx, []brandstore.SeenCert{{Cert: old, Source: "test"}}); err != nil {
			t.Fatal(err)
		}

		// Adding the domain backfills: stored names are matched, stored
		// certificates linked.
		f.add(t, f.org, "paypal.com")
		f.add(t, f.other, "example.org")
		if err := m.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		if got := m.Brands(); !slices.Equal(got, []string{"example.org", "paypal.com"}) {
			t.Fatalf("brands %v", got)
		}
		phish := f.findings(t, f.acct.ID, brand.PotentialPhishing)
		typos := f.findings(t, f.acct.ID, brand.TypoSquatting)
		if diff := cmp.Diff([]string{"paypal-login.com"}, keys(phish)); diff != "" {
			t.Errorf("phishing after backfill (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"paypall.com"}, keys(typos)); diff != "" {
			t.Errorf("typosquatting after backfill (-want +got):\n%s", diff)
		}
		p := phish["paypal-login.com"]
		if p.OrganizationID != f.org.ID || p.BaseDomain != "paypal.com" || p.Score <= 0 || p.Reason == "" ||
			len(p.DNSHistory) != 1 || !slices.Equal(p.DNS.A, []string{"203.0.113.7"}) {
			t.Errorf("finding %+v", p)
		}
		if typos["paypall.com"].Fuzzer == "" {
			t.Errorf("typosquatting finding without fuzzer: %+v", typos["paypall.com"])
		}
		certs, n, err := bs.OrgCertificates(ctx, brandstore.ListQuery{AccountID: f.acct.ID, Limit: 10})
		if err != nil || n != 1 || certs[0].SHA256 != old.SHA256 || certs[0].Domain != "www.paypal.com" {
			t.Fatalf("certificates after backfill: %d %+v %v", n, certs, err)
		}

		// New certificates are matched as they arrive; their names enter
		// the host index.
		c := newCert(t, "paypal.secure-account.xyz", "paypal.secure-account.xyz", "paypa1.com")
		// The organization's own certificate: its other names are the
		// organization's, never findings.
		own := newCert(t, "shop.paypal.com", "shop.paypal.com", "paypal-billing.com")
		res, err := m.IngestCerts(ctx, []brandstore.SeenCert{{Cert: c, Seen: 1790000000}, {Cert: c}, {Cert: own}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Certs.Inserted != 2 || res.Certs.Unchanged != 1 || res.Links != 1 || res.Match.Inserted != 2 {
			t.Errorf("ingest result %+v", res)
		}
		if _, ok := f.findings(t, f.acct.ID, brand.PotentialPhishing)["paypal-billing.com"]; ok {
			t.Errorf("a name of the organization's own certificate was reported")
		}
		if _, err := hs.Host(ctx, "paypal.secure-account.xyz"); err != nil {
			t.Errorf("SAN name not in the host index: %v", err)
		}
		phish = f.findings(t, f.acct.ID, brand.PotentialPhishing)
		if _, ok := phish["paypal.secure-account.xyz"]; !ok {
			t.Errorf("phishing %v", keys(phish))
		}
		if _, ok := f.findings(t, f.acct.ID, brand.TypoSquatting)["paypa1.com"]; !ok {
			t.Errorf("paypa1.com not reported")
		}

		// DNS answers seen later are kept as history.
		for _, a := range []string{"198.51.100.1", "198.51.100.1", "198.51.100.2"} {
			if _, err := m.Observe(ctx, []brandwatch.Observation{{Name: "paypal-login.com", DNS: host.DNS{A: []string{a}}, Seen: 1800000000}}); err != nil {
				t.Fatal(err)
			}
		}
		p = f.findings(t, f.acct.ID, brand.PotentialPhishing)["paypal-login.com"]
		if len(p.DNSHistory) != 3 || p.DNS.A[0] != "198.51.100.2" || p.LastSeen != 1800000000 || p.DNSHistory[1].Date != "15-01-2027" {
			t.Errorf("dns history %+v", p)
		}

		// Invalid names are counted and skipped, the watcher goes on; a
		// mixed-script homograph (Cyrillic а) is reported as a look-alike.
		bad := []string{"a..b", strings.Repeat("a", 200) + ".com", "pаypal-login.com", "", "paypal-verify.net"}
		if r, err := m.ObserveNames(ctx, bad); err != nil || r.Invalid != 3 || r.Matched != 2 {
			t.Errorf("hostile names: %+v %v", r, err)
		}

		// Tenancy: the other account sees none of it.
		if got := f.findings(t, f.othr.ID, brand.PotentialPhishing); len(got) != 0 {
			t.Errorf("other account sees %v", keys(got))
		}
		if _, n, _ := bs.OrgCertificates(ctx, brandstore.ListQuery{AccountID: f.othr.ID, Limit: 10}); n != 0 {
			t.Errorf("other account sees %d certificates", n)
		}

		// Removing the domain stops matching.
		if err := st.RemoveAsset(ctx, periscope.Asset{OrganizationID: f.org.ID, AccountID: f.acct.ID, Kind: periscope.AssetDomain, Value: "paypal.com"}); err != nil {
			t.Fatal(err)
		}
		if err := m.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		if r, err := m.ObserveNames(ctx, []string{"paypal-verify.com"}); err != nil || r.Matched != 0 {
			t.Errorf("matched after removal: %+v %v", r, err)
		}

		// Deleting an organization deletes its findings.
		f.add(t, f.org2, "paypal.com")
		if err := m.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		count := func() int {
			_, n, err := bs.Findings(ctx, brandstore.ListQuery{AccountID: f.acct.ID, Kind: brand.PotentialPhishing, Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		before := count()
		if before != 6 {
			t.Errorf("%d phishing findings with paypal.com in two organizations, want 6 (4 + 2 backfilled from the host index)", before)
		}
		if err := st.DeleteOrganization(ctx, f.acct.ID, f.org2.ID); err != nil {
			t.Fatal(err)
		}
		if after := count(); after != 4 {
			t.Errorf("findings %d before deleting the organization, %d after, want 4", before, after)
		}
	})
}

func TestSearchOnDemand(t *testing.T) {
	each(t, func(t *testing.T, st *store.Store, hs *hoststore.Store, bs *brandstore.Store) {
		ctx := context.Background()
		if _, err := hs.UpsertHosts(ctx, []host.Host{
			{Host: "githuh.com", DNS: host.DNS{A: []string{"203.0.113.9"}}},
			{Host: "github-login.xyz"},
			{Host: "unrelated.net"},
		}); err != nil {
			t.Fatal(err)
		}
		m := brandwatch.New(st, hs, bs, brandwatch.Options{})
		typos, err := m.Search(ctx, "", "github.com", brand.TypoSquatting, 50)
		if err != nil || len(typos) != 1 || typos[0].Domain != "githuh.com" || len(typos[0].DNSHistory) != 1 {
			t.Errorf("typosquatting %+v %v", typos, err)
		}
		phish, err := m.Search(ctx, "", "github.com", brand.PotentialPhishing, 50)
		if err != nil || len(phish) != 1 || phish[0].Domain != "github-login.xyz" {
			t.Errorf("phishing %+v %v", phish, err)
		}
	})
}

func TestBaseDomain(t *testing.T) {
	good := map[string]string{"GitHub.com": "github.com", "www.acme.co.uk.": "acme.co.uk", "bücher.de": "xn--bcher-kva.de"}
	for in, want := range good {
		if got, err := brandwatch.BaseDomain(in); err != nil || got != want {
			t.Errorf("BaseDomain(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	long := ""
	for range 200 {
		long += "a"
	}
	for _, in := range []string{"", "co.uk", "com", long + ".com", "pаypal.com", "a..b", "exa mple.com"} {
		if _, err := brandwatch.BaseDomain(in); err == nil || periscope.ErrorCode(err) == periscope.EInternal {
			t.Errorf("BaseDomain(%q): %v, want an invalid_parameter error", in, err)
		}
	}
}

// FuzzBaseDomain checks that any query either is refused with a client
// error or yields a registrable domain that normalises to itself.
func FuzzBaseDomain(f *testing.F) {
	for _, s := range []string{"github.com", "co.uk", "WWW.Bücher.DE.", "pаypal.com", "a..b", "xn--", "-a.com", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		base, err := brandwatch.BaseDomain(q)
		if err != nil {
			if c := periscope.ErrorCode(err); c != periscope.EInvalid && c != periscope.EMissing {
				t.Fatalf("BaseDomain(%q): error code %q", q, c)
			}
			return
		}
		again, err := brandwatch.BaseDomain(base)
		if err != nil || again != base {
			t.Fatalf("BaseDomain(%q) = %q, which gives %q, %v", q, base, again, err)
		}
	})
}

// TestOwnedDomainsNotReported: an organization's other domains (and names
// below them) are never its findings, though they carry its brand.
func TestOwnedDomainsNotReported(t *testing.T) {
	each(t, func(t *testing.T, st *store.Store, hs *hoststore.Store, bs *brandstore.Store) {
		ctx := context.Background()
		f := setup(t, st, bs)
		f.add(t, f.org, "paypal.com")
		f.add(t, f.org2, "paypal-shop.com") // another organization of the same account
		f.add(t, f.other, "example.org")
		m := brandwatch.New(st, hs, bs, brandwatch.Options{})
		if _, err := m.ObserveNames(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Observe(ctx, []brandwatch.Observation{{Name: "paypal-shop.com"}, {Name: "www.paypal-shop.com"}, {Name: "paypal-help.com"}}); err != nil {
			t.Fatal(err)
		}
		if got := keys(f.findings(t, f.acct.ID, brand.PotentialPhishing)); !slices.Equal(got, []string{"paypal-help.com"}) {
			t.Errorf("findings %v, want only paypal-help.com", got)
		}
	})
}

// each runs fn as a subtest on a fresh database of every engine with the
// tables a watcher uses.
func each(t *testing.T, fn func(t *testing.T, st *store.Store, hs *hoststore.Store, bs *brandstore.Store)) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		fn(t, st, hoststore.New(st), brandstore.New(st))
	}, hoststore.Migrations(), brandstore.Migrations())
}
