package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// moveRows is how many rows MoveToFile copies a transaction (unless the
// store's moveRows, set by tests, says otherwise): the write-ahead log of
// the file holds no more than that while the checkpointer copies it out.
const moveRows = 1_000_000

// MoveToFile moves tables of the main SQLite file into the set's file
// (MigrationSet.File), for a set whose tables were created in the main
// file by earlier releases: it runs create (the file's tables, written
// with IF NOT EXISTS), copies each table's rows in primary-key order, in
// transactions of moveRows rows, writes the file to disk (a checkpoint
// that waits for every row), and only then drops the tables from the main
// file, whose freed pages it hands back to the file system when they are
// most of it (VACUUM). A transaction over two attached files commits each
// on its own, so the copy and the drop never share one: interrupted, a
// run leaves every row in the main file, and the next run resumes the
// copy after the last row the file holds. Tables the main file no longer
// has are done. PostgreSQL keeps one database: nothing to do.
func (s *Store) MoveToFile(ctx context.Context, file, create string, tables ...string) error {
	if !s.dialect.files() {
		return nil
	}
	if !slices.Contains(s.files, file) {
		return fmt.Errorf("move tables to file %q: the store was opened without it (store.Files)", file)
	}
	var left []string
	for _, t := range tables {
		var n int
		if err := s.queryRow(ctx, `SELECT COUNT(*) FROM main.sqlite_master WHERE type = 'table' AND name = ?`, t).Scan(&n); err != nil {
			return fmt.Errorf("move tables to file %q: %w", file, err)
		}
		if n > 0 {
			left = append(left, t)
		}
	}
	if len(left) == 0 {
		return nil
	}
	if _, err := s.exec(ctx, create); err != nil {
		return fmt.Errorf("move tables to file %q: create its tables: %w", file, err)
	}
	for _, t := range left {
		if err := s.copyToFile(ctx, file, t); err != nil {
			return fmt.Errorf("move %s to file %q: %w", t, file, err)
		}
	}
	// The copies are on disk before anything is dropped. The store's own
	// checkpointer (checkpointLoop) may be checkpointing the same file at
	// this moment, which makes this one busy: it is tried again a few times.
	var busy, logged, done int
	for try := 0; ; try++ {
		if err := s.queryRow(ctx, `PRAGMA `+file+`.wal_checkpoint(TRUNCATE)`).Scan(&busy, &logged, &done); err != nil {
			return fmt.Errorf("move tables to file %q: checkpoint: %w", file, err)
		}
		if busy == 0 && logged == done {
			break
		}
		if try == 20 {
			return fmt.Errorf("move tables to file %q: checkpoint incomplete (%d of %d pages, busy %d); run again", file, done, logged, busy)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	err := s.Tx(ctx, func(tx *Tx) error {
		for _, t := range left {
			if _, err := tx.Exec(ctx, `DROP TABLE main.`+t); err != nil {
				return fmt.Errorf("drop main.%s: %w", t, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("move tables to file %q: %w", file, err)
	}
	return s.shrinkMain(ctx)
}

// copyToFile copies the rows of main.table that file.table lacks, in
// primary-key order after the last one it holds.
func (s *Store) copyToFile(ctx context.Context, file, table string) error {
	cols, pk, err := s.tableColumns(ctx, "main", table)
	if err != nil {
		return err
	}
	to, _, err := s.tableColumns(ctx, file, table)
	if err != nil {
		return err
	}
	if !slices.Equal(cols, to) {
		return fmt.Errorf("columns (%s) in the main file but (%s) in the file", strings.Join(cols, ", "), strings.Join(to, ", "))
	}
	if len(pk) == 0 {
		return fmt.Errorf("no primary key")
	}
	chunk := int64(cmp.Or(s.moveRows, moveRows))
	colList, pkList := strings.Join(cols, ", "), strings.Join(pk, ", ")
	desc := strings.Join(pk, " DESC, ") + " DESC"
	after := "(" + pkList + ") > (" + strings.TrimSuffix(strings.Repeat("?, ", len(pk)), ", ") + ")"
	for {
		last := make([]any, len(pk))
		ptrs := make([]any, len(pk))
		for i := range last {
			ptrs[i] = &last[i]
		}
		where := ""
		switch err := s.queryRow(ctx, `SELECT `+pkList+` FROM `+file+`.`+table+` ORDER BY `+desc+` LIMIT 1`).Scan(ptrs...); {
		case err == nil:
			where = " WHERE " + after
		case errors.Is(err, sql.ErrNoRows):
			last = nil
		default:
			return err
		}
		var n int64
		err := s.Tx(ctx, func(tx *Tx) error {
			res, err := tx.Exec(ctx, `INSERT INTO `+file+`.`+table+` (`+colList+`) SELECT `+colList+` FROM main.`+table+where+
				` ORDER BY `+pkList+` LIMIT `+fmt.Sprint(chunk), last...)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		if err != nil {
			return err
		}
		if n < chunk {
			return nil
		}
	}
}

// tableColumns returns the columns of schema.table in order, and those of
// its primary key in the key's order.
func (s *Store) tableColumns(ctx context.Context, schema, table string) (cols, pk []string, err error) {
	rows, err := s.query(ctx, `SELECT name, pk FROM pragma_table_info(?, ?) ORDER BY cid`, table, schema)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var keyAt []int
	for rows.Next() {
		var name string
		var at int
		if err := rows.Scan(&name, &at); err != nil {
			return nil, nil, err
		}
		cols = append(cols, name)
		if at > 0 {
			keyAt = append(keyAt, at)
			pk = append(pk, name)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	if len(cols) == 0 {
		return nil, nil, fmt.Errorf("no table %s.%s", schema, table)
	}
	// Order the key's columns by their place in the key.
	sorted := slices.Clone(pk)
	for i, at := range keyAt {
		sorted[at-1] = pk[i]
	}
	return cols, sorted, nil
}

// shrinkMain rebuilds the main file when most of its pages are free (the
// tables a move dropped): VACUUM copies only the pages in use.
func (s *Store) shrinkMain(ctx context.Context) error {
	var pages, free int64
	if err := s.queryRow(ctx, `PRAGMA main.page_count`).Scan(&pages); err != nil {
		return fmt.Errorf("shrink the main file: %w", err)
	}
	if err := s.queryRow(ctx, `PRAGMA main.freelist_count`).Scan(&free); err != nil {
		return fmt.Errorf("shrink the main file: %w", err)
	}
	if free*2 < pages {
		return nil
	}
	if _, err := s.exec(ctx, `VACUUM main`); err != nil {
		return fmt.Errorf("shrink the main file: %w", err)
	}
	var busy, logged, done int
	s.queryRow(ctx, `PRAGMA main.wal_checkpoint(TRUNCATE)`).Scan(&busy, &logged, &done) // best effort: the next checkpoint shortens the log
	return nil
}
