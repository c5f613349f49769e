package darkwebstore

import (
	"context"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/store"
)

// sealOnly marks a darkweb_keys row of a key that seals records but keys
// no blind index (a key added by online rotation). Unlock refuses a key
// file that lacks one of them.
const sealOnly = 2

const sqlAddSealingKey = `INSERT INTO darkweb_keys (key_id, check_value, active, created_at) VALUES (?, ?, 2, ?)
	ON CONFLICT (key_id) DO NOTHING`

// registerSealingKey records k's sealing key, when it is not the index
// key, before anything is sealed with it.
func registerSealingKey(ctx context.Context, tx *store.Tx, k *darkweb.Keyring, now int64) error {
	if k.ID() == k.IndexID() {
		return nil
	}
	if _, err := tx.Exec(ctx, sqlAddSealingKey, k.ID(), k.SealingCheck(), now); err != nil {
		return fmt.Errorf("record the sealing key: %w", err)
	}
	return nil
}

// keyReload reads the key file again when a record sealed with an unknown
// key turns up (a rotation running beside the server), at most once a
// second.
type keyReload struct {
	mu   sync.Mutex
	load func() (*darkweb.Keyring, error)
	last time.Time
}

// SetKeyReload tells the store how to read the key file again: when a
// record sealed with a key it does not hold turns up, the keys of the file
// are merged into the keyring in use (the blind-index key must not
// change), so a server keeps answering while `periscope darkweb
// rotate-key` re-seals records with a new key.
func (d *Store) SetKeyReload(load func() (*darkweb.Keyring, error)) {
	d.reload = &keyReload{load: load}
}

const (
	sqlResealPage = `SELECT seq, id, key_id, blob FROM darkweb_records WHERE seq > ? AND key_id <> ? ORDER BY seq LIMIT ?`
	sqlReseal     = `UPDATE darkweb_records SET key_id = ?, blob = ? WHERE seq = ? AND key_id = ?`
	sqlLeft       = `SELECT COUNT(*) FROM darkweb_records WHERE key_id <> ?`
	sqlRetireKeys = `DELETE FROM darkweb_keys WHERE active = 2 AND key_id <> ?`
)

// ResealBatch is how many records one re-sealing transaction rewrites.
const ResealBatch = 1000

// Reseal re-encrypts every record not sealed with the keyring's sealing
// key, in transactions of ResealBatch records, while searches and
// listings go on: record ids, blind indexes and dates do not change, only
// each row's key id and sealed blob. A pass walks the records by seq; passes
// repeat (three at most) while records sealed with other keys remain (an
// ingest that started before the rotation still sealing with an older
// key); the keys no record uses any more are then forgotten. It returns
// how many records it re-sealed and how many remain under other keys.
// Interrupted, it is resumed by running it again.
func (d *Store) Reseal(ctx context.Context, progress func(done int)) (done, left int, err error) {
	if d.keys == nil {
		return 0, 0, ErrLocked
	}
	k := d.keys
	for pass := 0; pass < 3; pass++ {
		var cursor int64
		for {
			rows, err := d.s.DB().QueryContext(ctx, d.s.Rebind(sqlResealPage), cursor, k.ID(), ResealBatch)
			if err != nil {
				return done, 0, fmt.Errorf("reseal: read: %w", err)
			}
			var page []row
			for rows.Next() {
				var r row
				var id []byte
				if err := rows.Scan(&r.seq, &id, &r.keyID, &r.blob); err != nil {
					rows.Close()
					return done, 0, err
				}
				r.id = hex.EncodeToString(id)
				page = append(page, r)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return done, 0, err
			}
			if len(page) == 0 {
				break
			}
			cursor = page[len(page)-1].seq
			n, err := d.resealPage(ctx, k, page)
			if err != nil {
				return done, 0, err
			}
			done += n
			if progress != nil {
				progress(done)
			}
		}
		if err := d.s.DB().QueryRowContext(ctx, d.s.Rebind(sqlLeft), k.ID()).Scan(&left); err != nil {
			return done, 0, fmt.Errorf("reseal: count: %w", err)
		}
		if left == 0 {
			break
		}
	}
	if left == 0 {
		if _, err := d.s.DB().ExecContext(ctx, d.s.Rebind(sqlRetireKeys), k.ID()); err != nil {
			return done, 0, fmt.Errorf("reseal: forget retired keys: %w", err)
		}
	}
	// The heads still hold rows sealed with the older keys (searches read
	// those from the records table once the keys are gone): the builder's
	// next pass copies them again.
	if _, err := d.s.DB().ExecContext(ctx, `DELETE FROM darkweb_heads_done`); err != nil {
		return done, left, fmt.Errorf("reseal: %w", err)
	}
	d.dropCache()
	return done, left, nil
}

// resealPage re-seals one page in one transaction. A row changed since it
// was read (re-sealed by another run) is left alone by the key_id guard.
func (d *Store) resealPage(ctx context.Context, k *darkweb.Keyring, page []row) (int, error) {
	type sealed struct {
		seq    int64
		blob   []byte
		oldKey string
	}
	out := make([]sealed, 0, len(page))
	for _, r := range page {
		var rec darkweb.Record
		if err := d.openRow(r, &rec); err != nil {
			return 0, fmt.Errorf("reseal: %w", err)
		}
		blob, err := k.Seal(r.id, &rec)
		if err != nil {
			return 0, err
		}
		out = append(out, sealed{r.seq, blob, r.keyID})
	}
	n := 0
	err := d.s.Tx(ctx, func(tx *store.Tx) error {
		n = 0
		if err := registerSealingKey(ctx, tx, k, d.s.Now().Unix()); err != nil {
			return err
		}
		st, err := tx.Prepared(ctx, sqlReseal)
		if err != nil {
			return err
		}
		for _, s := range out {
			res, err := st.ExecContext(ctx, k.ID(), s.blob, s.seq, s.oldKey)
			if err != nil {
				return err
			}
			if c, _ := res.RowsAffected(); c > 0 {
				n++
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("reseal: write: %w", err)
	}
	return n, nil
}
