package darkwebstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/periscope-oss/periscope/internal/store"
)

// Answer heads (migration 21). A search page of many records is read in
// two steps (pageRows): the page's record numbers from the index, then the
// records by number. For a value with many records over a large table the
// second step is one random read a record: the newest 1,000 records of an
// address held 2,500 times in 10 million lie anywhere in the table, and
// reading them was most of such a search. A head is a copy of the newest
// headMax record rows of one search key, side by side in key order, built
// by BuildHeads for every key with headMin index rows or more; a page is
// then one range scan of a few dozen pages.
//
// A head is never trusted: a search compares the head's rows with the page
// the index gives (same records, by number) and reads whatever the head
// lacks (records ingested since it was built) from the records table, so a
// head that is behind costs reads, never a wrong or missing record. A head
// row holds the record's row as it was when copied; a record's contents
// never change under its number (a re-seal changes the key it is sealed
// with, and a row sealed with a key no longer held is read from the
// records table instead).
const (
	// headMin is how many index rows a key needs for a head: its pages
	// from this size on are read in two steps.
	headMin = parallelPageMin
	// headMax is how many of a key's newest records a head holds: the
	// largest page a search returns.
	headMax = 1000
	// headsPerTx is how many heads one transaction of BuildHeads writes.
	headsPerTx = 16
)

// sqlHeadPage reads a key's head rows in recordCols' shape, newest first,
// bounded as sqlSearch bounds the index.
const sqlHeadPage = `SELECT h.rec, h.d, h.id, h.blob, h.key_id || '` + "\x1f" + `' || h.meta
	FROM darkweb_heads h WHERE h.k = ? AND h.d >= ? AND h.d <= ?
	ORDER BY h.d DESC, h.rec DESC LIMIT ?`

// headRows answers a page from k's head: seqs is the page as the index
// gives it (newest first), from, to and limit its bounds. Rows the head
// lacks are read by number; ok is false when the head could not be used
// at all (none, or a row it holds does not open), and the caller reads the
// page without it.
func (d *Store) headRows(ctx context.Context, k, from, to int64, limit int, seqs []int64) (out []row, res []Result, ok bool, err error) {
	return d.fromHead(ctx, sqlHeadPage, []any{k, from, to, limit}, limit, seqs)
}

// fromHead answers a page (seqs, newest first) from the head rows q
// selects (at most limit, in sqlHeadPage's shape), reading what they lack
// by number; ok is false when the head could not be used (see headRows).
func (d *Store) fromHead(ctx context.Context, q string, args []any, limit int, seqs []int64) (out []row, res []Result, ok bool, err error) {
	rows, err := d.query(ctx, q, args...)
	if err != nil {
		return nil, nil, false, err
	}
	got, opened, err := d.scanOpen(rows, limit)
	if err != nil && ctx.Err() != nil {
		return nil, nil, false, err // the request is gone: no second read
	}
	if err != nil || len(got) == 0 {
		// A row sealed with a key this store does not hold (a head copied
		// during a rotation): the records table has the row re-sealed. Any
		// other failure is met again there and reported.
		return nil, nil, false, nil
	}
	at := make(map[int64]int, len(got))
	for i := range got {
		at[got[i].seq] = i
	}
	out, res = make([]row, len(seqs)), make([]Result, len(seqs))
	var missing []int64
	var where []int
	for i, seq := range seqs {
		j, found := at[seq]
		if !found {
			missing = append(missing, seq)
			where = append(where, i)
			continue
		}
		out[i], res[i] = got[j], opened[j]
	}
	d.headHits.Add(int64(len(seqs) - len(missing)))
	if len(missing) == 0 {
		return out, res, true, nil
	}
	more, moreRes, err := d.recordsBySeq(ctx, missing)
	if err != nil {
		return nil, nil, false, err
	}
	if len(more) != len(missing) {
		// A record gone since the index was read: the page is read again
		// without the head.
		return nil, nil, false, nil
	}
	for i := range more {
		// recordsBySeq keeps the order of missing when every one is found.
		out[where[i]], res[where[i]] = more[i], moreRes[i]
	}
	return out, res, true, nil
}

