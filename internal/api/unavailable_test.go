package api_test

import (
	"context"
	"database/sql"
	"log/slog"
	"net/url"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/schema"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// Defect 6: with the database unreachable every route answers 503
// unavailable with Retry-After, and recovers by itself.
func TestDatabaseDownIs503ThenRecovers(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			dsn := storetest.DSN(t, engine)
			direct, err := store.Open(context.Background(), dsn, store.Files(schema.Sets()...))
			if err != nil {
				t.Fatal(err)
			}
			defer direct.Close()
			if _, err := direct.Migrate(context.Background(), schema.Sets()...); err != nil {
				t.Fatal(err)
			}
			var down, up func()
			st := direct
			if engine == "postgres" {
				// The server reaches PostgreSQL through a proxy the test
				// can cut: connections drop and new ones are refused.
				u, _ := url.Parse(dsn)
				p := &tcpProxy{addr: "127.0.0.1:0", target: u.Host}
				p.start(t)
				defer p.stop()
				u.Host = p.addr
				if st, err = store.Open(context.Background(), u.String()); err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				down, up = p.stop, func() { p.start(t) }
			} else {
				// SQLite is a file: "down" is a writer holding the lock
				// past the busy timeout.
				db, err := sql.Open("sqlite", dsn)
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				var tx *sql.Tx
				down = func() {
					if tx, err = db.Begin(); err != nil {
						t.Fatal(err)
					}
					if _, err := tx.Exec(`UPDATE accounts SET company = company`); err != nil {
						t.Fatal(err)
					}
				}
				up = func() { tx.Commit() }
			}
			e := apitest.New(t, engine, apitest.Options{Store: st, Deps: func(d *api.Deps, s *store.Store) { d.Log = slog.New(slog.NewTextHandler(testWriter{t}, nil)) }})
			_, key := e.Account(periscope.Account{Company: "Down", CreditsPerMonth: 100})
			const route = "/api/v1/vulnerability-intelligence/feed"
			if r := e.Do("GET", route, key, nil); r.Status != 200 {
				t.Fatalf("before: %d %s", r.Status, r.Body)
			}
			down()
			start := time.Now()
			r := e.Do("GET", route, key, nil)
			if r.Status != 503 || r.ErrorCode() != "unavailable" || r.Header.Get("Retry-After") == "" {
				t.Errorf("database down: %d %s", r.Status, r.Body)
			}
			if engine == "postgres" {
				if r := e.Do("GET", "/api/v1/auth/status", "not-a-key-of-anyone", nil); r.Status != 503 {
					t.Errorf("authentication with the database down: %d %s", r.Status, r.Body)
				}
			}
			t.Logf("503 after %v", time.Since(start))
			up()
			var last apitest.Response
			for i := 0; i < 50; i++ {
				if last = e.Do("GET", route, key, nil); last.Status == 200 {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if last.Status != 200 {
				t.Errorf("after the database came back: %d %s", last.Status, last.Body)
			}
		})
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(b))
	return len(b), nil
}
