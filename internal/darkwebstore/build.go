package darkwebstore

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/periscope-oss/periscope/internal/darkweb"
)

// build turns what is staged into index rows, in tx, with inserts sorted
// by key (so they land in key order: appends on a fresh index, page by
// page on a grown one):
//
//  1. identities: staged records whose id is new enter darkweb_ids (the
//     lowest seq of an id wins; sorted in Go on SQLite, see insertIDs);
//     the others are duplicates and are deleted with their staged rows;
//  2. listing counts: credentials per email domain, and per email domain
//     the distinct emails whose search key is not stored yet (on SQLite
//     tallied from the sorted index rows as step 3 inserts them);
//  3. the index rows of every staged key (sorted in Go on SQLite, see
//     insertSorted; one set-based statement on PostgreSQL);
//  4. the stage is emptied.
//
// On SQLite the index rows of a loader's own records come from mem (the
// rows it kept when it staged them; nil: none), see stageSources. When
// they are all that is staged, and b can step, the index rows are
// committed in steps (see insertSorted), the listing totals and the
// emptied stage with the last; readers find the records by key range as
// the steps commit. An interrupted build leaves its records staged, and
// the next build indexes them again (its inserts of the rows already in
// are ignored, and storedEmails does not count their emails as stored).
//
// It returns the number of duplicates removed.
func (d *Store) build(ctx context.Context, b *buildTx, mem *memIndex) (int, error) {
	if err := d.dl.beginBuild(ctx, b.tx); err != nil {
		return 0, err
	}
	var staged int64
	if err := b.tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM darkweb_stage`).Scan(&staged); err != nil {
		return 0, fmt.Errorf("count staged records: %w", err)
	}
	if staged == 0 {
		return 0, nil
	}
	fresh, mem, err := d.enterIDs(ctx, b.tx, mem, staged)
	if err != nil {
		return 0, err
	}
	dups := 0
	var skip seqSet // this loader's records found already stored
	if fresh < staged {
		if dups, skip, err = d.dropDuplicates(ctx, b.tx, mem); err != nil {
			return 0, err
		}
	}
	if !d.dl.sortsInGo() {
		if err := d.indexStaged(ctx, b.tx); err != nil {
			return 0, err
		}
	} else if stepped, err := d.indexStagedSorted(ctx, b, mem, &skip, staged-int64(dups)); err != nil || stepped {
		return dups, err // a stepped build removed its own staged rows
	}
	if _, err := b.tx.ExecContext(ctx, d.dl.emptyStage()); err != nil {
		return 0, fmt.Errorf("index build (stage): %w", err)
	}
	return dups, nil
}

// buildExec runs one statement of a build step (what names it in errors)
// and returns the rows it changed.
func buildExec(ctx context.Context, tx *sql.Tx, what, q string) (int64, error) {
	r, err := tx.ExecContext(ctx, q)
	if err != nil {
		return 0, fmt.Errorf("index build (%s): %w", what, err)
	}
	return r.RowsAffected()
}

// enterIDs is the build's first step: the staged records whose id is new
// enter darkweb_ids; it returns their number and mem, or nil when mem no
// longer describes what is staged.
func (d *Store) enterIDs(ctx context.Context, tx *sql.Tx, mem *memIndex, staged int64) (int64, *memIndex, error) {
	if !d.dl.sortsInGo() {
		fresh, err := buildExec(ctx, tx, "identities", d.s.Dialect().InsertIgnoring(
			`darkweb_ids (id, seq) SELECT r.id, r.seq FROM darkweb_stage s JOIN darkweb_records r ON r.seq = s.seq ORDER BY r.id, r.seq`, "id"))
		return fresh, mem, err
	}
	if mem.holds() {
		// Whether every record mem holds is still staged (another
		// build may have indexed some from their blobs).
		mine, err := stagedIn(ctx, tx, mem.ranges)
		if err != nil {
			return 0, nil, err
		}
		if mine != mem.records {
			mem = nil
		}
	}
	fresh, err := d.insertIDs(ctx, tx, mem, staged)
	return fresh, mem, err
}

// dropDuplicates deletes the staged records whose id was stored before,
// with their staged rows, and returns their number and, when the build
// sorts mem's rows, the seqs of mem's records among them.
func (d *Store) dropDuplicates(ctx context.Context, tx *sql.Tx, mem *memIndex) (int, seqSet, error) {
	var skip seqSet
	if d.dl.sortsInGo() && mem.holds() {
		var err error
		if skip, err = dupSeqs(ctx, tx, mem); err != nil {
			return 0, skip, err
		}
	}
	n, err := buildExec(ctx, tx, "duplicates", `DELETE FROM darkweb_records WHERE seq IN (SELECT s.seq FROM darkweb_stage s
		JOIN darkweb_records r ON r.seq = s.seq JOIN darkweb_ids i ON i.id = r.id WHERE i.seq <> s.seq)`)
	if err != nil {
		return 0, skip, err
	}
	if _, err := buildExec(ctx, tx, "duplicates", `DELETE FROM darkweb_stage WHERE NOT EXISTS (SELECT 1 FROM darkweb_records r WHERE r.seq = darkweb_stage.seq)`); err != nil {
		return 0, skip, err
	}
	return int(n), skip, nil
}

// countsUpsert adds to a listing count.
const countsUpsert = ` ON CONFLICT (k) DO UPDATE SET n = darkweb_counts.n + excluded.n`

// indexStaged is the build's steps 2 and 3 in set-based statements: the
// listing counts, then the index rows of every staged key.
func (d *Store) indexStaged(ctx context.Context, tx *sql.Tx) error {
	from, v := d.dl.stagedKeys()
	in := func(lo int64) string { return fmt.Sprintf(`%s >= %d AND %s < %d`, v, lo, v, lo+1<<56) }
	lfrom := strings.Replace(from, "s.keys", "s.lkeys", 1)
	lo17, lo18 := codeLo(codeCredDomain), codeLo(codeDomainEmail)
	if _, err := buildExec(ctx, tx, "credential counts", fmt.Sprintf(`INSERT INTO darkweb_counts (k, n)
		SELECT %s, COUNT(*) FROM %s WHERE %s GROUP BY %s`, v, lfrom, in(lo17), v)+countsUpsert); err != nil {
		return err
	}
	// Before the index rows: an email is new when its search key is not
	// stored yet.
	if _, err := buildExec(ctx, tx, "email counts", fmt.Sprintf(`INSERT INTO darkweb_counts (k, n)
		SELECT %s, COUNT(DISTINCT s.email) FROM %s WHERE %s
		AND NOT EXISTS (SELECT 1 FROM darkweb_index i WHERE i.k = s.email) GROUP BY %s`, v, lfrom, in(lo18), v)+countsUpsert); err != nil {
		return err
	}
	// Before the index rows too: an email is repeated under a domain when
	// it is stored already, or staged twice under it.
	if _, err := buildExec(ctx, tx, "repeats", fmt.Sprintf(`INSERT INTO darkweb_repeats (k, x)
		SELECT %s, s.email FROM %s WHERE %s AND s.email IS NOT NULL GROUP BY %s, s.email
		HAVING COUNT(*) > 1 OR EXISTS (SELECT 1 FROM darkweb_index i WHERE i.k = s.email)
		ON CONFLICT (k, x) DO NOTHING`, v, lfrom, in(lo18), v)); err != nil {
		return err
	}
	_, err := buildExec(ctx, tx, "index rows", d.s.Dialect().InsertIgnoring(fmt.Sprintf(`darkweb_index (k, d, rec, x)
		SELECT %s, s.d, s.seq, CASE WHEN %s THEN s.email END FROM %s ORDER BY 1, 2, 3`, v, in(lo18), from), "k, d, rec"))
	return err
}

// indexStagedSorted is the build's steps 2 and 3 with the index rows
// sorted in Go (insertSorted), the listing counts tallied from them as
// they are inserted (two GROUP BYs through SQLite's sorter over json_each
// were a third of a 10-million-record build); only the emails already
// stored are looked up first, before the index rows. mine is the number
// of staged records left after the duplicates. When the build stepped,
// it deletes its own records' staged rows and reports true.
func (d *Store) indexStagedSorted(ctx context.Context, b *buildTx, mem *memIndex, skip *seqSet, mine int64) (stepped bool, err error) {
	known, err := storedEmails(ctx, b.tx)
	if err != nil {
		return false, err
	}
	readStage, err := d.stageSources(ctx, b.tx, mem, skip, mine)
	if err != nil {
		return false, err
	}
	stepRows := 0
	if !readStage && b.conn != nil {
		stepRows = cmp.Or(d.stepRows, buildStepRows)
	}
	tally, err := d.insertSorted(ctx, b, cmp.Or(d.runRows, buildRunRows), known, mem, skip, readStage, stepRows)
	if err != nil {
		return false, err
	}
	if stepRows > 0 {
		// Between the steps another build may have indexed (and counted)
		// these records from their blobs: then they are no longer
		// staged, and there is nothing left to do.
		left, err := stagedIn(ctx, b.tx, mem.ranges)
		if err != nil {
			return false, err
		}
		if left != mine {
			return true, nil
		}
	}
	if err := addCounts(ctx, b.tx, tally.counts); err != nil {
		return false, err
	}
	if err := addRepeats(ctx, b.tx, tally.repeats); err != nil {
		return false, err
	}
	if stepRows == 0 {
		return false, nil
	}
	// Only this build's records: others staged while it stepped wait for
	// their own.
	for _, r := range mem.ranges {
		if _, err := b.tx.ExecContext(ctx, `DELETE FROM darkweb_stage WHERE seq BETWEEN ? AND ?`, r.lo, r.hi); err != nil {
			return false, fmt.Errorf("index build (stage): %w", err)
		}
	}
	return true, nil
}

// addCounts adds the tallied listing counts.
func addCounts(ctx context.Context, tx *sql.Tx, counts []listCount) error {
	if len(counts) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, `INSERT INTO darkweb_counts (k, n) VALUES (?, ?)`+countsUpsert)
	if err != nil {
		return fmt.Errorf("index build (counts): %w", err)
	}
	defer st.Close()
	for _, c := range counts {
		if _, err := st.ExecContext(ctx, c.k, c.n); err != nil {
			return fmt.Errorf("index build (counts): %w", err)
		}
	}
	return nil
}

// addRepeats adds the repeats the build met (with the listing totals, in
// the build's last step: a listing reads them only when nothing is staged).
func addRepeats(ctx context.Context, tx *sql.Tx, repeats []repeat) error {
	if len(repeats) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, `INSERT INTO darkweb_repeats (k, x) VALUES (?, ?) ON CONFLICT (k, x) DO NOTHING`)
	if err != nil {
		return fmt.Errorf("index build (repeats): %w", err)
	}
	defer st.Close()
	for _, r := range repeats {
		if _, err := st.ExecContext(ctx, r.k, r.x); err != nil {
			return fmt.Errorf("index build (repeats): %w", err)
		}
	}
	return nil
}

// storedEmails returns the keys of the staged emails already indexed
// (SQLite). A build into an index without any email row (a first load)
// skips the look-up of every staged email.
func storedEmails(ctx context.Context, tx *sql.Tx) (map[int64]bool, error) {
	known := map[int64]bool{}
	lo := codeLo(typeCodes[darkweb.Email])
	var some bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM darkweb_index WHERE k >= ? AND k < ?)`, lo, lo+1<<56).Scan(&some); err != nil {
		return nil, fmt.Errorf("index build (stored emails): %w", err)
	}
	if !some {
		return known, nil
	}
	// The rows of staged records are not stored emails: a build stopped
	// between its steps left them (see build).
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT s.email FROM darkweb_stage s
		WHERE s.email IS NOT NULL AND EXISTS (SELECT 1 FROM darkweb_index i WHERE i.k = s.email
		AND NOT EXISTS (SELECT 1 FROM darkweb_stage t WHERE t.seq = i.rec))`)
	if err != nil {
		return nil, fmt.Errorf("index build (stored emails): %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var e int64
		if err := rows.Scan(&e); err != nil {
			return nil, fmt.Errorf("index build (stored emails): %w", err)
		}
		known[e] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index build (stored emails): %w", err)
	}
	return known, nil
}

// finishPending indexes what is staged: records staged without keys
// (copied by migration 0017, or re-sealed by a key rotation) get them
// computed from their decrypted blobs first. A load interrupted before
// its build is finished here too.
func (d *Store) finishPending(ctx context.Context) error {
	var n int
	if err := d.s.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM darkweb_stage`).Scan(&n); err != nil {
		return fmt.Errorf("read staged records: %w", err)
	}
	if n == 0 {
		return nil
	}
	conn, err := d.s.DB().Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := d.fillKeys(ctx, tx, math.MinInt64, math.MaxInt64); err != nil {
		return err
	}
	if _, err := d.build(ctx, &buildTx{tx: tx}, nil); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit index build: %w", err)
	}
	return nil
}

