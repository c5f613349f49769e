package api_test

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/periscope-oss/periscope/internal/api/apitest"
)

// Issue 29, item 9: the audit record of an OEM dark-web search keeps what
// was searched for sealed: neither the SQLite files nor the PostgreSQL row
// hold it, and only the account that searched is shown it.
func TestDarkwebSearchAuditSealed(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		const email = "zed.audit-sealed-7731@example.net"
		const tenant = "tenant-visible-42"
		_, key := oemAccount(e, 10)
		other, otherKey := oemAccount(e, 11)
		if r := e.Do("POST", "/api/v1/oem/darkweb/search", key, map[string]any{"query": email, "type": "email",
			"query_tags": map[string]any{"tenant": tenant}}); r.Status != 200 {
			t.Fatalf("search: %d %s", r.Status, r.Body)
		}
		// A refused search names the person all the same.
		if r := e.Do("POST", "/api/v1/oem/darkweb/search", key, map[string]any{"query": email, "type": "nope"}); r.Status != 400 {
			t.Fatalf("bad type: %d %s", r.Status, r.Body)
		}

		var raw []byte
		switch e.Engine {
		case "sqlite":
			if _, err := e.Store.DB().ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
				t.Fatal(err)
			}
			for _, p := range e.Store.FilePaths() {
				for _, suffix := range []string{"", "-wal"} {
					if b, err := os.ReadFile(p + suffix); err == nil {
						raw = append(raw, b...)
					}
				}
			}
		case "postgres":
			rows, err := e.Store.DB().QueryContext(ctx, `SELECT a::text FROM audit_logs a`)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					t.Fatal(err)
				}
				raw = append(raw, s...)
			}
			rows.Close()
		}
		if !bytes.Contains(raw, []byte(tenant)) {
			t.Fatalf("the audit records are not where the test looks (no %q in %d bytes)", tenant, len(raw))
		}
		if bytes.Contains(raw, []byte("zed.audit-sealed")) {
			t.Errorf("the searched email is in clear in the %s data", e.Engine)
		}

		var page auditPage
		e.Do("POST", "/api/v1/oem/account/audit-logs", key, map[string]any{}).JSON(t, &page)
		var shown int
		for _, l := range page.Response.Logs {
			if l.Endpoint == "/oem/darkweb/search" {
				if l.Request["query"] != email {
					t.Errorf("the account's own record shows %v, want its query", l.Request)
				}
				shown++
			}
		}
		if shown != 2 {
			t.Errorf("%d dark-web records shown to their account, want 2", shown)
		}

		// Copied into another account's record, the sealed request does
		// not open: that account sees only that it is sealed.
		if _, err := e.Store.DB().ExecContext(ctx, e.Store.Rebind(`INSERT INTO audit_logs (account_id, key_prefix, created_at, method,
			endpoint, status_code, credits_charged, query_tags, request, sealed_request) SELECT ?, key_prefix, created_at, method,
			endpoint, status_code, credits_charged, query_tags, request, sealed_request FROM audit_logs WHERE sealed_request <> ''`), other.ID); err != nil {
			t.Fatal(err)
		}
		page = auditPage{}
		r := e.Do("POST", "/api/v1/oem/account/audit-logs", otherKey, map[string]any{})
		r.JSON(t, &page)
		if bytes.Contains(r.Body, []byte("zed.audit-sealed")) || len(page.Response.Logs) == 0 {
			t.Errorf("another account's view: %s", r.Body)
		}
		for _, l := range page.Response.Logs {
			if l.Endpoint == "/oem/darkweb/search" && l.Request["sealed"] != true {
				t.Errorf("a record that does not open shows %v", l.Request)
			}
		}
	})
}
