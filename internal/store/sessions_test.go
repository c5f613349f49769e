package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

func TestSessions(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		s.Now = func() time.Time { return now }
		lim := store.SessionLimits{Idle: 30 * time.Minute, Absolute: 12 * time.Hour}
		a, u := newAccount(t, s, "acme", 10)
		key, k, err := s.CreateKey(ctx, a.ID, u.ID, "console")
		if err != nil {
			t.Fatal(err)
		}
		noSession := func(id, why string) {
			t.Helper()
			if _, _, err := s.Session(ctx, id, lim); periscope.ErrorCode(err) != periscope.EUnauthorized {
				t.Errorf("%s: Session = %v, want unauthorized", why, err)
			}
		}

		if _, _, err := s.CreateSession(ctx, key+"x", lim); periscope.ErrorCode(err) != periscope.EUnauthorized {
			t.Fatalf("sign-in with a wrong key: %v", err)
		}
		sess, p, err := s.CreateSession(ctx, key, lim)
		if err != nil || p.Account.ID != a.ID || sess.KeyID != k.ID || len(sess.ID) != 64 || len(sess.CSRF) != 64 || sess.ID == sess.CSRF {
			t.Fatalf("CreateSession = %+v, %+v, %v", sess, p.Account, err)
		}
		got, p, err := s.Session(ctx, sess.ID, lim)
		if err != nil || p.Key.ID != k.ID || got.CSRF != sess.CSRF {
			t.Fatalf("Session = %+v, %+v, %v", got, p.Key, err)
		}
		noSession("", "empty id")
		noSession(sess.CSRF, "the CSRF token as id")

		// Requests within the idle limit keep the session alive up to its
		// absolute expiry.
		for i := 0; i < 23; i++ {
			now = now.Add(29 * time.Minute)
			if _, _, err := s.Session(ctx, sess.ID, lim); err != nil {
				t.Fatalf("after %d active half-hours: %v", i+1, err)
			}
		}
		now = now.Add(time.Hour) // 12h13m after sign-in
		noSession(sess.ID, "past the absolute expiry")

		// Idle expiry.
		sess, _, err = s.CreateSession(ctx, key, lim)
		if err != nil {
			t.Fatal(err)
		}
		now = now.Add(31 * time.Minute)
		noSession(sess.ID, "idle 31 minutes")

		// Sign-out ends one session, not the key's others.
		s1, _, _ := s.CreateSession(ctx, key, lim)
		s2, _, _ := s.CreateSession(ctx, key, lim)
		if err := s.DeleteSession(ctx, s1.ID); err != nil {
			t.Fatal(err)
		}
		noSession(s1.ID, "signed out")
		if _, _, err := s.Session(ctx, s2.ID, lim); err != nil {
			t.Fatalf("other session after sign-out: %v", err)
		}

		// Revoking the key ends its sessions.
		if _, err := s.RevokeKey(ctx, k.ID); err != nil {
			t.Fatal(err)
		}
		noSession(s2.ID, "key revoked")
		if _, _, err := s.CreateSession(ctx, key, lim); periscope.ErrorCode(err) != periscope.EUnauthorized {
			t.Errorf("sign-in with a revoked key: %v", err)
		}
	})
}

// TestSessionEndsWhenKeyRevokedElsewhere: a key revoked by another process
// (the CLI on the same database) ends its sessions through the lookup's
// join, without RevokeKey's delete.
func TestSessionEndsWhenKeyRevokedElsewhere(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		lim := store.SessionLimits{Idle: time.Hour, Absolute: time.Hour}
		a, u := newAccount(t, s, "acme", 10)
		key, k, err := s.CreateKey(ctx, a.ID, u.ID, "console")
		if err != nil {
			t.Fatal(err)
		}
		sess, _, err := s.CreateSession(ctx, key, lim)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.DB().ExecContext(ctx, s.Rebind(`UPDATE api_keys SET revoked_at = 1 WHERE id = ?`), k.ID); err != nil {
			t.Fatal(err)
		}
		s.Now = func() time.Time { return time.Now().Add(3 * time.Second) } // past the auth cache
		if _, _, err := s.Session(ctx, sess.ID, lim); periscope.ErrorCode(err) != periscope.EUnauthorized {
			t.Errorf("Session after the key was revoked elsewhere = %v, want unauthorized", err)
		}
	})
}