// fillKeys computes the keys of the records staged without them whose seq
// is in [lo, hi], from their decrypted blobs.
func (d *Store) fillKeys(ctx context.Context, tx *sql.Tx, lo, hi int64) error {
	for {
		rows, err := tx.QueryContext(ctx, d.s.Rebind(`SELECT `+recordCols+`
			FROM darkweb_stage s JOIN darkweb_records r ON r.seq = s.seq WHERE s.keys IS NULL AND s.seq BETWEEN ? AND ? ORDER BY s.seq LIMIT 2000`), lo, hi)
		if err != nil {
			return fmt.Errorf("read staged records: %w", err)
		}
		got, err := scanRows(rows, 2000)
		if err != nil {
			return err
		}
		if len(got) == 0 {
			return nil
		}
		recs, err := d.open(got)
		if err != nil {
			return err
		}
		for i := range recs {
			keys, nlist, email := d.recordKeys(&recs[i].Record)
			var e any
			if email != 0 {
				e = email
			}
			if _, err := tx.ExecContext(ctx, d.s.Rebind(`UPDATE darkweb_stage SET email = ?, keys = ?, lkeys = ? WHERE seq = ?`),
				e, packKeys(keys), packKeys(keys[nlist:]), got[i].seq); err != nil {
				return fmt.Errorf("stage keys: %w", err)
			}
		}
	}
}

