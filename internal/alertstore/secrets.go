package alertstore

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/periscope-oss/periscope/internal/keyfile"
)

// SecretsKeySize is the size of the key webhook secrets are sealed with
// (AES-256-GCM).
const SecretsKeySize = 32

// SecretsKey seals webhook signing secrets at rest. Its ID, derived from
// the key, is stored beside each sealed secret so that a store opened
// with another key is refused instead of signing with garbage.
type SecretsKey struct {
	id   string
	aead cipher.AEAD
}

// ErrWrongSecretsKey is returned by UnlockSecrets when webhook secrets
// were sealed under another key than the one given.
var ErrWrongSecretsKey = errors.New("webhook secrets were sealed with another key than the secrets key file holds: start with the key file they were written with (--secrets-key-file)")

// ErrNoSecretsKey is returned by endpoint reads and writes before
// UnlockSecrets.
var ErrNoSecretsKey = errors.New("webhook secrets key not loaded")

// NewSecretsKey returns the sealing key of 32 key bytes.
func NewSecretsKey(key []byte) (*SecretsKey, error) {
	if len(key) != SecretsKeySize {
		return nil, fmt.Errorf("webhook secrets key: want %d bytes, got %d", SecretsKeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("periscope webhook secrets key id"))
	return &SecretsKey{id: hex.EncodeToString(m.Sum(nil)[:8]), aead: aead}, nil
}

// ID names the key (not secret: a keyed hash of a constant).
func (k *SecretsKey) ID() string { return k.id }

// String keeps the key out of logs.
func (k *SecretsKey) String() string { return "webhook secrets key " + k.id }

const sealedPrefix = "v1:"

// seal encrypts a secret of the endpoint id (bound as associated data, so
// a sealed value copied to another row does not open).
func (k *SecretsKey) seal(endpointID, secret string) (string, error) {
	if secret == "" {
		return "", nil
	}
	return k.Seal("webhook_endpoints:"+endpointID, []byte(secret))
}

func (k *SecretsKey) open(endpointID, sealed string) (string, error) {
	if sealed == "" {
		return "", nil
	}
	pt, err := k.Open("webhook_endpoints:"+endpointID, sealed)
	switch {
	case errors.Is(err, errNotSealed):
		return "", fmt.Errorf("webhook endpoint %s: secret is not sealed", endpointID)
	case err != nil:
		return "", fmt.Errorf("webhook endpoint %s: secret does not open with %s", endpointID, k)
	}
	return string(pt), nil
}

var errNotSealed = errors.New("not a sealed value")

// Seal encrypts plain with AES-256-GCM under a fresh nonce, bound to
// purpose (associated data naming what the value is and whose: a sealed
// value copied to another row, table or owner does not open), as "v1:" and
// base64.
func (k *SecretsKey) Seal(purpose string, plain []byte) (string, error) {
	nonce := make([]byte, k.aead.NonceSize(), k.aead.NonceSize()+len(plain)+k.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	ct := k.aead.Seal(nonce, nonce, plain, []byte(purpose))
	return sealedPrefix + base64.StdEncoding.EncodeToString(ct), nil
}

// Open decrypts a value Seal sealed for purpose. It fails for a value
// sealed with another key or for another purpose.
func (k *SecretsKey) Open(purpose, sealed string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(sealed, sealedPrefix))
	if !strings.HasPrefix(sealed, sealedPrefix) || err != nil || len(b) < k.aead.NonceSize() {
		return nil, errNotSealed
	}
	n := k.aead.NonceSize()
	pt, err := k.aead.Open(nil, b[:n], b[n:], []byte(purpose))
	if err != nil {
		return nil, fmt.Errorf("value does not open with %s", k)
	}
	return pt, nil
}

// LoadOrCreateSecretsKey reads the key file at path (64 hex digits, mode
// 0600). When it does not exist and create is set, a new random key is
// written there with mode 0600 and created is called with the path.
func LoadOrCreateSecretsKey(path string, create bool, created func(path string)) (*SecretsKey, error) {
	if path == "" {
		return nil, errors.New("no webhook secrets key file given (--secrets-key-file)")
	}
	b, key, err := keyfile.Load(path, "webhook secrets key file", SecretsKeySize, create, created)
	if err != nil {
		return nil, err
	}
	if key == nil {
		key, err = hex.DecodeString(strings.TrimSpace(string(b)))
		if err != nil || len(key) != SecretsKeySize {
			return nil, fmt.Errorf("webhook secrets key file %s: want %d hex digits", path, 2*SecretsKeySize)
		}
	}
	return NewSecretsKey(key)
}

const (
	selectForeignKeys = `SELECT COUNT(*) FROM webhook_endpoints WHERE secret_key_id <> '' AND secret_key_id <> ?`
	selectClearRows   = `SELECT id, secret, previous_secret FROM webhook_endpoints WHERE secret_key_id = ''`
	sealClearRow      = `UPDATE webhook_endpoints SET secret = ?, previous_secret = ?, secret_key_id = ? WHERE id = ? AND secret_key_id = ''`
)

// SealedKeyID returns the id of the key webhook secrets are sealed with,
// "" when none is sealed yet: serve asks before it creates a new key file,
// so it never writes one it must then refuse.
func (s *Store) SealedKeyID(ctx context.Context) (string, error) {
	var id string
	err := s.db.DB().QueryRowContext(ctx, `SELECT secret_key_id FROM webhook_endpoints WHERE secret_key_id <> '' LIMIT 1`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read webhook secrets key id: %w", err)
	}
	return id, nil
}

// UnlockSecrets makes the store seal and open webhook secrets with k. It
// fails with ErrWrongSecretsKey when any endpoint's secrets were sealed
// under another key, and seals the secrets of endpoints written before
// they were sealed (stored in clear), returning how many. On SQLite the
// clear values are overwritten on disk (secure_delete, WAL checkpoint); on
// PostgreSQL the table is vacuumed so no dead row keeps them.
func (s *Store) UnlockSecrets(ctx context.Context, k *SecretsKey) (sealed int, err error) {
	var foreign int
	if err := s.db.DB().QueryRowContext(ctx, s.db.Rebind(selectForeignKeys), k.ID()).Scan(&foreign); err != nil {
		return 0, fmt.Errorf("check webhook secrets key: %w", err)
	}
	if foreign > 0 {
		return 0, ErrWrongSecretsKey
	}
	s.secrets = k
	conn, err := s.db.DB().Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	restore, err := s.dl.overwriteDeleted(ctx, conn)
	if err != nil {
		return 0, err
	}
	defer restore()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, selectClearRows)
	if err != nil {
		return 0, fmt.Errorf("find clear webhook secrets: %w", err)
	}
	type clear struct{ id, secret, prev string }
	var todo []clear
	for rows.Next() {
		var c clear
		if err := rows.Scan(&c.id, &c.secret, &c.prev); err != nil {
			rows.Close()
			return 0, err
		}
		todo = append(todo, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, c := range todo {
		sec, err := k.seal(c.id, c.secret)
		if err != nil {
			return 0, err
		}
		prev, err := k.seal(c.id, c.prev)
		if err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, s.db.Rebind(sealClearRow), sec, prev, k.ID(), c.id); err != nil {
			return 0, fmt.Errorf("seal webhook secret: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("seal webhook secrets: %w", err)
	}
	if len(todo) == 0 {
		return 0, nil
	}
	return len(todo), s.dl.purgeOld(ctx, conn, "webhook_endpoints", "sealing webhook secrets")
}

// sealEndpoint returns e's secrets sealed for storage.
func (s *Store) sealEndpoint(e *Endpoint) (secret, prev string, err error) {
	if s.secrets == nil {
		return "", "", ErrNoSecretsKey
	}
	if secret, err = s.secrets.seal(e.ID, e.Secret); err != nil {
		return "", "", err
	}
	prev, err = s.secrets.seal(e.ID, e.PreviousSecret)
	return secret, prev, err
}

// openSecrets opens secrets read from the row of endpoint id.
func (s *Store) openSecrets(id string, secrets ...*string) error {
	if s.secrets == nil {
		return ErrNoSecretsKey
	}
	for _, p := range secrets {
		v, err := s.secrets.open(id, *p)
		if err != nil {
			return err
		}
		*p = v
	}
	return nil
}