// HeadStats is what a BuildHeads pass did.
type HeadStats struct {
	Keys  int   // keys with enough records for a head
	Built int   // heads written (new, or behind and rewritten)
	Rows  int64 // rows those heads hold
	// Lists, ListsBuilt and ListRows are Keys, Built and Rows for the
	// listing heads (listheads.go); a listing head topped up counts as
	// built, with the rows added.
	Lists, ListsBuilt int
	ListRows          int64
	Skipped           bool          // nothing new since the last complete pass, or records still staged
	Took              time.Duration // the pass's wall time
}

// sqlHeadKeys lists the search keys (not the listings' internal keys)
// with at least headMin index rows.
const sqlHeadKeys = `SELECT k FROM darkweb_index WHERE k < ? GROUP BY k HAVING COUNT(*) >= ?`

// sqlHeadBehind counts the key's newest headMax index rows its head lacks,
// or holds sealed with another key than the sealing one.
const sqlHeadBehind = `SELECT COUNT(*) FROM (SELECT d, rec FROM darkweb_index WHERE k = ?
	ORDER BY d DESC, rec DESC LIMIT ?) i
	WHERE NOT EXISTS (SELECT 1 FROM darkweb_heads h WHERE h.k = ? AND h.d = i.d AND h.rec = i.rec AND h.key_id = ?)`

// sqlHeadCopy copies the key's newest headMax records into its head (after
// sqlHeadDrop), in one statement: the engine reads the records. In key
// order: rows written newest first went in before the previous one each
// time and left SQLite's pages half empty (2.7 GB against 1.3 for the 4.9
// million head rows of 10 million records).
const (
	sqlHeadDrop = `DELETE FROM darkweb_heads WHERE k = ?`
	sqlHeadCopy = `INSERT INTO darkweb_heads (k, d, rec, id, key_id, blob, meta)
	SELECT CAST(? AS BIGINT), i.d, i.rec, r.id, r.key_id, r.blob, r.breach || '` + "\x1f" + `' || r.source || '` + "\x1f" + `' || r.breach_date
	FROM (SELECT d, rec FROM darkweb_index WHERE k = ? ORDER BY d DESC, rec DESC LIMIT ?) i
	JOIN darkweb_records r ON r.seq = i.rec
	ORDER BY i.d, i.rec`
)

// BuildHeads writes the head of every search key with headMin records or
// more whose head is missing or behind (docs/design/darkweb.md "Answers"). serve runs
// it in the background at start and after ingests; it is safe beside
// searches (a head is replaced in one transaction, and searches check
// heads against the index) and beside an ingest (a key indexed later is
// covered by the next pass). A pass that finds nothing ingested since the
// last complete one returns at once.
func (d *Store) BuildHeads(ctx context.Context) (HeadStats, error) {
	start := time.Now()
	var st HeadStats
	if d.keys == nil {
		return st, ErrLocked
	}
	keyID := d.keys.ID()
	var maxSeq int64
	var staged bool
	if err := d.s.DB().QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM darkweb_records`).Scan(&maxSeq); err != nil {
		return st, fmt.Errorf("heads: %w", err)
	}
	if err := d.s.DB().QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM darkweb_stage)`).Scan(&staged); err != nil {
		return st, fmt.Errorf("heads: %w", err)
	}
	var doneSeq int64
	var doneKey string
	err := d.s.DB().QueryRowContext(ctx, `SELECT max_seq, key_id FROM darkweb_heads_done WHERE one = 1`).Scan(&doneSeq, &doneKey)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return st, fmt.Errorf("heads: %w", err)
	}
	if staged || doneSeq == maxSeq && doneKey == keyID {
		// Records staged are an ingest under way (or a rotation's
		// re-index): the pass waits for the index to hold them.
		st.Skipped, st.Took = true, time.Since(start)
		return st, nil
	}
	rows, err := d.s.DB().QueryContext(ctx, d.s.Rebind(sqlHeadKeys), codeLo(codeCredDomain), headMin)
	if err != nil {
		return st, fmt.Errorf("heads: keys: %w", err)
	}
	var keys []int64
	for rows.Next() {
		var k int64
		if err := rows.Scan(&k); err != nil {
			rows.Close()
			return st, fmt.Errorf("heads: keys: %w", err)
		}
		keys = append(keys, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("heads: keys: %w", err)
	}
	st.Keys = len(keys)
	var behind []int64
	for _, k := range keys {
		var n int
		if err := d.s.DB().QueryRowContext(ctx, d.s.Rebind(sqlHeadBehind), k, headMax, k, keyID).Scan(&n); err != nil {
			return st, fmt.Errorf("heads: check: %w", err)
		}
		if n > 0 {
			behind = append(behind, k)
		}
	}
	for len(behind) > 0 {
		batch := behind[:min(headsPerTx, len(behind))]
		behind = behind[len(batch):]
		err := d.s.Tx(ctx, func(tx *store.Tx) error {
			for _, k := range batch {
				if _, err := tx.Exec(ctx, sqlHeadDrop, k); err != nil {
					return err
				}
				res, err := tx.Exec(ctx, sqlHeadCopy, k, k, headMax)
				if err != nil {
					return err
				}
				n, _ := res.RowsAffected()
				st.Rows += n
			}
			return nil
		})
		if err != nil {
			return st, fmt.Errorf("heads: write: %w", err)
		}
		st.Built += len(batch)
	}
	if err := d.buildListHeads(ctx, keyID, &st); err != nil {
		return st, err
	}
	if q := d.s.Dialect().VacuumAnalyze("darkweb_heads"); q != "" && st.Rows+st.ListRows >= analyzeAfter {
		// PostgreSQL: planner statistics for the grown table (planned on
		// none, a head was read through a bitmap scan and a sort: 2 ms
		// against 0.4 in its index's order, at 10 million records).
		if _, err := d.s.DB().ExecContext(ctx, q); err != nil {
			return st, fmt.Errorf("heads: analyze: %w", err)
		}
	}
	// Complete: every record up to maxSeq was indexed when the pass began,
	// so every key they are indexed under is covered.
	err = d.s.Tx(ctx, func(tx *store.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM darkweb_heads_done`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO darkweb_heads_done (one, max_seq, key_id) VALUES (1, ?, ?)`, maxSeq, keyID)
		return err
	})
	if err != nil {
		return st, fmt.Errorf("heads: %w", err)
	}
	st.Took = time.Since(start)
	return st, nil
}