// stageSources reports whether the index rows of what is staged (on
// SQLite; staged: the records staged, duplicates removed) are to be read
// from darkweb_stage too: mem (nil when the build does not use it, see
// build) holds the rows of the loader's own records, and the records of
// others are indexed from their staged keys, computed from their blobs
// first where they were staged without them (an interrupted load, a
// rotation, or another loader's records).
func (d *Store) stageSources(ctx context.Context, tx *sql.Tx, mem *memIndex, skip *seqSet, staged int64) (readStage bool, err error) {
	if !mem.holds() {
		return true, d.fillKeys(ctx, tx, math.MinInt64, math.MaxInt64)
	}
	if mem.records-skip.n == staged {
		return false, nil
	}
	for _, g := range mem.gaps() {
		if err := d.fillKeys(ctx, tx, g.lo, g.hi); err != nil {
			return false, err
		}
	}
	return true, nil
}

// stagedIn counts the staged records in ranges.
func stagedIn(ctx context.Context, tx *sql.Tx, ranges []seqRange) (int64, error) {
	var all int64
	for _, r := range ranges {
		var n int64
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM darkweb_stage WHERE seq BETWEEN ? AND ?`, r.lo, r.hi).Scan(&n); err != nil {
			return 0, fmt.Errorf("index build: count staged records: %w", err)
		}
		all += n
	}
	return all, nil
}

// dupSeqs returns the seqs of mem's records that the identities step
// found already stored (the build deletes them next).
func dupSeqs(ctx context.Context, tx *sql.Tx, mem *memIndex) (seqSet, error) {
	set := seqSet{lo: mem.ranges[0].lo}
	set.bits = make([]uint64, (mem.ranges[len(mem.ranges)-1].hi-set.lo)/64+1)
	rows, err := tx.QueryContext(ctx, `SELECT s.seq FROM darkweb_stage s
		JOIN darkweb_records r ON r.seq = s.seq JOIN darkweb_ids i ON i.id = r.id WHERE i.seq <> s.seq`)
	if err != nil {
		return set, fmt.Errorf("index build (duplicates): %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			return set, fmt.Errorf("index build (duplicates): %w", err)
		}
		if mem.owns(seq) {
			set.add(seq)
		}
	}
	return set, rows.Err()
}

// seqSet is a set of seqs from lo on, a bit each.
type seqSet struct {
	lo   int64
	bits []uint64
	n    int64
}

func (s *seqSet) add(seq int64) {
	i := seq - s.lo
	if s.bits[i/64]&(1<<(i%64)) == 0 {
		s.bits[i/64] |= 1 << (i % 64)
		s.n++
	}
}

func (s *seqSet) has(seq int64) bool {
	i := seq - s.lo
	return s.n > 0 && i >= 0 && i/64 < int64(len(s.bits)) && s.bits[i/64]&(1<<(i%64)) != 0
}

// idRow is a record's identity and seq.
type idRow struct {
	id  [16]byte
	seq int64
}

func compareIDs(a, b idRow) int {
	if c := bytes.Compare(a.id[:], b.id[:]); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

// dropCache forgets cached search answers (a build changes them).
func (d *Store) dropCache() {
	d.mu.Lock()
	d.cache, d.cacheBytes = map[string]cacheEntry{}, 0
	d.mu.Unlock()
}

// insertIDs enters the identities of the staged records into darkweb_ids
// on SQLite, in id order (SQLite's sorter was a quarter of a
// 10-million-record build in the cgo-free driver); of equal ids the lowest
// seq is inserted first and wins. The identities of mem's records (every
// one of them staged; nil: none) come from memory, sorted batch by batch
// and merged here; those of other staged records (staged records in all)
// are read and sorted. It returns how many were new.
func (d *Store) insertIDs(ctx context.Context, tx *sql.Tx, mem *memIndex, staged int64) (int64, error) {
	var runs [][]idRow
	if mem != nil {
		start := 0
		for _, end := range mem.idRuns {
			runs = append(runs, mem.ids[start:end])
			start = end
		}
	}
	if mem == nil || mem.records < staged {
		where := []seqRange{{math.MinInt64, math.MaxInt64}}
		if mem != nil {
			where = mem.gaps()
		}
		var ids []idRow
		for _, g := range where {
			rows, err := tx.QueryContext(ctx, `SELECT r.id, r.seq FROM darkweb_stage s JOIN darkweb_records r ON r.seq = s.seq WHERE s.seq BETWEEN ? AND ?`, g.lo, g.hi)
			if err != nil {
				return 0, fmt.Errorf("index build (identities): %w", err)
			}
			for rows.Next() {
				var id []byte
				var r idRow
				if err := rows.Scan(&id, &r.seq); err != nil {
					rows.Close()
					return 0, fmt.Errorf("index build (identities): %w", err)
				}
				if len(id) != len(r.id) {
					rows.Close()
					return 0, fmt.Errorf("index build (identities): record %d has an id of %d bytes", r.seq, len(id))
				}
				copy(r.id[:], id)
				ids = append(ids, r)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return 0, fmt.Errorf("index build (identities): %w", err)
			}
		}
		slices.SortFunc(ids, compareIDs)
		runs = append(runs, ids)
	}
	// One statement over a row feed (see insertSorted), merged on a
	// goroutine of its own: the merge's comparisons of 16-byte ids were a
	// third of the insert's time on the single writer.
	feed := &idFeed{feedQueue[idRow]{batches: make(chan []idRow, 4), free: make(chan []idRow, 6)}}
	stop := make(chan struct{})
	go func() {
		defer close(feed.batches)
		feedBatches(feed.batches, feed.free, stop, mergeIDs(runs))
	}()
	defer func() {
		close(stop)
		for range feed.batches {
		}
	}()
	name, done, err := d.s.Feed(ctx, tx, []string{"id", "seq"}, feed)
	if err != nil {
		return 0, fmt.Errorf("index build (identities): %w", err)
	}
	res, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO darkweb_ids (id, seq) SELECT id, seq FROM `+name)
	if err = errors.Join(err, done()); err != nil {
		return 0, fmt.Errorf("index build (identities): %w", err)
	}
	fresh, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("index build (identities): %w", err)
	}
	return fresh, nil
}

