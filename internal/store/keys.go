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

	"github.com/google/uuid"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// KeyPrefixLen is how many leading characters of a key are kept in clear to
// name it in logs and audit records (8 hex digits: 32 of its 256 bits).
const KeyPrefixLen = 8

// HashKey returns the stored form of a key.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// CreateKey makes a new 256-bit key for a user of an account and returns it;
// only its hash and prefix are stored, so it cannot be shown again.
func (s *Store) CreateKey(ctx context.Context, accountID, userID, name string) (string, periscope.APIKey, error) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", periscope.APIKey{}, fmt.Errorf("generate key: %w", err)
	}
	key := hex.EncodeToString(raw[:])
	k, err := s.insertKey(ctx, accountID, userID, name, key)
	return key, k, err
}

// ImportKey stores a key chosen by the caller (the demo's fixed keys, or a key
// moved from another instance). It must be at least 32 characters.
func (s *Store) ImportKey(ctx context.Context, accountID, userID, name, key string) (periscope.APIKey, error) {
	if len(key) < 32 {
		return periscope.APIKey{}, periscope.Errorf(periscope.EInvalid, "a key must be at least 32 characters")
	}
	return s.insertKey(ctx, accountID, userID, name, key)
}

func (s *Store) insertKey(ctx context.Context, accountID, userID, name, key string) (periscope.APIKey, error) {
	now := s.Now().UTC().Truncate(time.Second)
	k := periscope.APIKey{ID: uuid.NewString(), AccountID: accountID, UserID: userID, Name: name,
		Prefix: key[:KeyPrefixLen], CreatedAt: now}
	var n int
	if err := s.queryRow(ctx, `SELECT COUNT(*) FROM users WHERE id = ? AND account_id = ?`, userID, accountID).Scan(&n); err != nil {
		return k, fmt.Errorf("check user: %w", err)
	}
	if n == 0 {
		return k, periscope.Errorf(periscope.ENotFound, "No user %q in account %q.", userID, accountID)
	}
	_, err := s.exec(ctx, `INSERT INTO api_keys (id, account_id, user_id, name, prefix, hash, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		k.ID, accountID, userID, name, k.Prefix, HashKey(key), now.Unix())
	if isUniqueViolation(err) {
		return k, &periscope.Error{Code: periscope.EConflict, Message: "This key already exists.", Err: err}
	}
	if err != nil {
		return k, fmt.Errorf("insert key: %w", err)
	}
	return k, nil
}

// Keys lists the keys of an account, revoked ones included.
func (s *Store) Keys(ctx context.Context, accountID string) ([]periscope.APIKey, error) {
	rows, err := s.query(ctx, `SELECT id, account_id, user_id, name, prefix, created_at, revoked_at FROM api_keys
		WHERE account_id = ? ORDER BY created_at, id`, accountID)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	defer rows.Close()
	var out []periscope.APIKey
	for rows.Next() {
		var k periscope.APIKey
		var created int64
		var revoked sql.NullInt64
		if err := rows.Scan(&k.ID, &k.AccountID, &k.UserID, &k.Name, &k.Prefix, &created, &revoked); err != nil {
			return nil, fmt.Errorf("list keys: %w", err)
		}
		k.CreatedAt = time.Unix(created, 0).UTC()
		if revoked.Valid {
			t := time.Unix(revoked.Int64, 0).UTC()
			k.RevokedAt = &t
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// RevokeKey revokes the key with the given id or prefix. Revoking twice is
// not an error; an unknown or ambiguous key is.
func (s *Store) RevokeKey(ctx context.Context, idOrPrefix string) (periscope.APIKey, error) {
	var k periscope.APIKey
	rows, err := s.query(ctx, `SELECT id, account_id, prefix FROM api_keys WHERE id = ? OR prefix = ?`, idOrPrefix, idOrPrefix)
	if err != nil {
		return k, fmt.Errorf("find key: %w", err)
	}
	var found []periscope.APIKey
	for rows.Next() {
		var x periscope.APIKey
		if err := rows.Scan(&x.ID, &x.AccountID, &x.Prefix); err != nil {
			rows.Close()
			return k, err
		}
		found = append(found, x)
	}
	rows.Close()
	switch len(found) {
	case 0:
		return k, periscope.Errorf(periscope.ENotFound, "No key %q.", idOrPrefix)
	case 1:
	default:
		return k, periscope.Errorf(periscope.EInvalid, "%q names %d keys; give the key id.", idOrPrefix, len(found))
	}
	k = found[0]
	now := s.Now().UTC().Truncate(time.Second)
	_, err = s.exec(ctx, `UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, now.Unix(), k.ID)
	s.auth.invalidate(k.AccountID)
	if err != nil {
		return k, fmt.Errorf("revoke key: %w", err)
	}
	// The key's console sessions end with it.
	if _, err := s.exec(ctx, deleteKeySessions, k.ID); err != nil {
		return k, fmt.Errorf("end the key's console sessions: %w", err)
	}
	k.RevokedAt = &now
	return k, nil
}

