package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/periscope-oss/periscope/internal/periscope"
)

// Session is a web-console session: an API key exchanged at sign-in for a
// random id the browser keeps in a cookie. Only the id's SHA-256 is stored,
// so the table does not hand out sessions; the key itself is not stored
// at all (the session names the key's row).
type Session struct {
	// ID is the session id, known only when the session is created (the
	// cookie's value); later lookups leave it as they were given it.
	ID    string
	KeyID string
	// CSRF is the token every state-changing form of the session carries.
	CSRF      string
	CreatedAt time.Time
	SeenAt    time.Time
	ExpiresAt time.Time
}

// SessionLimits are how long a session lives: Idle since its last request,
// Absolute since sign-in.
type SessionLimits struct {
	Idle, Absolute time.Duration
}

// sessionTouch is how stale seen_at may get before a lookup writes it
// again: the idle limit is kept to this precision without a write on
// every page.
const sessionTouch = time.Minute

const (
	insertSession = `INSERT INTO console_sessions (id_hash, key_id, csrf, created_at, seen_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?)`
	deleteExpiredSessions = `DELETE FROM console_sessions WHERE expires_at <= ?`
	selectSession         = `SELECT cs.key_id, k.hash, cs.csrf, cs.created_at, cs.seen_at, cs.expires_at
		FROM console_sessions cs JOIN api_keys k ON k.id = cs.key_id WHERE cs.id_hash = ?`
	touchSession      = `UPDATE console_sessions SET seen_at = ? WHERE id_hash = ?`
	deleteSession     = `DELETE FROM console_sessions WHERE id_hash = ?`
	deleteKeySessions = `DELETE FROM console_sessions WHERE key_id = ?`
)

// CreateSession signs in with an API key: it authenticates the key (a
// missing, unknown or revoked key is the API's unauthorized error) and
// stores a new session for it. Expired sessions are swept on the way.
func (s *Store) CreateSession(ctx context.Context, key string, lim SessionLimits) (Session, periscope.Principal, error) {
	p, err := s.Authenticate(ctx, key)
	if err != nil {
		return Session{}, p, err
	}
	now := s.Now().UTC().Truncate(time.Second)
	if _, err := s.exec(ctx, deleteExpiredSessions, now.Unix()); err != nil {
		return Session{}, p, fmt.Errorf("sweep expired sessions: %w", err)
	}
	sess := Session{ID: randomHex(), KeyID: p.Key.ID, CSRF: randomHex(), CreatedAt: now, SeenAt: now,
		ExpiresAt: now.Add(lim.Absolute)}
	if _, err := s.exec(ctx, insertSession, sessionHash(sess.ID), sess.KeyID, sess.CSRF, now.Unix(), now.Unix(),
		sess.ExpiresAt.Unix()); err != nil {
		return Session{}, p, fmt.Errorf("create session: %w", err)
	}
	return sess, p, nil
}

// Session returns the live session with the given id and the principal of
// its key, read fresh (credits, entitlements, revocation). A session that
// is unknown, past its absolute expiry, idle longer than lim.Idle, or whose
// key was revoked is periscope.EUnauthorized (and an expired one is
// deleted).
func (s *Store) Session(ctx context.Context, id string, lim SessionLimits) (Session, periscope.Principal, error) {
	sess := Session{ID: id}
	if id == "" || len(id) > 128 {
		return sess, periscope.Principal{}, errNoSession()
	}
	h := sessionHash(id)
	var keyHash string
	var created, seen, expires int64
	err := s.queryRow(ctx, selectSession, h).Scan(&sess.KeyID, &keyHash, &sess.CSRF, &created, &seen, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return sess, periscope.Principal{}, errNoSession()
	}
	if err != nil {
		return sess, periscope.Principal{}, fmt.Errorf("read session: %w", err)
	}
	sess.CreatedAt, sess.SeenAt, sess.ExpiresAt = time.Unix(created, 0).UTC(), time.Unix(seen, 0).UTC(), time.Unix(expires, 0).UTC()
	now := s.Now().UTC()
	if !now.Before(sess.ExpiresAt) || now.Sub(sess.SeenAt) >= lim.Idle {
		if _, err := s.exec(ctx, deleteSession, h); err != nil {
			return sess, periscope.Principal{}, fmt.Errorf("end expired session: %w", err)
		}
		return sess, periscope.Principal{}, errNoSession()
	}
	var sum [32]byte
	if n, err := hex.Decode(sum[:], []byte(keyHash)); err != nil || n != len(sum) {
		return sess, periscope.Principal{}, fmt.Errorf("read session: malformed key hash")
	}
	p, err := s.principal(ctx, sum)
	if err != nil {
		if periscope.ErrorCode(err) == periscope.EUnauthorized {
			return sess, p, errNoSession()
		}
		return sess, p, err
	}
	if now.Sub(sess.SeenAt) >= sessionTouch {
		if _, err := s.exec(ctx, touchSession, now.Unix(), h); err != nil {
			return sess, p, fmt.Errorf("touch session: %w", err)
		}
		sess.SeenAt = now.Truncate(time.Second)
	}
	return sess, p, nil
}

// DeleteSession ends a session (sign-out). Ending an unknown session is
// not an error.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	if _, err := s.exec(ctx, deleteSession, sessionHash(id)); err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}

func errNoSession() error {
	return periscope.Errorf(periscope.EUnauthorized, "No session, or the session has ended; sign in again.")
}

func sessionHash(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// randomHex is 256 random bits in hex.
func randomHex() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand: " + err.Error()) // never fails on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// RevokeAccountKey revokes one of an account's keys by id (the console's
// settings page); another account's key is the same not-found as an
// unknown id. Revoking ends the key's sessions (RevokeKey).
func (s *Store) RevokeAccountKey(ctx context.Context, accountID, id string) (periscope.APIKey, error) {
	var n int
	if err := s.queryRow(ctx, `SELECT COUNT(*) FROM api_keys WHERE id = ? AND account_id = ?`, id, accountID).Scan(&n); err != nil {
		return periscope.APIKey{}, fmt.Errorf("find key: %w", err)
	}
	if n == 0 {
		return periscope.APIKey{}, periscope.Errorf(periscope.ENotFound, "No key with this id.")
	}
	return s.RevokeKey(ctx, id)
}
