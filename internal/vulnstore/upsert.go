package vulnstore

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/periscope-oss/periscope/internal/store"
)

// upsert is one kind of record's part in the skeleton UpsertVulns,
// UpsertAdvisories and UpsertExploits share (runUpsert): T is the record,
// K its key, S its stored row.
type upsert[K cmp.Ordered, T, S any] struct {
	what string // the records, in errors ("vulnerabilities")
	key  func(T) K
	// load selects the stored rows of a set of keys (%s: their
	// placeholders), and scan reads one: its key and row.
	load string
	scan func(*sql.Rows) (K, S, error)
	// encode returns x's stored document, or nil when x changes nothing
	// stored (old, when ok, is its stored row).
	encode func(x T, old S, ok bool) ([]byte, error)
	// text takes the named records' text out of the text index (remove,
	// before they change) or indexes their new text.
	text func(ctx context.Context, tx *store.Tx, keys []any, remove bool) error
	// prepare returns the writer of one changed record in tx.
	prepare func(ctx context.Context, tx *store.Tx) (func(x T, doc []byte, old S, ok bool) error, error)
}

// newestByKey folds the records of xs that share a key into the newest
// (newer(a, b): a is newer than b) and sorts them by key; folded counts
// the records folded away.
func newestByKey[T any](xs []T, key func(T) string, newer func(a, b T) bool) (batch []T, folded int) {
	byKey := make(map[string]int, len(xs))
	batch = make([]T, 0, len(xs))
	for _, x := range xs {
		if i, ok := byKey[key(x)]; ok {
			folded++
			if newer(x, batch[i]) {
				batch[i] = x
			}
			continue
		}
		byKey[key(x)] = len(batch)
		batch = append(batch, x)
	}
	slices.SortFunc(batch, func(a, b T) int { return cmp.Compare(key(a), key(b)) })
	return batch, folded
}

// runUpsert stores batch (folded: records already counted unchanged) in
// one transaction that takes the vulnerability writers' turn: it reads the
// stored rows of the batch's keys, keeps the records that change what is
// stored, takes their old text out of the text index, writes them and
// indexes their new text.
func runUpsert[K cmp.Ordered, T, S any](ctx context.Context, s *Store, u upsert[K, T, S], batch []T, folded int) (VulnStats, error) {
	var st VulnStats
	err := s.st.Tx(ctx, func(tx *store.Tx) error {
		if err := tx.Dialect().TakeTurns(ctx, tx, store.LockVulns); err != nil {
			return err
		}
		st = VulnStats{Unchanged: folded}
		existing, err := loadStored(ctx, tx, u, batch)
		if err != nil {
			return err
		}
		docs, updated, touched, err := changedDocs(u, batch, existing)
		if err != nil {
			return err
		}
		st.Unchanged += len(batch) - len(touched)
		if err := u.text(ctx, tx, updated, true); err != nil {
			return err
		}
		write, err := u.prepare(ctx, tx)
		if err != nil {
			return err
		}
		for i, x := range batch {
			if docs[i] == nil {
				continue
			}
			old, ok := existing[u.key(x)]
			if err := write(x, docs[i], old, ok); err != nil {
				return err
			}
			if ok {
				st.Updated++
			} else {
				st.Inserted++
			}
		}
		return u.text(ctx, tx, touched, false)
	})
	if err != nil {
		return VulnStats{}, err
	}
	return st, nil
}

// loadStored reads the stored rows of the batch's keys.
func loadStored[K cmp.Ordered, T, S any](ctx context.Context, tx *store.Tx, u upsert[K, T, S], batch []T) (map[K]S, error) {
	existing := map[K]S{}
	keys := make([]any, len(batch))
	for i, x := range batch {
		keys[i] = u.key(x)
	}
	err := store.QueryInAny(ctx, tx, u.load, keys, func(rows *sql.Rows) error {
		k, row, err := u.scan(rows)
		if err != nil {
			return err
		}
		existing[k] = row
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", u.what, err)
	}
	return existing, nil
}

// changedDocs encodes the batch: docs[i] is the document of batch[i], nil
// when it changes nothing; updated are the keys of the stored records
// among the changed, touched the keys of every changed record.
func changedDocs[K cmp.Ordered, T, S any](u upsert[K, T, S], batch []T, existing map[K]S) (docs [][]byte, updated, touched []any, err error) {
	docs = make([][]byte, len(batch))
	for i, x := range batch {
		old, ok := existing[u.key(x)]
		doc, err := u.encode(x, old, ok)
		if err != nil {
			return nil, nil, nil, err
		}
		if doc == nil {
			continue
		}
		if ok {
			updated = append(updated, u.key(x))
		}
		docs[i] = doc
		touched = append(touched, u.key(x))
	}
	return docs, updated, touched, nil
}
