package hoststore

import (
	"context"
	"fmt"
	"strings"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/store"
)

// The reads of host names that brand watching makes (internal/brandwatch):
// it reads hosts through these, never the tables.

// HostsNamed returns the indexed hosts among names (unknown names are
// absent from the map).
func (s *Store) HostsNamed(ctx context.Context, names []string) (map[string]host.Host, error) {
	out := map[string]host.Host{}
	const chunk = 500
	for len(names) > 0 {
		n := min(chunk, len(names))
		part := names[:n]
		names = names[n:]
		args := make([]any, len(part))
		for i, v := range part {
			args[i] = host.ReverseKey(v)
		}
		rows, err := s.query(ctx, `SELECT doc FROM hosts WHERE rkey IN (?`+strings.Repeat(", ?", len(part)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("find hosts: %w", err)
		}
		for rows.Next() {
			var doc []byte
			if err := rows.Scan(&doc); err != nil {
				rows.Close()
				return nil, fmt.Errorf("find hosts: %w", err)
			}
			var h host.Host
			if err := decodeHostDoc(doc, &h); err != nil {
				rows.Close()
				return nil, fmt.Errorf("decode host: %w", err)
			}
			out[h.Host] = h
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("find hosts: %w", err)
		}
	}
	return out, nil
}

// HostNamesContaining returns up to limit indexed host names containing
// substr (a full scan of the name column: for on-demand searches only).
func (s *Store) HostNamesContaining(ctx context.Context, substr string, limit int) ([]string, error) {
	rows, err := s.query(ctx, `SELECT name FROM hosts WHERE name LIKE ? ESCAPE '\' LIMIT ?`,
		"%"+store.LikeEscape(strings.ToLower(substr))+"%", limit)
	if err != nil {
		return nil, fmt.Errorf("scan host names: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("scan host names: %w", err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// HostNamesAfter returns up to limit host names with ids above after, in id
// order, and the last id returned: a keyset walk over the whole index.
func (s *Store) HostNamesAfter(ctx context.Context, after int64, limit int) ([]string, int64, error) {
	rows, err := s.query(ctx, `SELECT id, name FROM hosts WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
	if err != nil {
		return nil, after, fmt.Errorf("walk host names: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&after, &n); err != nil {
			return nil, after, fmt.Errorf("walk host names: %w", err)
		}
		out = append(out, n)
	}
	return out, after, rows.Err()
}
