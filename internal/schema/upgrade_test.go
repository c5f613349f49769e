package schema_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/cert"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hostgen"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/schema"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
	"github.com/periscope-oss/periscope/internal/vulningest"
	"github.com/periscope-oss/periscope/internal/vulnstore"
)

// testdata/release1 holds the migrations of the release before storage was
// split by capability, as internal/store carried them then (versions 1–7,
// every capability in one directory). A database it wrote records those
// versions and names in schema_migrations.
const release1 = "testdata/release1"

// The released migration files never change: every version the release
// applied is still shipped, with the same name and SQL, by exactly one set.
func TestReleasedMigrationsUnchanged(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			s := storetest.Open(t, engine)
			ms, err := s.Migrations(schema.Sets()...)
			if err != nil {
				t.Fatal(err)
			}
			byVersion := map[int]store.Migration{}
			for _, m := range ms {
				byVersion[m.Version] = m
			}
			old := oldMigrations(t, engine)
			if len(old) != 7 {
				t.Fatalf("%d released migrations, want 7", len(old))
			}
			for _, o := range old {
				m, ok := byVersion[o.Version]
				if !ok || m.Name != o.Name || m.SQL != o.SQL {
					t.Errorf("released migration %s is no longer shipped as it was", o.Name)
				}
			}
		})
	}
}

// A database written by the previous release opens, applies only the
// migrations added since (none of the release's again) and answers the data
// routes exactly as a fresh database holding the same data.
func TestReleaseDatabaseAnswersTheSame(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			oldDB := releaseDatabase(t, engine)
			all, err := oldDB.Migrations(schema.Sets()...)
			if err != nil {
				t.Fatal(err)
			}
			var added []string
			for _, m := range all {
				if m.Version > 7 {
					added = append(added, m.Name)
				}
			}
			applied, err := oldDB.Migrate(ctx, schema.Sets()...)
			if err != nil || !slices.Equal(applied, added) {
				t.Fatalf("migrating the release's database applied %v (%v), want only the newer %v", applied, err, added)
			}
			var n int
			if err := oldDB.QueryRow(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(all) {
				t.Fatalf("schema_migrations holds %d rows (%v), want %d", n, err, len(all))
			}
			fresh := storetest.Open(t, engine, schema.Sets()...)

			c := selfSigned(t, "www.paypal.com", "paypal.com")
			var answers [2][]string
			for i, st := range []*store.Store{oldDB, fresh} {
				answers[i] = routeAnswers(t, engine, st, c)
			}
			if len(answers[0]) != len(answers[1]) {
				t.Fatalf("%d answers against %d", len(answers[0]), len(answers[1]))
			}
			for _, a := range answers[0] {
				if !strings.Contains(a, " → 200 ") {
					t.Errorf("not answered: %.300s", a)
				}
				if os.Getenv("UPGRADE_DUMP") != "" {
					t.Logf("%.200s", a)
				}
			}
			for i := range answers[0] {
				if answers[0][i] != answers[1][i] {
					t.Errorf("the release's database answers\n%s\na fresh one\n%s", answers[0][i], answers[1][i])
				}
			}
		})
	}
}

