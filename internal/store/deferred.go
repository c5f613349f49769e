package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Deferred indexes: a bulk load into an empty table drops the indexes it
// does not read itself and builds them once at its end. Inserting millions
// of rows into an index in random key order touches a page of it a row,
// long after the index outgrew memory; one build sorts the keys and writes
// each page once (and packs them full: a B-tree grown by random inserts
// keeps its pages about two thirds full). The definition of each dropped
// index is kept in deferred_indexes (migration 49) in the transaction that
// drops it, so that nothing is forgotten: RestoreIndexes builds them again
// at the load's end, and RestoreAbandonedIndexes, at every open, builds
// those of a load that died.

// StaleDeferral is how long the heartbeat of a deferral owned by another
// machine may be silent before its load is taken for dead.
const StaleDeferral = 5 * time.Minute

// DeferIndexes drops the named indexes, keeping their definitions, and
// returns the names it dropped: an index that does not exist, or that
// another load deferred already, is left out. The caller renews the
// deferral with TouchDeferredIndexes while it loads, and ends it with
// RestoreIndexes.
func (s *Store) DeferIndexes(ctx context.Context, names ...string) ([]string, error) {
	var dropped []string
	err := s.Tx(ctx, func(tx *Tx) error {
		dropped = dropped[:0]
		for _, name := range names {
			def, ok, err := s.dialect.indexDef(ctx, tx, name)
			if err != nil {
				return fmt.Errorf("defer index %s: %w", name, err)
			}
			if !ok {
				continue
			}
			if _, err := tx.Exec(ctx, `INSERT INTO deferred_indexes (name, definition, owner, touched) VALUES (?, ?, ?, ?)`,
				name, def, processOwner(), s.Now().Unix()); err != nil {
				return fmt.Errorf("defer index %s: %w", name, err)
			}
			if _, err := tx.Exec(ctx, `DROP INDEX `+quoteIdent(name)); err != nil {
				return fmt.Errorf("defer index %s: %w", name, err)
			}
			dropped = append(dropped, name)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return dropped, nil
}

// TouchDeferredIndexes renews the heartbeat of deferred indexes: the load
// that deferred them is alive.
func (s *Store) TouchDeferredIndexes(ctx context.Context, names []string) error {
	for _, name := range names {
		if _, err := s.exec(ctx, `UPDATE deferred_indexes SET touched = ? WHERE name = ?`, s.Now().Unix(), name); err != nil {
			return fmt.Errorf("touch deferred index %s: %w", name, err)
		}
	}
	return nil
}

// RestoreIndexes builds the named deferred indexes again and returns the
// names it built. Each index is built and its row removed in one
// transaction; an index that exists already is only forgotten.
func (s *Store) RestoreIndexes(ctx context.Context, names ...string) ([]string, error) {
	return s.restoreWhere(ctx, func(d deferredIndex) bool { return slices.Contains(names, d.name) })
}

// RestoreAbandonedIndexes builds again the deferred indexes whose load
// died: its process is gone from this machine, or, on another, its
// heartbeat is older than StaleDeferral. It returns the names it built.
func (s *Store) RestoreAbandonedIndexes(ctx context.Context) ([]string, error) {
	now := s.Now()
	return s.restoreWhere(ctx, func(d deferredIndex) bool { return d.abandoned(now) })
}

// restoreWhere builds the deferred indexes that pick chooses, in name
// order, and returns the names it built.
func (s *Store) restoreWhere(ctx context.Context, pick func(deferredIndex) bool) ([]string, error) {
	ds, err := s.deferredIndexes(ctx)
	if err != nil {
		return nil, err
	}
	var built []string
	for _, d := range ds {
		if !pick(d) {
			continue
		}
		ok, err := s.restoreIndex(ctx, d)
		if err != nil {
			return built, err
		}
		if ok {
			built = append(built, d.name)
		}
	}
	return built, nil
}

type deferredIndex struct {
	name, def, owner string
	touched          int64
}

// abandoned reports whether the load that deferred the index is gone.
func (d deferredIndex) abandoned(now time.Time) bool {
	host, pid, ok := strings.Cut(d.owner, ":")
	if me, err := os.Hostname(); ok && err == nil && host == me {
		n, err := strconv.Atoi(pid)
		if err != nil || n <= 0 {
			return true
		}
		return !processAlive(n)
	}
	return now.Unix()-d.touched > int64(StaleDeferral/time.Second)
}

// processOwner names this process for deferred_indexes.owner.
func processOwner() string {
	host, _ := os.Hostname()
	return host + ":" + strconv.Itoa(os.Getpid())
}

// deferredIndexes reads deferred_indexes (of a migrated store).
func (s *Store) deferredIndexes(ctx context.Context) ([]deferredIndex, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, definition, owner, touched FROM deferred_indexes ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("read deferred indexes: %w", err)
	}
	defer rows.Close()
	var out []deferredIndex
	for rows.Next() {
		var d deferredIndex
		if err := rows.Scan(&d.name, &d.def, &d.owner, &d.touched); err != nil {
			return nil, fmt.Errorf("read deferred indexes: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read deferred indexes: %w", err)
	}
	return out, nil
}

// restoreIndex builds one deferred index and forgets it, in one
// transaction; built is false when another process did first. The build
// runs on a connection of its own, with a small page cache and its sort
// spilling to a file on SQLite: with a bulk load's 256 MiB cache and
// temporary storage in memory, building an index of ten million keys took
// 1.3 GB more.
func (s *Store) restoreIndex(ctx context.Context, d deferredIndex) (built bool, err error) {
	c, err := s.db.Conn(ctx)
	if err != nil {
		return false, fmt.Errorf("build deferred index %s: %w", d.name, err)
	}
	defer c.Close()
	if pragmas := s.dialect.indexBuildPragmas(); len(pragmas) > 0 {
		// Settings for this build alone: the connection leaves the pool.
		defer c.Raw(func(any) error { return driver.ErrBadConn })
		for _, p := range pragmas {
			if _, err := c.ExecContext(ctx, p); err != nil {
				return false, fmt.Errorf("build deferred index %s: %w", d.name, err)
			}
		}
	}
	sqlTx, err := inTurn(ctx, func() (*sql.Tx, error) { return c.BeginTx(ctx, nil) })
	if err != nil {
		return false, fmt.Errorf("build deferred index %s: %w", d.name, err)
	}
	tx := &Tx{tx: sqlTx, d: s.dialect, s: s}
	defer tx.tx.Rollback()
	var n int
	// Read again under the transaction: another process may have built
	// it meanwhile.
	if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM deferred_indexes WHERE name = ?`, d.name).Scan(&n); err != nil || n == 0 {
		return false, err
	}
	_, exists, err := s.dialect.indexDef(ctx, tx, d.name)
	if err != nil {
		return false, fmt.Errorf("build deferred index %s: %w", d.name, err)
	}
	if !exists {
		if _, err := tx.Exec(ctx, d.def); err != nil {
			return false, fmt.Errorf("build deferred index %s: %w", d.name, err)
		}
	}
	if _, err := tx.Exec(ctx, `DELETE FROM deferred_indexes WHERE name = ?`, d.name); err != nil {
		return false, fmt.Errorf("build deferred index %s: %w", d.name, err)
	}
	if err := tx.tx.Commit(); err != nil {
		return false, fmt.Errorf("build deferred index %s: commit: %w", d.name, err)
	}
	return !exists, nil
}

// quoteIdent quotes an SQL identifier (both engines take double quotes).
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}
