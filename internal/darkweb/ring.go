package darkweb

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// A key file holds one master key (64 hex digits, the first format) or a
// keyring: one key a line, "#" comments allowed. The first key keys the
// blind indexes, the record ids and the key check value, for as long as
// the data lives (changing it means re-indexing every record: rotate-key
// --reindex); the last key seals new records; every key listed opens the
// records it sealed. Online rotation appends a key and re-seals the
// records with it (docs/operations.md "Rotating the dark-web key").

// keySet is every key of a keyring by id, in file order. Merging a
// reloaded key file into a keyring in use adds to it, so it is guarded.
type keySet struct {
	mu    sync.RWMutex
	byID  map[string]*Keyring
	order []string
}

func (s *keySet) get(id string) *Keyring {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.byID[id]
}

// ErrUnknownKey is wrapped by OpenKey's error for a record sealed with a
// key the keyring does not hold.
var ErrUnknownKey = errors.New("record sealed with a key the key file does not hold")

// NewKeyringOf derives a keyring from the master keys of a key file, in
// file order: indexes from the first, sealing with the last.
func NewKeyringOf(masters [][]byte) (*Keyring, error) {
	if len(masters) == 0 {
		return nil, errors.New("no key")
	}
	set := &keySet{byID: map[string]*Keyring{}}
	var keys []*Keyring
	for _, m := range masters {
		k, err := NewKeyring(m)
		if err != nil {
			return nil, err
		}
		if set.byID[k.id] != nil {
			return nil, fmt.Errorf("key %s listed twice", k.id)
		}
		set.byID[k.id] = k
		set.order = append(set.order, k.id)
		keys = append(keys, k)
	}
	root, last := keys[0], keys[len(keys)-1]
	return &Keyring{id: last.id, aead: last.aead, index: root.index, ident: root.ident, check: root.check, macs: root.macs, idents: root.idents, root: root.id, ring: set}, nil
}

// IndexID names the key of the blind indexes and record ids (the first of
// the key file); it is the id the data's key check value is stored under.
func (k *Keyring) IndexID() string { return k.root }

// SealingCheck is the key check value of the sealing key.
func (k *Keyring) SealingCheck() []byte { return k.ring.get(k.id).Check() }

// Has reports whether the keyring opens records sealed with key id.
func (k *Keyring) Has(id string) bool { return k.ring.get(id) != nil }

// KeyIDs lists the ids of the keyring's keys in key-file order.
func (k *Keyring) KeyIDs() []string {
	k.ring.mu.RLock()
	defer k.ring.mu.RUnlock()
	return append([]string(nil), k.ring.order...)
}

// OpenKey decrypts a blob sealed with key keyID for id into r. A key the
// keyring lacks is an error wrapping ErrUnknownKey.
func (k *Keyring) OpenKey(keyID, id string, blob []byte, r *Record) error {
	_, err := k.OpenKeyBuf(keyID, id, blob, r, nil)
	return err
}

// OpenKeyBuf is OpenKey decrypting into buf (see OpenBuf).
func (k *Keyring) OpenKeyBuf(keyID, id string, blob []byte, r *Record, buf []byte) ([]byte, error) {
	s := k.ring.get(keyID)
	if s == nil {
		return buf, fmt.Errorf("%w: key %s", ErrUnknownKey, keyID)
	}
	return s.OpenBuf(id, blob, r, buf)
}

// Merge adds the keys of other (a key file read again) to k (and to every
// keyring sharing its keys), so records
// sealed with them open; k keeps sealing with its own key. Both must key
// the blind indexes alike.
func (k *Keyring) Merge(other *Keyring) error {
	if other.root != k.root {
		return fmt.Errorf("the key file's first key is now %s, not %s: the blind indexes would not match; restore the key file", other.root, k.root)
	}
	if other.ring == k.ring {
		return nil
	}
	other.ring.mu.RLock()
	add := make([]*Keyring, 0, len(other.ring.order))
	for _, id := range other.ring.order {
		add = append(add, other.ring.byID[id])
	}
	other.ring.mu.RUnlock()
	k.ring.mu.Lock()
	defer k.ring.mu.Unlock()
	for _, o := range add {
		if k.ring.byID[o.id] == nil {
			k.ring.byID[o.id] = o
			k.ring.order = append(k.ring.order, o.id)
		}
	}
	return nil
}

// parseKeyFile reads the master keys of a key file.
func parseKeyFile(b []byte) ([][]byte, error) {
	var out [][]byte
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m, err := hex.DecodeString(line)
		if err != nil || len(m) != KeySize {
			return nil, fmt.Errorf("line %d: want %d hex digits", i+1, 2*KeySize)
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("want %d hex digits", 2*KeySize)
	}
	return out, nil
}

// keyringHeader opens a key file of several keys.
const keyringHeader = `# Periscope dark-web keyring: keep it secret (mode 0600) and back it up after
# every rotation. One key a line: the first keys the blind indexes and record
# ids, the last seals new records, every one opens the records it sealed.
# Never reorder or remove lines while records are sealed with them.
`

// AddKeyToFile appends a new random key to the key file at path (which
// must exist), replacing the file atomically: a crash leaves the old file
// or the new one, never a half-written one. FILE.tmp, created exclusively
// before the file is read, keeps two rotations from each dropping the
// other's key; a crash can leave it behind (it holds no key in use until
// renamed), to be removed by hand. It returns the keyring of the new
// file, which seals with the new key.
func AddKeyToFile(path string) (*Keyring, error) {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("%s exists: another rotation is writing the key file (if none is, an interrupted one left it: remove it and run again)", tmp)
	}
	if err != nil {
		return nil, fmt.Errorf("write dark-web key file: %w", err)
	}
	renamed := false
	defer func() {
		if !renamed {
			f.Close()
			os.Remove(tmp)
		}
	}()
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read dark-web key file: %w", err)
	}
	masters, err := parseKeyFile(b)
	if err != nil {
		return nil, fmt.Errorf("dark-web key file %s: %w", path, err)
	}
	next, err := NewMasterKey()
	if err != nil {
		return nil, err
	}
	masters = append(masters, next)
	var buf bytes.Buffer
	buf.WriteString(keyringHeader)
	for _, m := range masters {
		buf.WriteString(hex.EncodeToString(m) + "\n")
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		return nil, fmt.Errorf("write dark-web key file: %w", err)
	}
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("write dark-web key file: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("write dark-web key file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("replace dark-web key file: %w", err)
	}
	renamed = true
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return NewKeyringOf(masters)
}
