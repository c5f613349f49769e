package whoisstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestStore(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			st := New(storetest.Open(t, engine, Migrations()))
			now := time.Unix(1_700_000_000, 0).UTC()
			google := Record{Domain: "google.com", TLD: "com", Registrar: "MarkMonitor Inc.", RegistrarIANAID: "292",
				CreatedAt: day("1997-09-15"), ExpiresAt: day("2028-09-14"), Status: []string{"clientTransferProhibited", "server delete prohibited"},
				NameServers: []string{"ns1.google.com", "ns2.google.com"}, DNSSEC: "unsigned", RegistrantOrg: "Google LLC",
				RegistrantCountry: "US", WhoisServer: "whois.markmonitor.com:43", WhoisRaw: "Domain Name: google.com\n",
				RDAPSource: "https://rdap.verisign.com/com/v1/domain/google.com", RDAPJSON: `{"registrar":"MarkMonitor Inc."}`,
				Source: "lookup", QueriedAt: now, CacheExpires: now.Add(24 * time.Hour)}
			github := Record{Domain: "github.com", TLD: "com", Registrar: "MarkMonitor, Inc.", ExpiresAt: day("2026-10-09"),
				Status: []string{"clientDeleteProhibited"}, NameServers: []string{"dns1.p08.nsone.net"},
				RegistrantEmail: "Hostmaster@GitHub.com", Source: "ingest", QueriedAt: now, CacheExpires: now.Add(time.Hour)}
			gone := Record{Domain: "nosuch.com", TLD: "com", NotFound: true, QueriedAt: now, CacheExpires: now.Add(time.Hour)}
			googleIT := Record{Domain: "google.it", TLD: "it", Registrar: "MARKMONITOR-REG", NameServers: []string{"ns1.google.com"},
				Status: []string{"ok"}, QueriedAt: now, CacheExpires: now.Add(24 * time.Hour)}
			for _, r := range []Record{google, github, gone, googleIT} {
				if err := st.Put(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			got, err := st.Get(ctx, "google.com")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(google, got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
			if _, err := st.Get(ctx, "example.org"); !errors.Is(err, ErrNotFound) {
				t.Errorf("missing domain: err = %v", err)
			}
			// Replacing a record replaces its terms.
			googleIT.NameServers = []string{"ns9.google.com"}
			if err := st.Put(ctx, googleIT); err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				name  string
				f     Filter
				want  []string
				total int
			}{
				{"registrar prefix", Filter{Registrar: "markmonitor"}, []string{"github.com", "google.com", "google.it"}, 3},
				{"registrar and tld", Filter{Registrar: "MarkMonitor", TLD: "com"}, []string{"github.com", "google.com"}, 2},
				{"nameserver", Filter{NameServer: "NS1.google.com."}, []string{"google.com"}, 1},
				{"old nameserver gone", Filter{NameServer: "ns9.google.com"}, []string{"google.it"}, 1},
				{"status RDAP spelling", Filter{Status: "client transfer prohibited"}, []string{"google.com"}, 1},
				{"status EPP spelling", Filter{Status: "serverDeleteProhibited"}, []string{"google.com"}, 1},
				{"expires before", Filter{ExpiresBefore: day("2027-01-01")}, []string{"github.com"}, 1},
				{"email", Filter{Email: "hostmaster@github.com"}, []string{"github.com"}, 1},
				{"org and country", Filter{RegistrantOrg: "google", Country: "us"}, []string{"google.com"}, 1},
				{"iana id", Filter{IANAID: "292"}, []string{"google.com"}, 1},
				{"limit", Filter{TLD: "com", Limit: 1}, []string{"github.com"}, 2},
				{"not found excluded", Filter{TLD: "com"}, []string{"github.com", "google.com"}, 2},
				{"no match", Filter{Registrar: "zzz"}, nil, 0},
			} {
				if tc.f.Limit == 0 {
					tc.f.Limit = 100
				}
				recs, total, err := st.Search(ctx, tc.f)
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				var names []string
				for _, r := range recs {
					names = append(names, r.Domain)
				}
				if diff := cmp.Diff(tc.want, names); diff != "" || total != tc.total {
					t.Errorf("%s: total %d want %d; (-want +got):\n%s", tc.name, total, tc.total, diff)
				}
			}

			b := Bootstrap{Kind: "dns", Body: []byte(`{"services":[]}`), Publication: "2024-01-01T00:00:00Z", FetchedAt: now}
			if err := st.PutBootstrap(ctx, b); err != nil {
				t.Fatal(err)
			}
			b.Body = []byte(`{"services":[[["com"],["https://rdap.verisign.com/com/v1/"]]]}`)
			if err := st.PutBootstrap(ctx, b); err != nil {
				t.Fatal(err)
			}
			bs, err := st.Bootstraps(ctx)
			if err != nil || len(bs) != 1 || string(bs[0].Body) != string(b.Body) || !bs[0].FetchedAt.Equal(now) {
				t.Fatalf("bootstraps %+v, %v", bs, err)
			}
		})
	}
}
