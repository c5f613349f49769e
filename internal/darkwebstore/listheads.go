package darkwebstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"

	"github.com/periscope-oss/periscope/internal/store"
)

// Listing heads (migration 50). A listing page of one email domain
// (compromised credentials, discovered emails) takes its record numbers
// from the listing rows of the index, then reads up to 1,000 records by
// number: 1,000 random reads over the whole records table, most of a
// page's time at 10 million records (BENCHMARKS.md). A listing head is a
// copy of the record row of every listing row of a domain's emails (code
// 18) in the index's order, kept in darkweb_heads under that listing key,
// for every domain with headMin rows or more: a page is then one range
// scan of the head between the page's first and last rows. A record listed
// under a domain for its password or hash (code 17) is listed under it for
// its email too (both come from the email's domains), so the credentials
// listing reads the same head, passing over the records without a secret
// between its rows.
//
// As answer heads are, a listing head is never trusted: a page compares
// the head's rows with the page the index gives and reads what the head
// lacks by number. BuildHeads keeps the heads: a head is copied whole the
// first time, then topped up with the rows indexed after its newest (an
// index row's date and number only grow, unless the clock goes back: such
// rows are read by number), and copied whole again once its newest row is
// sealed with another key than the sealing one (a key rotation).

// sqlListKeys lists the emails listing keys (code 18) with at least
// headMin index rows.
const sqlListKeys = `SELECT k FROM darkweb_index WHERE k >= ? AND k < ? GROUP BY k HAVING COUNT(*) >= ?`

// sqlListHeadNewest reads a listing head's newest row.
const sqlListHeadNewest = `SELECT d, rec, key_id FROM darkweb_heads WHERE k = ? ORDER BY d DESC, rec DESC LIMIT 1`

// sqlListHeadCopy copies the key's next index rows after the position
// (d, rec) into its head, with their records, in key order (appended at
// the end of the key's rows), up to a number of rows.
const sqlListHeadCopy = `INSERT INTO darkweb_heads (k, d, rec, id, key_id, blob, meta)
	SELECT CAST(? AS BIGINT), i.d, i.rec, r.id, r.key_id, r.blob, r.breach || '` + "\x1f" + `' || r.source || '` + "\x1f" + `' || r.breach_date
	FROM darkweb_index i JOIN darkweb_records r ON r.seq = i.rec
	WHERE i.k = ? AND (i.d, i.rec) > (?, ?)
	ORDER BY i.d, i.rec LIMIT ?`

// listHeadBatch is how many rows one transaction of a listing head's copy
// writes (about 15 MB): a domain of millions of records copied in one
// transaction would hold the single SQLite writer's lock (and grow the
// write-ahead log) for minutes, while an ingest waits.
const listHeadBatch = 50_000

// sqlListHeadSpan reads a listing head's rows from one position down to
// another (both included), newest first, in sqlHeadPage's shape.
const sqlListHeadSpan = `SELECT h.rec, h.d, h.id, h.blob, h.key_id || '` + "\x1f" + `' || h.meta
	FROM darkweb_heads h WHERE h.k = ? AND (h.d, h.rec) <= (?, ?) AND (h.d, h.rec) >= (?, ?)
	ORDER BY h.d DESC, h.rec DESC LIMIT ?`

// listHeadKey is the key of the listing head that holds the records of
// listing key k (code 17 or 18): the domain's code 18 key.
func listHeadKey(k int64) int64 { return codeLo(codeDomainEmail) | k&keyMask }

// buildListHeads is BuildHeads' pass over the listing heads; keyID is the
// sealing key.
func (d *Store) buildListHeads(ctx context.Context, keyID string, st *HeadStats) error {
	rows, err := d.s.DB().QueryContext(ctx, d.s.Rebind(sqlListKeys), codeLo(codeDomainEmail), codeLo(codeDomainEmail+1), headMin)
	if err != nil {
		return fmt.Errorf("listing heads: keys: %w", err)
	}
	var keys []int64
	for rows.Next() {
		var k int64
		if err := rows.Scan(&k); err != nil {
			rows.Close()
			return fmt.Errorf("listing heads: keys: %w", err)
		}
		keys = append(keys, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("listing heads: keys: %w", err)
	}
	st.Lists = len(keys)
	batch := cmp.Or(d.listBatch, listHeadBatch)
	for _, k := range keys {
		// Batch after batch, each its own transaction; only the first
		// looks at the sealing key (the rows a batch copies are sealed as
		// the records are, which a rotation under way leaves mixed).
		var all int64
		for first := true; ; first = false {
			var n int64
			err := d.s.Tx(ctx, func(tx *store.Tx) error {
				var err error
				n, err = topUpListHead(ctx, tx, k, keyID, first, batch)
				return err
			})
			if err != nil {
				return fmt.Errorf("listing heads: write: %w", err)
			}
			if all += n; n < int64(batch) {
				break
			}
		}
		if all > 0 {
			st.ListsBuilt++
			st.ListRows += all
		}
	}
	return nil
}

// topUpListHead copies into k's head up to limit rows indexed after its
// newest (from the first row when it has none, or, with checkKey set, when
// its newest is sealed with another key than keyID: then it is dropped
// first) and returns how many.
func topUpListHead(ctx context.Context, tx *store.Tx, k int64, keyID string, checkKey bool, limit int) (int64, error) {
	lastD, lastRec := int64(math.MinInt64), int64(math.MinInt64)
	var d, rec int64
	var key string
	err := tx.QueryRow(ctx, sqlListHeadNewest, k).Scan(&d, &rec, &key)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return 0, err
	case checkKey && key != keyID:
		if _, err := tx.Exec(ctx, sqlHeadDrop, k); err != nil {
			return 0, err
		}
	default:
		lastD, lastRec = d, rec
	}
	res, err := tx.Exec(ctx, sqlListHeadCopy, k, k, lastD, lastRec, limit)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// listHeadRows answers a listing page (seqs and ds: its records' numbers
// and dates, newest first) from the listing head of key k, as headRows
// answers a search page. The head rows between the page's first and last
// are read, up to twice the page's size (a credentials page passes over
// the records without a secret between its rows).
func (d *Store) listHeadRows(ctx context.Context, k int64, seqs, ds []int64) ([]row, []Result, bool, error) {
	if len(seqs) == 0 || len(ds) != len(seqs) {
		return nil, nil, false, nil
	}
	n := len(seqs) - 1
	return d.fromHead(ctx, sqlListHeadSpan, []any{listHeadKey(k), ds[0], seqs[0], ds[n], seqs[n], 2 * len(seqs)}, 2*len(seqs), seqs)
}

// listHeadSpan reads the sealed rows of the listing head of key k between
// the positions (hiD, hiRec) and (loD, loRec), up to limit rows, by record
// number, leaving out rows sealed with another key than the sealing one
// (the records table has them re-sealed).
func (d *Store) listHeadSpan(ctx context.Context, k, hiD, hiRec, loD, loRec int64, limit int) (map[int64]row, error) {
	rows, err := d.query(ctx, sqlListHeadSpan, listHeadKey(k), hiD, hiRec, loD, loRec, limit)
	if err != nil {
		return nil, err
	}
	got, err := scanRows(rows, limit)
	if err != nil {
		return nil, err
	}
	bySeq := make(map[int64]row, len(got))
	keyID := d.keys.ID()
	for _, r := range got {
		if r.keyID == keyID {
			bySeq[r.seq] = r
		}
	}
	return bySeq, nil
}
