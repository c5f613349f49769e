package alertstore_test

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// rawBytes returns what is on disk of the database at dsn: the SQLite
// file and its WAL, or a pg_dump of the test's schema.
func rawBytes(t *testing.T, engine, dsn string) []byte {
	t.Helper()
	if engine == "sqlite" {
		var all []byte
		for _, p := range []string{dsn, dsn + "-wal"} {
			b, err := os.ReadFile(p)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			all = append(all, b...)
		}
		return all
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := u.Query().Get("search_path")
	u.RawQuery = "sslmode=disable"
	out, err := exec.Command("pg_dump", "--data-only", "-n", schema, u.String()).Output()
	if err != nil {
		t.Fatalf("pg_dump: %v", err)
	}
	if !bytes.Contains(out, []byte("webhook_endpoints")) {
		t.Fatalf("pg_dump holds no webhook_endpoints: %.300s", out)
	}
	return out
}

// TestWebhookSecretsSealedAtRest writes an endpoint in clear as before
// migration 18, then checks that unlocking seals it, that new and rotated
// secrets are sealed, that the raw database holds none of them, that they
// still open for signing, and that another key is refused.
func TestWebhookSecretsSealedAtRest(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			dsn := storetest.DSN(t, engine)
			db, err := store.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Migrate(ctx, alertstore.Migrations()); err != nil {
				t.Fatal(err)
			}
			db.Now = func() time.Time { return time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC) }
			a := periscope.Account{Company: "acme", Plan: "enterprise", Enterprise: true}
			if err := db.CreateAccount(ctx, &a, &periscope.User{Email: "acme@example.com"}); err != nil {
				t.Fatal(err)
			}
			o := periscope.Organization{AccountID: a.ID, Name: "acme"}
			if err := db.CreateOrganization(ctx, &o); err != nil {
				t.Fatal(err)
			}
			const legacy, legacyPrev = "whsec_TGVnYWN5Q2xlYXJTZWNyZXRWYWx1ZTEyMw==", "whsec_UHJldmlvdXNDbGVhclNlY3JldDQ1Njc4OQ=="
			if _, err := db.Exec(ctx, `INSERT INTO webhook_endpoints (id, account_id, organization_id, url, format, secret, previous_secret,
				previous_until, min_severity, types, status, created_at, updated_at) VALUES ('legacy', ?, ?, 'https://hooks.example.com/a', 'json', ?, ?, ?, 'low', '[]', 'active', 1, 1)`,
				a.ID, o.ID, legacy, legacyPrev, db.Now().Unix()+3600); err != nil {
				t.Fatal(err)
			}
			// The clear row as an older release left it: its secret is on disk.
			if !bytes.Contains(rawBytes(t, engine, dsn), []byte(legacy)) {
				t.Fatal("the clear secret is not in the raw database before sealing: the test cannot see it")
			}
			st := alertstore.New(db)
			if _, err := st.Endpoints(ctx, a.ID, o.ID); !errors.Is(err, alertstore.ErrNoSecretsKey) {
				t.Fatalf("read before unlock: %v", err)
			}
			k := testKey(t)
			n, err := st.UnlockSecrets(ctx, k)
			if err != nil || n != 1 {
				t.Fatalf("unlock sealed %d: %v", n, err)
			}
			if n, err := st.UnlockSecrets(ctx, k); err != nil || n != 0 {
				t.Fatalf("second unlock sealed %d: %v", n, err)
			}
			ep := alertstore.Endpoint{AccountID: a.ID, OrganizationID: o.ID, URL: "https://hooks.example.com/b", Format: "json",
				Secret: "whsec_TmV3RW5kcG9pbnRTZWNyZXRWYWx1ZTk4Nw==", MinSeverity: "low"}
			if err := st.CreateEndpoint(ctx, &ep); err != nil {
				t.Fatal(err)
			}
			rotated := "whsec_Um90YXRlZFNlY3JldFZhbHVlQUJDREVGRw=="
			ep.PreviousSecret, ep.PreviousUntil, ep.Secret = ep.Secret, db.Now().Unix()+3600, rotated
			if err := st.UpdateEndpoint(ctx, &ep); err != nil {
				t.Fatal(err)
			}
			raw := rawBytes(t, engine, dsn)
			for _, s := range []string{legacy, legacyPrev, ep.PreviousSecret, rotated} {
				for _, part := range []string{s, strings.TrimPrefix(s, "whsec_")} {
					if bytes.Contains(raw, []byte(part)) {
						t.Errorf("the raw %s database holds the secret %s in clear", engine, s)
					}
				}
			}
			got, err := st.Endpoint(ctx, a.ID, o.ID, "legacy")
			if err != nil || got.Secret != legacy || got.PreviousSecret != legacyPrev {
				t.Fatalf("legacy endpoint reads back %v: %v", err, got.Secret == legacy)
			}
			got, err = st.Endpoint(ctx, a.ID, o.ID, ep.ID)
			if err != nil || got.Secret != rotated || got.PreviousSecret != ep.PreviousSecret {
				t.Fatalf("rotated endpoint reads back wrong: %v", err)
			}
			// Another key is refused, and leaves the store locked.
			other, err := alertstore.NewSecretsKey(bytes.Repeat([]byte{7}, 32))
			if err != nil {
				t.Fatal(err)
			}
			st2 := alertstore.New(db)
			if _, err := st2.UnlockSecrets(ctx, other); !errors.Is(err, alertstore.ErrWrongSecretsKey) {
				t.Fatalf("another key: %v", err)
			}
			if _, err := st2.Endpoints(ctx, a.ID, o.ID); !errors.Is(err, alertstore.ErrNoSecretsKey) {
				t.Fatalf("read after a refused key: %v", err)
			}
		})
	}
}

func TestSecretsKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secrets.key")
	if _, err := alertstore.LoadOrCreateSecretsKey(path, false, nil); err == nil {
		t.Fatal("a missing key file without create loads")
	}
	created := ""
	k, err := alertstore.LoadOrCreateSecretsKey(path, true, func(p string) { created = p })
	if err != nil || created != path {
		t.Fatalf("create: %v %q", err, created)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v %v", fi.Mode(), err)
	}
	k2, err := alertstore.LoadOrCreateSecretsKey(path, true, func(string) { t.Error("created twice") })
	if err != nil || k2.ID() != k.ID() {
		t.Fatalf("reload: %v, id %s vs %s", err, k2.ID(), k.ID())
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := alertstore.LoadOrCreateSecretsKey(path, false, nil); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a world-readable key file loads: %v", err)
	}
	os.WriteFile(path, []byte("nothex\n"), 0o600)
	if _, err := alertstore.LoadOrCreateSecretsKey(path, false, nil); err == nil {
		t.Fatal("a malformed key file loads")
	}
}