// oldMigrations reads the release's migrations of the engine, in order.
func oldMigrations(t *testing.T, engine string) []store.Migration {
	t.Helper()
	dir := filepath.Join(release1, engine)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []store.Migration
	for _, e := range entries {
		num, _, _ := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		b, err := fs.ReadFile(os.DirFS(dir), e.Name())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, store.Migration{Version: v, Name: e.Name(), SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out
}

// releaseDatabase builds the schema as the release's runner left it: its
// schema_migrations table, each file applied in its own transaction and
// recorded by version and name. (Migration 5's Go step moved the rows of
// host_terms, which is empty in a database created at once.)
func releaseDatabase(t *testing.T, engine string) *store.Store {
	t.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, storetest.DSN(t, engine), store.Files(schema.Sets()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Exec(ctx, `CREATE TABLE schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, m := range oldMigrations(t, engine) {
		if _, err := s.DB().ExecContext(ctx, m.SQL); err != nil {
			t.Fatalf("apply %s: %v", m.Name, err)
		}
		if _, err := s.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`, m.Version, m.Name, 1790000000); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

var clock = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// routeAnswers stores the same data in st (the writers' SQL is the
// release's: the split moved it unchanged) and returns the bodies of the
// data routes, with the database's own account and organization ids
// replaced by placeholders.
func routeAnswers(t *testing.T, engine string, st *store.Store, c cert.Certificate) []string {
	t.Helper()
	ctx := context.Background()
	st.Now = func() time.Time { return clock }
	hs, vs, bs := hoststore.New(st), vulnstore.New(st), brandstore.New(st)

	// Hosts: a generated sample with every kind of field.
	g := hostgen.New(300, 7, clock.Unix())
	batch := make([]host.Host, 0, 300)
	if err := g.All(func(h host.Host) error { batch = append(batch, h); return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := hs.UpsertHosts(ctx, batch); err != nil {
		t.Fatal(err)
	}
	// Vulnerabilities: the recorded NVD, KEV and OSV samples.
	in := &vulningest.Ingester{Store: vs}
	files, _ := filepath.Glob("../vuln/testdata/nvd/*.json")
	for _, f := range files {
		if _, err := in.IngestPath(ctx, vulningest.NVD, f, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := in.IngestPath(ctx, vulningest.KEV, "../vuln/testdata/kev/known_exploited_vulnerabilities.json", nil); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"osv/go", "osv/ghsa"} {
		if _, err := in.IngestPath(ctx, vulningest.OSV, "../vuln/testdata/"+d, nil); err != nil {
			t.Fatal(err)
		}
	}

	// Brand: an organization with findings of both kinds and a linked
	// certificate.
	e := apitest.New(t, engine, apitest.Options{Store: st})
	e.Clock.Set(clock)
	acct, key := e.Account(periscope.Account{Company: "Upgrade Co", Enterprise: true, OEM: true, CreditsPerMonth: 1000, OEMCreditsPerMonth: 1000})
	org := periscope.Organization{AccountID: acct.ID, Name: "upgrade"}
	if err := st.CreateOrganization(ctx, &org); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddAsset(ctx, periscope.Asset{OrganizationID: org.ID, AccountID: acct.ID, Kind: periscope.AssetDomain, Value: "paypal.com"}); err != nil {
		t.Fatal(err)
	}
	var fs []brandstore.Finding
	for i, d := range []string{"paypa1.com", "paypal-login.com", "paypall.com", "paypal-billing.net"} {
		kind := "TypoSquatting"
		if i%2 == 1 {
			kind = "PotentialPhishing"
		}
		fs = append(fs, brandstore.Finding{OrganizationID: org.ID, AccountID: acct.ID, Kind: kind, Domain: d, BaseDomain: "paypal.com",
			Fuzzer: "test", Score: 40 + i, Reason: "test"})
	}
	if _, err := bs.UpsertFindings(ctx, fs); err != nil {
		t.Fatal(err)
	}
	if _, err := bs.UpsertCertificates(ctx, []brandstore.SeenCert{{Cert: c, Source: "test", Seen: clock.Unix()}}); err != nil {
		t.Fatal(err)
	}
	if _, err := bs.LinkCertificatesUnder(ctx, org.ID, acct.ID, "paypal.com"); err != nil {
		t.Fatal(err)
	}

	var out []string
	add := func(method, path string, body any) {
		r := e.Do(method, path, key, body)
		b := bytes.ReplaceAll(r.Body, []byte(acct.ID), []byte("<account>"))
		b = bytes.ReplaceAll(b, []byte(org.ID), []byte("<organization>"))
		out = append(out, method+" "+path+" → "+strconv.Itoa(r.Status)+" "+string(b))
	}
	h0 := batch[0].Host
	dom := h0[strings.Index(h0, ".")+1:]
	for _, q := range []map[string]any{
		{"country": "US", "limit": 20}, {"domain": dom, "limit": 50}, {"tech": "nginx"}, {"host": h0},
		{"service": "https", "page": 2}, {"is_cloud": true, "limit": 10}, {"cloud_provider": "aws", "is_live": false},
	} {
		add("POST", "/api/v1/global/search", q)
	}
	add("GET", "/api/v1/domain/"+dom+"/subdomains", nil)
	add("GET", "/api/v1/domain/"+dom+"/details", nil)
	add("GET", "/api/v1/host/"+h0, nil)
	add("POST", "/api/v1/oem/attack-surface/host", map[string]any{"query": batch[1].Host})
	for _, q := range []string{"xz", "cve-2024-3094", "heap overflow", "cpe:2.3:a:tukaani:xz:5.6.0:*:*:*:*:*:*:*"} {
		add("POST", "/api/v1/oem/vulnerability-intelligence/vulnerability-search", map[string]any{"query": q})
	}
	add("POST", "/api/v1/oem/vulnerability-intelligence/advisories-search", map[string]any{"query": "golang"})
	add("GET", "/api/v1/vulnerability-intelligence/feed?days=7", nil)
	add("GET", "/api/v1/enterprise/darkweb/typosquatting", nil)
	add("GET", "/api/v1/enterprise/darkweb/potential-phishing?q=paypal", nil)
	add("GET", "/api/v1/enterprise/certificates", nil)
	return out
}

func selfSigned(t *testing.T, names ...string) cert.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{
		SerialNumber: big.NewInt(4242), Subject: pkix.Name{CommonName: names[0], Organization: []string{"Acme Inc"}},
		Issuer:    pkix.Name{CommonName: names[0]},
		NotBefore: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
		DNSNames: names,
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
