// Package keyfile reads and creates the key files of data sealed at rest
// (the dark-web keyring, the webhook secrets key): a file of hex digits
// with mode 0600 that is created once, never overwritten, and refused when
// group or others may read it.
package keyfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Load reads the key file at path; what names it in errors ("dark-web key
// file"). When the file does not exist and create is set, a new random key
// of size bytes is written there (see Write) and returned as fresh, with
// data nil, and created is called with the path. Otherwise data is the
// file's content, for the caller to parse.
func Load(path, what string, size int, create bool, created func(path string)) (data, fresh []byte, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && create {
		key := make([]byte, size)
		if _, err := rand.Read(key); err != nil {
			return nil, nil, err
		}
		if err := Write(path, what, key); err != nil {
			return nil, nil, err
		}
		if created != nil {
			created(path)
		}
		return nil, key, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", what, err)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		return nil, nil, fmt.Errorf("%s %s is readable by others (mode %o): chmod 600 it", what, path, fi.Mode().Perm())
	}
	return b, nil, nil
}

// Write writes key hex-encoded, with a newline, to a new file at path with
// mode 0600 and syncs it; an existing file is never overwritten, and a
// file it could not write whole is removed.
func Write(path, what string, key []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", what, err)
	}
	_, err = f.WriteString(hex.EncodeToString(key) + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("write %s: %w", what, err)
	}
	return nil
}
