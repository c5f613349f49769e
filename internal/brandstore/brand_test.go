package brandstore_test

import (
	"context"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/cert"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/periscope"
)

func brandOrg(t testing.TB, b *brandstore.Store) periscope.Organization {
	s := b.Core()
	t.Helper()
	ctx := context.Background()
	a := periscope.Account{Company: "brand-" + time.Now().Format("150405.000000000"), Enterprise: true}
	if err := s.CreateAccount(ctx, &a, &periscope.User{Email: a.Company + "@x.test"}); err != nil {
		t.Fatal(err)
	}
	o := periscope.Organization{AccountID: a.ID, Name: "o"}
	if err := s.CreateOrganization(ctx, &o); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestUpsertCertificates(t *testing.T) {
	each(t, func(t *testing.T, s *brandstore.Store) {
		ctx := context.Background()
		s.Core().Now = func() time.Time { return time.Unix(1800000000, 0) }
		o := brandOrg(t, s)
		// Hostile but real-world text: NUL bytes and invalid UTF-8 in names.
		c := cert.Certificate{SHA256: "aa", SHA1: "bb", SubjectCN: "evil\x00.example", IssuerOrg: "bad \xff utf8",
			Serial: "-01", DNSNames: []string{"a.example.com", "*.example.com", "b.example.org", "bad\x00name.example.com", "192.0.2.9"},
			IPAddresses: []netip.Addr{netip.MustParseAddr("192.0.2.1")},
			NotBefore:   time.Unix(1700000000, 0), NotAfter: time.Unix(1900000000, 0)}
		st, err := s.UpsertCertificates(ctx, []brandstore.SeenCert{{Cert: c, Seen: 100}, {Cert: c, Seen: 200}})
		if err != nil {
			t.Fatal(err)
		}
		if st.Inserted != 1 || st.Unchanged != 1 || st.IDs["aa"] == 0 {
			t.Fatalf("first batch %+v", st)
		}
		st, err = s.UpsertCertificates(ctx, []brandstore.SeenCert{{Cert: c, Seen: 300}, {Cert: c, Seen: 50}})
		if err != nil || st.Updated != 1 || st.Unchanged != 1 || st.Inserted != 0 {
			t.Fatalf("second batch %+v %v", st, err)
		}
		if _, err := s.UpsertCertificates(ctx, []brandstore.SeenCert{{Cert: cert.Certificate{}}}); err == nil {
			t.Error("a certificate without fingerprint was accepted")
		}
		// Not under another account's id.
		if n, err := s.LinkCertificatesUnder(ctx, o.ID, brandOrg(t, s).AccountID, "example.com"); err != nil || n != 0 {
			t.Fatalf("linked under another account: %d %v", n, err)
		}
		// Every name under example.com links, example.org does not.
		n, err := s.LinkCertificatesUnder(ctx, o.ID, o.AccountID, "example.com")
		if err != nil || n != 1 {
			t.Fatalf("link under example.com: %d %v", n, err)
		}
		if n, _ := s.LinkCertificatesUnder(ctx, o.ID, o.AccountID, "example.com"); n != 0 {
			t.Errorf("linking again made %d links", n)
		}
		// One link at a time: under another account's id it neither links
		// nor moves the organization's link.
		other := brandOrg(t, s)
		for _, l := range []brandstore.CertLink{
			{OrganizationID: o.ID, AccountID: other.AccountID, CertificateID: st.IDs["aa"], Domain: "c.example.com", Seen: 9999999999},
			{OrganizationID: other.ID, AccountID: o.AccountID, CertificateID: st.IDs["aa"], Domain: "c.example.com", Seen: 9999999999},
		} {
			if n, err := s.LinkCertificates(ctx, []brandstore.CertLink{l}); err != nil || n != 0 {
				t.Errorf("link %+v: %d new, %v", l, n, err)
			}
		}
		if n, _ := s.LinkCertificatesUnder(ctx, o.ID, o.AccountID, "ample.com"); n != 0 {
			t.Errorf("a name that only ends like the domain linked %d", n)
		}
		got, total, err := s.OrgCertificates(ctx, brandstore.ListQuery{AccountID: o.AccountID, Q: "-01", Limit: 5})
		if err != nil || total != 1 || got[0].SubjectCN != "evil.example" || got[0].LastSeen != 300 || got[0].IPAddresses[0] != "192.0.2.1" {
			t.Fatalf("certificates %+v %d %v", got, total, err)
		}
		// A fingerprint as tools print it (colons, upper case), and a SAN
		// name in another case, find the certificate on both engines.
		for _, q := range []string{"A:A", "A.EXAMPLE.COM"} {
			if _, total, err := s.OrgCertificates(ctx, brandstore.ListQuery{AccountID: o.AccountID, Q: q, Limit: 5}); err != nil || total != 1 {
				t.Errorf("certificates matching %q: %d %v", q, total, err)
			}
		}
		names, err := s.OrgCertificateNames(ctx, o.ID)
		if err != nil || len(names) != 3 {
			t.Errorf("names %v %v", names, err)
		}
	})
}

func TestUpsertFindings(t *testing.T) {
	each(t, func(t *testing.T, s *brandstore.Store) {
		ctx := context.Background()
		s.Core().Now = func() time.Time { return time.Unix(1800000000, 0) }
		o := brandOrg(t, s)
		f := brandstore.Finding{OrganizationID: o.ID, AccountID: o.AccountID, Kind: "TypoSquatting", Domain: "exampel.com",
			BaseDomain: "example.com", Fuzzer: "transposition", Score: 90, Reason: "r"}
		a1, a2 := f, f
		a1.DNS, a1.LastSeen = host.DNS{A: []string{"192.0.2.1"}}, 100
		a2.LastSeen = 200 // seen again without DNS: keeps the answers
		gone := f
		gone.OrganizationID = "00000000-0000-4000-8000-000000000000"
		// An organization of another account: never filed under it.
		other := brandOrg(t, s)
		foreign := f
		foreign.Domain, foreign.AccountID = "exmaple.com", other.AccountID
		st, err := s.UpsertFindings(ctx, []brandstore.Finding{a1, a2, gone, foreign})
		if err != nil || st.Inserted != 1 {
			t.Fatalf("insert %+v %v", st, err)
		}
		b := f
		b.DNS, b.LastSeen = host.DNS{A: []string{"192.0.2.2"}}, 300
		if st, err := s.UpsertFindings(ctx, []brandstore.Finding{b, b}); err != nil || st.Updated != 1 || st.Unchanged != 1 {
			t.Fatalf("update %+v %v", st, err)
		}
		fs, total, err := s.Findings(ctx, brandstore.ListQuery{AccountID: o.AccountID, Kind: "TypoSquatting", Limit: 10})
		if err != nil || total != 1 {
			t.Fatalf("list %d %v", total, err)
		}
		got := fs[0]
		if got.DateAdded != 100 || got.LastSeen != 300 || len(got.DNSHistory) != 2 || got.DNSHistory[0].DNS.A[0] != "192.0.2.1" ||
			got.DNS.A[0] != "192.0.2.2" || got.DNS.MX == nil {
			t.Errorf("finding %+v", got)
		}
		// LIKE metacharacters in q are literal.
		if _, n, _ := s.Findings(ctx, brandstore.ListQuery{AccountID: o.AccountID, Kind: "TypoSquatting", Q: "exa_pel", Limit: 10}); n != 0 {
			t.Errorf("q with _ matched %d", n)
		}
		if _, n, _ := s.Findings(ctx, brandstore.ListQuery{AccountID: o.AccountID, Kind: "TypoSquatting", Q: "%", Limit: 10}); n != 0 {
			t.Errorf("q with %% matched %d", n)
		}
	})
}

// Writers storing the same new certificate and finding at once (several CT
// logs carry the same certificate; an ingest runs beside serve) all
// succeed: exactly one inserts, the others see it stored.
func TestBrandWritersTakeTurns(t *testing.T) {
	each(t, func(t *testing.T, s *brandstore.Store) {
		ctx := context.Background()
		o := brandOrg(t, s)
		c := cert.Certificate{SHA256: "cc", DNSNames: []string{"a.example.com"},
			NotBefore: time.Unix(1700000000, 0), NotAfter: time.Unix(1900000000, 0)}
		f := brandstore.Finding{OrganizationID: o.ID, AccountID: o.AccountID, Kind: "TypoSquatting", Domain: "exampel.com",
			BaseDomain: "example.com", Fuzzer: "transposition", Score: 90, Reason: "r", LastSeen: 100}
		const n = 8
		certIns, findIns := make(chan int, n), make(chan int, n)
		errs := make(chan error, 2*n)
		var wg sync.WaitGroup
		for range n {
			wg.Add(2)
			go func() {
				defer wg.Done()
				st, err := s.UpsertCertificates(ctx, []brandstore.SeenCert{{Cert: c, Seen: 100}})
				errs <- err
				certIns <- st.Inserted
			}()
			go func() {
				defer wg.Done()
				st, err := s.UpsertFindings(ctx, []brandstore.Finding{f})
				errs <- err
				findIns <- st.Inserted
			}()
		}
		wg.Wait()
		close(errs)
		close(certIns)
		close(findIns)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		sum := func(ch chan int) (t int) {
			for v := range ch {
				t += v
			}
			return t
		}
		if ci, fi := sum(certIns), sum(findIns); ci != 1 || fi != 1 {
			t.Fatalf("inserted %d certificates and %d findings, want 1 and 1", ci, fi)
		}
	})
}

// Several organizations monitoring the same brand: the OEM search gets one
// finding a domain and a full page.
func TestFindingsByBaseOneADomain(t *testing.T) {
	each(t, func(t *testing.T, s *brandstore.Store) {
		ctx := context.Background()
		var fs []brandstore.Finding
		for range 6 {
			o := brandOrg(t, s)
			for i, d := range []string{"paypa1.com", "paypai.com", "paypall.com"} {
				fs = append(fs, brandstore.Finding{OrganizationID: o.ID, AccountID: o.AccountID, Kind: "TypoSquatting", Domain: d,
					BaseDomain: "paypal.com", Fuzzer: "homoglyph", Score: 90 - i, Reason: "r", LastSeen: 100})
			}
		}
		if _, err := s.UpsertFindings(ctx, fs); err != nil {
			t.Fatal(err)
		}
		got, err := s.FindingsByBase(ctx, "", "paypal.com", "TypoSquatting", 3)
		if err != nil || len(got) != 3 || got[0].Domain != "paypa1.com" || got[1].Domain != "paypai.com" || got[2].Domain != "paypall.com" {
			t.Fatalf("findings %+v %v", got, err)
		}
	})
}
