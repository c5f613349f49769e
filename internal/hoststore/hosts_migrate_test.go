package hoststore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/schema"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// A database written before posting lists (migration 5) keeps its index:
// the host_terms rows become posting lists, the flags of every host become
// terms, and new hosts take ids after the old ones.
func TestMigrationMovesHostTermsToPostings(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			s := storetest.Unmigrated(t, engine, schema.Sets()...)
			exec := func(q string, args ...any) {
				t.Helper()
				if _, err := s.DB().ExecContext(ctx, s.Rebind(q), args...); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`)
			ms, err := s.Migrations(schema.Sets()...)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range ms[:4] {
				exec(m.SQL)
				exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, 0)`, m.Version, m.Name)
			}
			// Three hosts as the earlier store wrote them: plain JSON
			// documents and one host_terms row per term and host.
			const n = 3
			for i := 1; i <= n; i++ {
				h := host.Host{Host: fmt.Sprintf("h%d.example.com", i), IPMetadata: host.IPMetadata{CountryCode: "US"}}
				if i == 2 {
					h.Cloud.Provider, h.IsCloud = "aws", true
				}
				h.Derive()
				doc, _ := json.Marshal(h)
				ip := fmt.Sprintf("198.51.100.%d", i)
				exec(`INSERT INTO hosts (id, name, rkey, domain, ip, ipkey, is_cloud, doc) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
					i*10, h.Host, host.ReverseKey(h.Host), "example.com", ip, hoststore.IPKey(ip), map[bool]int{true: 1}[h.IsCloud], doc)
				exec(`INSERT INTO host_terms (term, host_id) VALUES (?, ?), (?, ?), (?, ?)`, "cc:us", i*10, "d:example.com", i*10, "ip:"+ip, i*10)
				if i == 2 {
					exec(`INSERT INTO host_terms (term, host_id) VALUES (?, ?)`, "cloud:aws", i*10)
				}
			}
			if applied, err := s.Migrate(ctx, schema.Sets()...); err != nil || len(applied) != len(ms)-4 {
				t.Fatalf("migrate: %v %v", applied, err)
			}
			if _, err := s.DB().ExecContext(ctx, `SELECT 1 FROM host_terms`); err == nil {
				t.Error("host_terms is still there")
			}
			// Migration 7 keeps every host and drops the columns no query reads.
			if _, err := s.DB().ExecContext(ctx, `SELECT domain FROM hosts`); err == nil {
				t.Error("hosts.domain is still there")
			}
			var rows int
			var names string
			if err := s.DB().QueryRowContext(ctx, `SELECT COUNT(*), MIN(name) || ' ' || MAX(name) FROM hosts WHERE ipkey <> ''`).Scan(&rows, &names); err != nil ||
				rows != n || names != "h1.example.com h3.example.com" {
				t.Errorf("after the migrations: %d hosts with addresses, %q, %v", rows, names, err)
			}
			hs := hoststore.New(s)
			if _, err := hs.UpsertHosts(ctx, []host.Host{{Host: "new.example.com", IPMetadata: host.IPMetadata{CountryCode: "US"}}}); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				q     hoststore.HostQuery
				total int
				first string
			}{
				{hoststore.HostQuery{Terms: []string{"cc:us"}}, n + 1, "h1.example.com"},
				{hoststore.HostQuery{Terms: []string{"cc:us", "d:example.com"}}, n + 1, "h1.example.com"},
				{hoststore.HostQuery{Terms: []string{"cloud:aws"}}, 1, "h2.example.com"},
				{hoststore.HostQuery{Terms: []string{"ip:198.51.100.3"}}, 1, "h3.example.com"},
				{hoststore.HostQuery{Terms: []string{"ip:198.51.100.3", "cc:us"}}, 1, "h3.example.com"},
				{hoststore.HostQuery{Flags: map[hoststore.HostFlag]bool{hoststore.FlagCloud: false}}, n, "h1.example.com"},
				{hoststore.HostQuery{Flags: map[hoststore.HostFlag]bool{hoststore.FlagCloud: true}, Terms: []string{"cc:us"}}, 1, "h2.example.com"},
			} {
				c.q.Limit = 10
				p, err := hs.SearchHosts(ctx, c.q)
				if err != nil {
					t.Fatal(err)
				}
				if p.Total != c.total || !p.Exact || len(p.Hosts) != c.total || p.Hosts[0].Host != c.first {
					t.Errorf("%+v: total %d exact %v %v", c.q, p.Total, p.Exact, p.Hosts)
				}
			}
		})
	}
}