// buildStepRows is how many index rows a build commits at once when it
// steps (see build): about 100 MiB of pages, within an ingest's page
// cache (256 MiB), so SQLite writes them at commit rather than spilling.
const buildStepRows = 4 << 20

// buildTx is the transaction a build runs in; step commits it and begins
// the next on conn (nil: the build runs in one transaction).
type buildTx struct {
	tx   *sql.Tx
	conn *sql.Conn
}

// step commits and begins anew; between, when set, runs in between (tests
// stop a build there, or run another).
func (b *buildTx) step(ctx context.Context, between func() error) error {
	if err := b.tx.Commit(); err != nil {
		return fmt.Errorf("commit index build step: %w", err)
	}
	if between != nil {
		if err := between(); err != nil {
			return err
		}
	}
	tx, err := b.conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin index build step: %w", err)
	}
	b.tx = tx
	return nil
}

// buildRunRows is how many index rows a build sorts in memory at once (32
// bytes each: 128 MiB, two such runs at most in memory, and a third as the
// radix sort's scratch, see sortRun). A build of more
// staged rows sorts them run by run, spills each sorted run to an
// unlinked temporary file and merges the runs as it inserts, so a build's
// memory stays bounded whatever a load's size.
const buildRunRows = 4 << 20

// insertSorted inserts the index rows of what is staged on SQLite in key
// order, sorted in Go: the engine's own sorter (ORDER BY over json_each)
// cost more than half of a build in the cgo-free driver, and a Go sort of
// integers a small fraction of that. The rows come from mem (a loader's
// own records, sorted run by run as they were staged; nil: none) and,
// when readStage is set, from the keys staged in darkweb_stage, read once
// in seq order in runs of runRows rows, each sorted (and spilled) in the
// background while the next is read. The runs are merged as the rows are
// inserted; rows of records in skip (duplicates) are left out.
func (d *Store) insertSorted(ctx context.Context, b *buildTx, runRows int, known map[int64]bool, mem *memIndex, skip *seqSet, readStage bool, stepRows int) (*listTally, error) {
	tx := b.tx
	var runs []*run
	defer func() {
		for _, r := range runs {
			r.close()
		}
	}()
	var lasts [][]indexRow
	if readStage {
		stageRuns, last, err := readStaged(ctx, tx, runRows)
		runs = stageRuns
		if err != nil {
			return nil, err
		}
		lasts = append(lasts, last)
	}
	var sources []*run
	sources = append(sources, runs...)
	if mem != nil {
		if err := mem.finish(); err != nil {
			return nil, err
		}
		sources = append(sources, mem.runs...)
		lasts = append(lasts, mem.cur)
	}
	m, err := newMerge(sources, lasts...)
	if err != nil {
		return nil, err
	}
	// The merge runs on a goroutine of its own, a batch of rows at a time,
	// while SQLite inserts them from a row feed (see below): the
	// insert is the single writer's work, the rest need not wait for it.
	// Through multi-row statements, database/sql's conversion and the
	// driver's binding of each of the 320 million values of a
	// 10-million-record load took a third of the insert's time.
	tally := listTally{known: known}
	feed := &rowFeed{feedQueue: feedQueue[indexRow]{batches: make(chan []indexRow, 4), free: make(chan []indexRow, 6)}}
	stop := make(chan struct{})
	go func() {
		defer close(feed.batches)
		mergeRows(m, skip, &tally, feed, stop)
	}()
	defer func() {
		close(stop)
		for range feed.batches {
		}
	}()
	// Only the listing rows of code 18 have an x: the rows before them,
	// theirs and the rows after go in three statements, in key order, and
	// the others' x is a NULL in the statement, not a column read from the
	// feed (each value read is a call from SQLite into Go; a tenth of the
	// insert's time).
	segs := []struct {
		hi int64
		x  string
	}{{codeLo(codeDomainEmail), "NULL"}, {codeLo(codeDomainEmail + 1), "x"}, {math.MaxInt64, "NULL"}}
	// With stepRows set, the feed ends every stepRows rows, and the rows
	// in are committed before it goes on: the store's checkpointer copies
	// them from the write-ahead log into the file on another core while
	// the next step is inserted (in one transaction they were copied
	// after it, on one core, and from the first page SQLite spilled to
	// the log every page written looked the whole log up).
	feed.max = stepRows
	var name string
	var done func() error
	for i := 0; i < len(segs) && err == nil; {
		if done == nil {
			if name, done, err = d.s.Feed(ctx, b.tx, []string{"k", "d", "rec", "x"}, feed); err != nil {
				done = nil
				break
			}
		}
		feed.hi, feed.last = segs[i].hi, segs[i].hi == math.MaxInt64
		if _, err = b.tx.ExecContext(ctx, `INSERT OR IGNORE INTO darkweb_index (k, d, rec, x) SELECT k, d, rec, `+segs[i].x+` FROM `+name); err != nil {
			break
		}
		if feed.max == 0 || feed.n < feed.max {
			i++
			continue
		}
		err, done = done(), nil
		if err == nil {
			err = b.step(ctx, d.stepped)
		}
		feed.n = 0
	}
	if done != nil {
		err = errors.Join(err, done())
	}
	if err != nil {
		return nil, fmt.Errorf("index build: insert rows: %w", err)
	}
	for _, r := range sources {
		if r.err != nil {
			return nil, r.err
		}
	}
	return tally.done(), nil
}

