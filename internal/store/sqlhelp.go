package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"
)

// InChunk bounds the values of one IN (...) list: SQLite allows 32766
// parameters a statement, and long lists plan no better.
const InChunk = 500

// Placeholders is the list of n ? placeholders for an IN (...) list
// ("NULL", which matches nothing, when n is 0).
func Placeholders(n int) string {
	if n <= 0 {
		return "NULL"
	}
	return "?" + strings.Repeat(",?", n-1)
}

// QueryIn runs q (with one %s for the placeholder list) for each chunk of
// ids, calling fn on every row.
func QueryIn(ctx context.Context, tx *Tx, q string, ids []string, fn func(*sql.Rows) error) error {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return QueryInAny(ctx, tx, q, args, fn)
}

// QueryInAny is QueryIn for values of any type.
func QueryInAny(ctx context.Context, tx *Tx, q string, ids []any, fn func(*sql.Rows) error) error {
	for c := range slices.Chunk(ids, InChunk) {
		rows, err := tx.Query(ctx, fmt.Sprintf(q, Placeholders(len(c))), c...)
		if err != nil {
			return err
		}
		for rows.Next() {
			if err := fn(rows); err != nil {
				rows.Close()
				return err
			}
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if err := rows.Err(); err != nil {
			return err
		}
	}
	return nil
}

// FirstBy keeps the first item of each key, sorted by key (a fixed order
// keeps concurrent PostgreSQL writers from deadlocking), and says how many
// later duplicates it dropped.
func FirstBy[T any, K cmp.Ordered](items []T, key func(T) K) ([]T, int) {
	seen := make(map[K]bool, len(items))
	batch := make([]T, 0, len(items))
	for _, it := range items {
		if k := key(it); !seen[k] {
			seen[k] = true
			batch = append(batch, it)
		}
	}
	slices.SortFunc(batch, func(a, b T) int { return cmp.Compare(key(a), key(b)) })
	return batch, len(items) - len(batch)
}

// LikeEscape escapes s for a LIKE pattern written with ESCAPE '\'.
func LikeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// Unix is t in Unix seconds, 0 for the zero time (columns of times are
// BIGINT seconds on both engines).
func Unix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// FromUnix is the inverse of Unix.
func FromUnix(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(n, 0).UTC()
}

// VacuumAnalyze refreshes the planner's statistics of tables after a bulk
// load (PostgreSQL; nothing on SQLite).
func (s *Store) VacuumAnalyze(ctx context.Context, tables ...string) error {
	q := s.dialect.VacuumAnalyze(tables...)
	if q == "" {
		return nil
	}
	if _, err := s.db.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("analyze %s: %w", strings.Join(tables, ", "), err)
	}
	return nil
}

// BoolInt is b as the 0 or 1 that flag columns hold (INTEGER on both
// engines, so that one SQL text serves both).
func BoolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
