package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/schema"
	"github.com/periscope-oss/periscope/internal/store"
)

// Opening says how a command opens its database.
type Opening struct {
	// MustExist refuses a database that does not exist (a SQLite file
	// not there, a PostgreSQL database without Periscope's tables)
	// instead of creating it: the commands that read.
	MustExist bool
	// Log, when set, is told the database on one line (the command's
	// first, at --log-level info or debug).
	Log io.Writer
	// LogLevel is the command's --log-level.
	LogLevel string
	// Options are passed to store.Open.
	Options []store.Option
}

// IsPostgres reports whether dsn names a PostgreSQL database.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// DescribeDSN names a database for messages: the absolute path of a SQLite
// file, or the PostgreSQL URL with its password hidden.
func DescribeDSN(dsn string) string {
	if IsPostgres(dsn) {
		return RedactDSN(dsn)
	}
	if abs, err := filepath.Abs(dsn); err == nil {
		return abs
	}
	return dsn
}

// Open opens (and migrates) the database dsn as o says. Errors name the
// database and, for a SQLite file, why it cannot be opened.
func Open(ctx context.Context, dsn string, o Opening) (*store.Store, error) {
	created := false
	if !IsPostgres(dsn) {
		var err error
		if created, err = CheckSQLitePath(dsn, o.MustExist); err != nil {
			return nil, err
		}
	}
	if o.Log != nil && (o.LogLevel == "" || o.LogLevel == "info" || o.LogLevel == "debug") {
		engine := "SQLite"
		if IsPostgres(dsn) {
			engine = "PostgreSQL"
		}
		note := ""
		if created {
			note = ", new file"
		}
		fmt.Fprintf(o.Log, "database: %s (%s%s)\n", DescribeDSN(dsn), engine, note)
	}
	s, err := store.Open(ctx, dsn, append([]store.Option{store.Files(schema.Sets()...)}, o.Options...)...)
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", DescribeDSN(dsn), err)
	}
	if o.MustExist && IsPostgres(dsn) {
		var n int
		if err := s.QueryRow(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&n); err != nil || n == 0 {
			s.Close()
			return nil, fmt.Errorf("database %s has no Periscope tables: run \"periscope init --database URL\" first, or give the --database (env PERISCOPE_DATABASE) that has them", DescribeDSN(dsn))
		}
	}
	if _, err := s.Migrate(ctx, schema.Sets()...); err != nil {
		s.Close()
		return nil, fmt.Errorf("migrate %s: %w", DescribeDSN(dsn), err)
	}
	// A bulk load that died left the indexes it deferred unbuilt.
	built, err := s.RestoreAbandonedIndexes(ctx)
	if len(built) > 0 && o.Log != nil {
		fmt.Fprintf(o.Log, "database: built the indexes an interrupted ingest had deferred: %s\n", strings.Join(built, ", "))
	}
	if err == nil && slices.ContainsFunc(built, func(n string) bool { return slices.Contains(hoststore.BulkDeferredIndexes, n) }) {
		// The same load left the posting rows it staged.
		var n int64
		if n, err = hoststore.New(s).FinishStagedPostings(ctx); n > 0 && o.Log != nil {
			fmt.Fprintf(o.Log, "database: indexed the %d posting rows an interrupted ingest had staged\n", n)
		}
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("database %s: %w", DescribeDSN(dsn), err)
	}
	return s, nil
}

// CheckSQLitePath says, before SQLite's "unable to open database file",
// what is wrong with path: a missing file when it must exist, a missing
// directory, a directory where the file should be, no permission. created
// reports that opening it will create the file.
func CheckSQLitePath(path string, mustExist bool) (created bool, err error) {
	abs := DescribeDSN(path)
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return false, fmt.Errorf("database %s is a directory: give --database the path of a file in it, such as %s", abs, filepath.Join(abs, "periscope.db"))
	case err == nil:
		if f, err := os.OpenFile(path, os.O_RDWR, 0); err != nil {
			return false, fmt.Errorf("database %s cannot be opened for writing: %w", abs, unwrapPath(err))
		} else {
			f.Close()
		}
		return false, nil
	case !errors.Is(err, fs.ErrNotExist):
		return false, fmt.Errorf("database %s: %w", abs, unwrapPath(err))
	case mustExist:
		return false, fmt.Errorf("no database at %s: give --database (env PERISCOPE_DATABASE) the file \"periscope init\" or \"periscope serve\" created, or run \"periscope init\" to create one", abs)
	}
	dir := filepath.Dir(abs)
	di, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, fmt.Errorf("database %s cannot be created: the directory %s does not exist (mkdir -p it, or give another --database)", abs, dir)
	case err != nil:
		return false, fmt.Errorf("database %s cannot be created: %w", abs, unwrapPath(err))
	case !di.IsDir():
		return false, fmt.Errorf("database %s cannot be created: %s is not a directory", abs, dir)
	}
	probe, err := os.CreateTemp(dir, ".periscope-write-check-*")
	if err != nil {
		return false, fmt.Errorf("database %s cannot be created: the directory %s is not writable (%v)", abs, dir, unwrapPath(err))
	}
	probe.Close()
	os.Remove(probe.Name())
	return true, nil
}

// unwrapPath drops the path and operation of a *fs.PathError: the message
// around it names the file already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
