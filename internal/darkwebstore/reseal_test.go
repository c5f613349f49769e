package darkwebstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/periscope-oss/periscope/internal/darkweb"
)

// TestOnlineReseal rotates the key of a keyring file while a "server" (a
// store unlocked with the file as it was, reading it again on unknown
// keys) keeps searching and listing.
func TestOnlineReseal(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			if engine == "postgres" && os.Getenv("PERISCOPE_TEST_POSTGRES") == "" {
				t.Skip("PERISCOPE_TEST_POSTGRES not set")
			}
			ctx := context.Background()
			_, s, _ := open(t, engine) // unlocked with keyring(1), nothing stored
			path := filepath.Join(t.TempDir(), "dw.key")
			if err := darkweb.WriteKeyFile(path, bytes.Repeat([]byte{1}, 32)); err != nil {
				t.Fatal(err)
			}
			load := func() (*darkweb.Keyring, error) { return darkweb.LoadOrCreateKey(path, false, nil) }
			k1, err := load()
			if err != nil {
				t.Fatal(err)
			}
			server := New(s)
			if err := server.Unlock(ctx, k1); err != nil {
				t.Fatal(err)
			}
			server.SetKeyReload(load)
			recs := fixtures(t, server)
			var many []darkweb.Record
			for i := 0; i < 2500; i++ {
				many = append(many, darkweb.Record{Email: fmt.Sprintf("user%d@example.com", i), Password: fmt.Sprintf("pw-%d", i), Breach: "Bulk", Source: "combolist"})
			}
			if _, err := server.Add(ctx, append(many, recs...)); err != nil {
				t.Fatal(err)
			}
			stale := New(s) // a server that cannot read the file again
			k1again, err := load()
			if err != nil {
				t.Fatal(err)
			}
			if err := stale.Unlock(ctx, k1again); err != nil {
				t.Fatal(err)
			}

			k2, err := darkweb.AddKeyToFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if k2.IndexID() != k1.ID() || k2.ID() == k1.ID() || len(k2.KeyIDs()) != 2 {
				t.Fatalf("keyring after adding: index %s seal %s keys %v", k2.IndexID(), k2.ID(), k2.KeyIDs())
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
				t.Fatalf("key file mode %o", fi.Mode().Perm())
			}
			rot := New(s)
			if err := rot.Unlock(ctx, k2); err != nil {
				t.Fatal(err)
			}
			// The server searches while the rotation runs, and after.
			var stop atomic.Bool
			var wg sync.WaitGroup
			var searchErr error
			var searches int
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					got, err := server.Search(ctx, Query{Type: darkweb.Password, Value: "DaveSecret77", Limit: 5, NoCache: true})
					if err == nil && (len(got) != 1 || got[0].Record.Username != "dave_sentinel") {
						err = fmt.Errorf("got %+v", got)
					}
					if err != nil {
						searchErr = err
						return
					}
					searches++
				}
			}()
			done, left, err := rot.Reseal(ctx, nil)
			stop.Store(true)
			wg.Wait()
			if err != nil || left != 0 || done != len(many)+len(recs) {
				t.Fatalf("reseal: done %d left %d err %v", done, left, err)
			}
			if searchErr != nil {
				t.Fatalf("search during the rotation (after %d): %v", searches, searchErr)
			}
			for _, d := range []*Store{server, rot} {
				got, err := d.Search(ctx, Query{Type: darkweb.Email, Value: "user2499@example.com", Limit: 5, NoCache: true})
				if err != nil || len(got) != 1 || got[0].Record.Password != "pw-2499" {
					t.Fatalf("after the rotation: %+v %v", got, err)
				}
				items, total, err := d.Credentials(ctx, ListQuery{Domains: []string{"example.com"}, Limit: 10})
				if err != nil || total != len(many)+2 || len(items) != 10 {
					t.Fatalf("listing after the rotation: %d items of %d, %v", len(items), total, err)
				}
			}
			// Every row is sealed with the new key now.
			var n int
			if err := s.DB().QueryRowContext(ctx, s.Rebind(`SELECT COUNT(*) FROM darkweb_records WHERE key_id <> ?`), k2.ID()).Scan(&n); err != nil || n != 0 {
				t.Fatalf("rows under other keys: %d %v", n, err)
			}
			// A server that never reads the file again refuses clearly.
			if _, err := stale.Search(ctx, Query{Type: darkweb.Email, Value: "user1@example.com", Limit: 5, NoCache: true}); !errors.Is(err, ErrWrongKey) {
				t.Fatalf("stale server: %v", err)
			}
			// The key file as it was before the rotation (an old backup)
			// is refused at unlock, not discovered record by record.
			if err := New(s).Unlock(ctx, k1again); !errors.Is(err, ErrWrongKey) {
				t.Fatalf("pre-rotation key file: %v", err)
			}
			// Ingest under the new keyring, rotate again: the second key
			// is forgotten once nothing is sealed with it.
			if _, err := rot.Add(ctx, []darkweb.Record{{Email: "late@example.com", Password: "late-pw", Breach: "Late", Source: "combolist"}}); err != nil {
				t.Fatal(err)
			}
			k3, err := darkweb.AddKeyToFile(path)
			if err != nil {
				t.Fatal(err)
			}
			rot3 := New(s)
			if err := rot3.Unlock(ctx, k3); err != nil {
				t.Fatal(err)
			}
			if done, left, err := rot3.Reseal(ctx, nil); err != nil || left != 0 || done != len(many)+len(recs)+1 {
				t.Fatalf("second reseal: %d %d %v", done, left, err)
			}
			var keys int
			if err := s.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM darkweb_keys`).Scan(&keys); err != nil || keys != 2 {
				t.Fatalf("darkweb_keys rows after the second rotation: %d %v", keys, err)
			}
			// A full re-key from a keyring of several keys.
			next := keyring(t, 9)
			if err := rot3.Rotate(ctx, k3, next, nil); err != nil {
				t.Fatal(err)
			}
			fresh := New(s)
			if err := fresh.Unlock(ctx, next); err != nil {
				t.Fatal(err)
			}
			got, err := fresh.Search(ctx, Query{Type: darkweb.Email, Value: "late@example.com", Limit: 5})
			if err != nil || len(got) != 1 || got[0].Record.Password != "late-pw" {
				t.Fatalf("after reindex: %+v %v", got, err)
			}
		})
	}
}
