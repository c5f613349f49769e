package darkweb

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"sync"

	"github.com/periscope-oss/periscope/internal/keyfile"
)

// Keyring holds a master key and the keys derived from it with HKDF-SHA256:
// one AES-256-GCM key for the records, one HMAC-SHA256 key per search type
// for the blind indexes, one for record identities and one for the key
// check value stored beside the data. A keyring read from a key file of
// several keys (ring.go) takes its index, identity and check keys from
// the first, seals with the last and opens with any.
type Keyring struct {
	id    string // of the sealing key
	aead  cipher.AEAD
	index map[Type][]byte
	ident []byte
	check []byte
	root  string  // id of the key of the blind indexes
	ring  *keySet // every key that opens records, shared by merges
	// macs keeps keyed HMAC states per type for reuse (setting up an
	// HMAC is as costly as hashing a short value).
	macs map[Type]*sync.Pool
	// idents keeps keyed HMAC states for record identities.
	idents *sync.Pool
}

// KeySize is the master key's length in bytes.
const KeySize = 32

// NewKeyring derives a keyring from a 32-byte master key.
func NewKeyring(master []byte) (*Keyring, error) {
	if len(master) != KeySize {
		return nil, fmt.Errorf("master key must be %d bytes, got %d", KeySize, len(master))
	}
	derive := func(info string) []byte {
		k, err := hkdf.Key(sha256.New, master, nil, "periscope darkweb v1 "+info, 32)
		if err != nil {
			panic(err) // only for lengths over 255*32
		}
		return k
	}
	block, err := aes.NewCipher(derive("records"))
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	k := &Keyring{aead: aead, index: map[Type][]byte{}, ident: derive("identity"), check: derive("check")}
	k.macs = map[Type]*sync.Pool{}
	for _, t := range append(Types, EmailDomain) {
		key := derive("index " + string(t))
		k.index[t] = key
		k.macs[t] = &sync.Pool{New: func() any { return hmac.New(sha256.New, key) }}
	}
	ident := k.ident
	k.idents = &sync.Pool{New: func() any { return hmac.New(sha256.New, ident) }}
	k.id = hex.EncodeToString(derive("key id")[:8])
	k.root = k.id
	k.ring = &keySet{byID: map[string]*Keyring{k.id: k}, order: []string{k.id}}
	return k, nil
}

// ID names the master key without revealing it; every row records the id
// of the key that sealed it.
func (k *Keyring) ID() string { return k.id }

// Check is the key check value: stored with the data, it tells whether a
// key is the one the data was written with.
func (k *Keyring) Check() []byte {
	m := hmac.New(sha256.New, k.check)
	m.Write([]byte("periscope darkweb key check"))
	return m.Sum(nil)
}

// Index returns the blind index of a normalised value of type t.
func (k *Keyring) Index(t Type, v string) []byte {
	p := k.macs[t]
	if p == nil {
		m := hmac.New(sha256.New, k.index[t])
		m.Write([]byte(v))
		return m.Sum(nil)
	}
	m := p.Get().(hash.Hash)
	m.Reset()
	io.WriteString(m, v)
	out := m.Sum(make([]byte, 0, sha256.Size))
	p.Put(m)
	return out
}

// RecordID returns the id of a cleaned record: the keyed hash of its
// identity, hex-encoded (an unkeyed hash would let anyone with the
// database test guessed email/password pairs).
func (k *Keyring) RecordID(r *Record) string {
	m := k.idents.Get().(hash.Hash)
	m.Reset()
	io.WriteString(m, r.Identity())
	var sum [sha256.Size]byte
	out := hex.EncodeToString(m.Sum(sum[:0])[:16])
	k.idents.Put(m)
	return out
}

// Seal encrypts a record's sensitive fields, bound to its id (a sealed
// blob moved to another row does not open).
func (k *Keyring) Seal(id string, r *Record) ([]byte, error) {
	plain := r.appendBinary(make([]byte, 0, 256))
	nonce := make([]byte, k.aead.NonceSize(), k.aead.NonceSize()+len(plain)+k.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return k.aead.Seal(nonce, nonce, plain, []byte(id)), nil
}

// Open decrypts a blob sealed for id into r (the clear metadata fields
// are left as they are).
func (k *Keyring) Open(id string, blob []byte, r *Record) error {
	_, err := k.OpenBuf(id, blob, r, nil)
	return err
}

// OpenBuf is Open decrypting into buf (room reused from record to record:
// the fields are copied out of it) and returns buf, grown as needed.
func (k *Keyring) OpenBuf(id string, blob []byte, r *Record, buf []byte) ([]byte, error) {
	ns := k.aead.NonceSize()
	if len(blob) < ns+k.aead.Overhead() {
		return buf, errors.New("sealed record too short")
	}
	plain, err := k.aead.Open(buf[:0], blob[:ns], blob[ns:], []byte(id))
	if err != nil {
		return buf, errors.New("sealed record does not open with this key (wrong key or tampered row)")
	}
	if len(plain) > 0 && plain[0] == '{' {
		return plain, json.Unmarshal(plain, r) // the first format, before the binary one
	}
	return plain, r.decodeBinary(plain)
}

// KeyFileLogger is told when a key file is created.
type KeyFileLogger func(path string)

// LoadOrCreateKey reads the master key from path (64 hex digits, a
// trailing newline allowed). When the file does not exist and create is
// set it writes a new random key with mode 0600 and calls created. A key
// file readable by group or others is refused.
func LoadOrCreateKey(path string, create bool, created KeyFileLogger) (*Keyring, error) {
	if path == "" {
		return nil, errors.New("no dark-web key file given (--darkweb-key-file)")
	}
	b, master, err := keyfile.Load(path, "dark-web key file", KeySize, create, created)
	if err != nil {
		return nil, err
	}
	if master != nil {
		return NewKeyring(master)
	}
	masters, err := parseKeyFile(b)
	if err != nil {
		return nil, fmt.Errorf("dark-web key file %s: %w", path, err)
	}
	return NewKeyringOf(masters)
}

// WriteKeyFile writes master hex-encoded to a new file with mode 0600; an
// existing file is never overwritten.
func WriteKeyFile(path string, master []byte) error {
	return keyfile.Write(path, "dark-web key file", master)
}

// NewMasterKey returns a random master key.
func NewMasterKey() ([]byte, error) {
	k := make([]byte, KeySize)
	_, err := rand.Read(k)
	return k, err
}
