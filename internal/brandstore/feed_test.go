package brandstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/cert"
)

// TestExpiringCertificates: an organization's certificate expiring within
// the window is listed, one renewed by a later certificate of the same
// subject is not, nor is one expiring after the window.
func TestExpiringCertificates(t *testing.T) {
	each(t, func(t *testing.T, s *brandstore.Store) {
		ctx := context.Background()
		now := time.Unix(1800000000, 0)
		s.Core().Now = func() time.Time { return now }
		o := brandOrg(t, s)
		day := 24 * time.Hour
		mk := func(sha, cn string, notAfter time.Time) brandstore.SeenCert {
			return brandstore.SeenCert{Cert: cert.Certificate{SHA256: sha, SHA1: sha, SubjectCN: cn, DNSNames: []string{cn},
				NotBefore: now.Add(-90 * day), NotAfter: notAfter}, Seen: now.Unix()}
		}
		if _, err := s.UpsertCertificates(ctx, []brandstore.SeenCert{
			mk("a1", "www.example.com", now.Add(10*day)), mk("a2", "www.example.com", now.Add(80*day)),
			mk("b1", "api.example.com", now.Add(10*day)), mk("c1", "mail.example.com", now.Add(60*day)),
		}); err != nil {
			t.Fatal(err)
		}
		if n, err := s.LinkCertificatesUnder(ctx, o.ID, o.AccountID, "example.com"); err != nil || n != 4 {
			t.Fatalf("link: %d %v", n, err)
		}
		cs, err := s.ExpiringCertificates(ctx, now.Unix(), now.Add(31*day).Unix())
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != 1 || cs[0].SHA256 != "b1" || cs[0].OrganizationID != o.ID || cs[0].Domain != "api.example.com" || cs[0].SubjectCN != "api.example.com" {
			t.Fatalf("expiring: %+v", cs)
		}
		fs, err := s.FindingsAfter(ctx, 0, 10)
		if err != nil || len(fs) != 0 {
			t.Fatalf("findings of an empty store: %+v %v", fs, err)
		}
	})
}