// listCount is a listing total to add to darkweb_counts.
type listCount struct{ k, n int64 }

// repeat is a row of darkweb_repeats: an email (its search key x) with more
// than one record under the email domain of listing key k.
type repeat struct{ k, x int64 }

// listTally counts the listing totals from index rows in key order:
// credentials (code 17 rows) per email domain, and per email domain (code
// 18 rows) the distinct emails (x) not known to be stored already; and it
// collects the repeats (see darkweb_repeats): the emails of a domain known
// to be stored already, or met twice under it.
type listTally struct {
	known   map[int64]bool
	counts  []listCount
	repeats []repeat
	k, n    int64
	seen    map[int64]bool // the domain's emails met, true once repeated
}

func (t *listTally) add(r indexRow) {
	code := r.k >> 56
	if code != codeCredDomain && code != codeDomainEmail {
		return
	}
	if r.k != t.k {
		t.flush()
		t.k = r.k
		clear(t.seen)
	}
	if code == codeCredDomain {
		t.n++
		return
	}
	if r.x == 0 {
		return
	}
	if t.seen == nil {
		t.seen = map[int64]bool{}
	}
	repeated, met := t.seen[r.x]
	switch {
	case !met && t.known[r.x]:
		t.seen[r.x] = true
		t.repeats = append(t.repeats, repeat{r.k, r.x})
	case !met:
		t.seen[r.x] = false
		t.n++
	case !repeated:
		t.seen[r.x] = true
		t.repeats = append(t.repeats, repeat{r.k, r.x})
	}
}

func (t *listTally) flush() {
	if t.n > 0 {
		t.counts = append(t.counts, listCount{t.k, t.n})
	}
	t.n = 0
}

func (t *listTally) done() *listTally {
	t.flush()
	return t
}