// Authenticate returns the principal of a key. A missing, unknown or revoked
// key is the same unauthorized error.
func (s *Store) Authenticate(ctx context.Context, key string) (periscope.Principal, error) {
	if key == "" || len(key) > 256 {
		return periscope.Principal{}, errUnauthorized()
	}
	// The cache is keyed by the digest itself: the hex form the table
	// stores is made only on a miss.
	return s.principal(ctx, sha256.Sum256([]byte(key)))
}

// principal returns the principal of the key whose SHA-256 is sum (the
// API's keys and the console's sessions both end here, through one cache).
func (s *Store) principal(ctx context.Context, sum [32]byte) (periscope.Principal, error) {
	now := s.Now()
	if cached, ok := s.auth.get(sum, now); ok {
		return cached, nil
	}
	hash := hex.EncodeToString(sum[:])
	var p periscope.Principal
	gen := s.auth.gen.Load()
	var revoked sql.NullInt64
	var keyCreated, userCreated, accCreated int64
	a := &p.Account
	row, err := s.QueryRowPrepared(ctx, authQuery, hash)
	if err != nil {
		return p, fmt.Errorf("authenticate: %w", err)
	}
	err = row.Scan(
		&p.Key.ID, &p.Key.UserID, &p.Key.Name, &p.Key.Prefix, &keyCreated, &revoked,
		&p.User.Email, &p.User.FirstName, &p.User.LastName, &userCreated,
		&a.ID, &a.Company, &a.Plan, &a.Enterprise, &a.OEM, &a.CreditsPerMonth, &a.CreditsUsed,
		&a.OEMCreditsPerMonth, &a.OEMCreditsUsed, &a.CreditsPeriod, &a.MaxResultsPerRequest, &a.RateLimit, &accCreated)
	if errors.Is(err, sql.ErrNoRows) {
		return p, errUnauthorized()
	}
	if err != nil {
		return p, fmt.Errorf("authenticate: %w", err)
	}
	if revoked.Valid {
		return p, errUnauthorized()
	}
	p.Key.AccountID, p.User.ID, p.User.AccountID = a.ID, p.Key.UserID, a.ID
	p.Key.CreatedAt = time.Unix(keyCreated, 0).UTC()
	p.User.CreatedAt = time.Unix(userCreated, 0).UTC()
	a.CreatedAt = time.Unix(accCreated, 0).UTC()
	s.auth.put(sum, p, gen, now)
	return p, nil
}

func errUnauthorized() error {
	return periscope.Errorf(periscope.EUnauthorized, "Invalid or missing API key.")
}

const authQuery = `SELECT k.id, k.user_id, k.name, k.prefix, k.created_at, k.revoked_at,
		u.email, u.first_name, u.last_name, u.created_at,
		a.id, a.company, a.plan, a.enterprise, a.oem, a.credits_per_month, a.credits_used,
		a.oem_credits_per_month, a.oem_credits_used, a.credits_period, a.max_results_per_request, a.rate_limit, a.created_at
	FROM api_keys k JOIN users u ON u.id = k.user_id JOIN accounts a ON a.id = k.account_id
	WHERE k.hash = ?`
