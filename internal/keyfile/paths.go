package keyfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The key files Periscope keeps, by kind.
const (
	Darkweb = "darkweb" // the dark-web master keyring
	Secrets = "secrets" // the webhook secrets key
)

// Getenv looks up an environment variable (os.Getenv, or a map in tests).
type Getenv func(string) string

// Default is where the key file of kind lives for the database dsn when no
// flag names one, the same for every command: beside a SQLite database, as
// periscope-KIND.key in its directory (the repository's .gitignore ignores
// *.key); for PostgreSQL, KIND.key in the per-user data directory
// (DataDir). The directory is created (mode 0700) when missing.
func Default(dsn, kind string, getenv Getenv) (string, error) {
	if !isURL(dsn) {
		return filepath.Join(filepath.Dir(dsn), "periscope-"+kind+".key"), nil
	}
	dir, err := DataDir(getenv)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create the key directory: %w", err)
	}
	return filepath.Join(dir, kind+".key"), nil
}

// DataDir is the per-user data directory: $XDG_DATA_HOME/periscope, else
// ~/.local/share/periscope.
func DataDir(getenv Getenv) (string, error) {
	if d := getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "periscope"), nil
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("no directory for key files (set HOME or XDG_DATA_HOME, or name the key file with its flag): %w", err)
		}
	}
	return filepath.Join(home, ".local", "share", "periscope"), nil
}

// legacy lists where earlier releases kept the key file of kind by
// default: the working directory (ingest and rotate-key), and for
// PostgreSQL the user's configuration directory.
func legacy(dsn, kind string, getenv Getenv) []string {
	var out []string
	if kind == Darkweb {
		out = append(out, "periscope-darkweb.key")
	}
	if isURL(dsn) {
		cfg := getenv("XDG_CONFIG_HOME")
		if cfg == "" {
			if home := getenv("HOME"); home != "" {
				cfg = filepath.Join(home, ".config")
			} else if d, err := os.UserConfigDir(); err == nil {
				cfg = d
			}
		}
		if cfg != "" {
			name := map[string]string{Darkweb: "darkweb-demo.key", Secrets: "secrets.key"}[kind]
			out = append(out, filepath.Join(cfg, "periscope", name))
		}
	}
	return out
}

// Locate returns the key file of kind to use for dsn when no flag names
// one: the default path, or, when no file is there but an earlier release
// left one at its old default, that one (old is set, for the caller to say
// so). It creates nothing.
func Locate(dsn, kind string, getenv Getenv) (path string, old bool, err error) {
	path, err = Default(dsn, kind, getenv)
	if err != nil {
		return "", false, err
	}
	if exists(path) {
		return path, false, nil
	}
	def, _ := filepath.Abs(path)
	for _, p := range legacy(dsn, kind, getenv) {
		if abs, _ := filepath.Abs(p); abs != def && exists(p) {
			return p, true, nil
		}
	}
	return path, false, nil
}

// Exists reports whether a file is at path.
func Exists(path string) bool { return exists(path) }

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

func isURL(dsn string) bool { return strings.Contains(dsn, "://") }