// sqlDropHeads forgets every head (a rotation changes every key) and the
// builder's last pass, so the next pass builds them again.
var sqlDropHeads = []string{`DELETE FROM darkweb_heads`, `DELETE FROM darkweb_heads_done`}

// Status is what an operator watches of the dark-web store: an ingest's
// records not yet indexed, how far the answer heads trail the records,
// and how many answer records the heads have served.
type Status struct {
	// Staged counts records stored but not yet in the blind indexes (an
	// ingest under way, or one interrupted: the next ingest or start
	// indexes them), up to stagedCountMax.
	Staged int64
	// HeadsBehind counts record numbers past the heads' last complete
	// pass (0: current; every record when no pass has run).
	HeadsBehind int64
	// HeadRecords counts search answer records this process read from
	// answer heads.
	HeadRecords int64
}

// stagedCountMax bounds Status's count of the stage: an ingest stages all
// its records until its end (ten million in one run), and a scrape every
// few seconds must not walk them all.
const stagedCountMax = 1_000_000

// Status reads the store's status: two index lookups and a count of the
// stage (empty but during an ingest; at most stagedCountMax rows read).
func (d *Store) Status(ctx context.Context) (Status, error) {
	st := Status{HeadRecords: d.headHits.Load()}
	var maxSeq, doneSeq int64
	if err := d.s.DB().QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM darkweb_records`).Scan(&maxSeq); err != nil {
		return st, fmt.Errorf("status: %w", err)
	}
	err := d.s.DB().QueryRowContext(ctx, `SELECT max_seq FROM darkweb_heads_done WHERE one = 1`).Scan(&doneSeq)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return st, fmt.Errorf("status: %w", err)
	}
	st.HeadsBehind = max(maxSeq-doneSeq, 0)
	limit := stagedCountMax
	if d.stagedMax > 0 {
		limit = d.stagedMax
	}
	if err := d.s.DB().QueryRowContext(ctx, d.s.Rebind(`SELECT COUNT(*) FROM (SELECT 1 FROM darkweb_stage LIMIT ?) s`), limit).Scan(&st.Staged); err != nil {
		return st, fmt.Errorf("status: %w", err)
	}
	return st, nil
}
