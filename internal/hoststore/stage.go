package hoststore

import (
	"cmp"
	"container/heap"
	"context"
	"database/sql"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/store"
)

// The stage of a first load's posting rows (migration 51).
//
// A batch of new hosts writes a posting row per term it holds, and most of
// them are unique terms (certificate hashes and serials, addresses, names)
// whose rows land at random places in host_postings. Once that index is
// larger than the page cache, each costs a page read and a page written
// to the log at the next commit: at ten million hosts on SQLite, most of
// a load's time. A load that begins on an empty index (HostLoad with
// StagePostings, the ingest pipeline's) therefore appends its rows to
// host_postings_stage instead, and they enter host_postings in key order
// when it ends (FinishStagedPostings), each page written once.
//
// What a reader sees meanwhile: the load's hosts by name, address and
// domain as their transactions commit, and by their terms once the stage
// is entered. Exactness is kept by one rule: whoever writes hosts while a
// stage waits that is not their own enters it first, in their own
// transaction (BeginHosts), so host_postings plus the stage is always the
// index, and no write ever reads or changes host_postings under a stage.
// The staging load sees its stage gone at its next transaction and writes
// host_postings directly from then on. A load that dies leaves its stage
// to the next writer, or to the next open that builds the indexes it
// deferred (cli.Open).
//
// The rows are written in runs, each in term order (a batch's new rows;
// the removals, then the additions, of a transaction's merged hosts), and
// each run is a row of host_postings_stage_runs. Entering the stage merges
// the runs in memory (a few hundred rows of each at a time) into key order.
// A term's rows pass as they are unless the stage also removes ids from
// it or adds a row at a first id it already has: then its rows and
// removals are replayed in the order they were written over a bitmap, and
// written again as rows of at most maxPostingRow ids.

// stageCols are the columns of host_postings_stage.
var stageCols = []string{"seq", "term", "first_id", "n", "ids"}

// stageRead is how many rows of a run one read brings at most: at 10M
// hosts a stage holds about 16M rows of 95 bytes on average in some 500
// runs, and reads of 256 rows were a fifth of its merge on PostgreSQL (a
// round trip each). A run whose rows are large (the bitmaps of common
// terms, up to 2.5 KB) reads fewer, so that every run's rows in memory
// stay within stageBytes each.
var stageRead = 1024

// stageBytes bounds the ids a run's read brings, about.
const stageBytes = 64 << 10

// recycleEvery is how many rows the merge takes between its deletes of the
// rows taken (SQLite).
var recycleEvery int64 = 1 << 20

// stageLists appends lists to the stage as one run, removals when removed.
func stageLists(ctx context.Context, tx *store.Tx, load *HostLoad, lists []termIDList, removed bool) error {
	if len(lists) == 0 {
		return nil
	}
	lo := load.pendSeq + 1
	rows := make([][]any, len(lists))
	for i, l := range lists {
		n := len(l.ids)
		if removed {
			n = -n
		}
		rows[i] = []any{lo + int64(i), l.term, l.ids[0], n, encodePostingIDs(l.ids)}
	}
	hi := lo + int64(len(lists)) - 1
	if err := insertAll(ctx, tx, "host_postings_stage", stageCols, "seq", rows); err != nil {
		return fmt.Errorf("stage postings: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO host_postings_stage_runs (lo, hi) VALUES (?, ?)`, lo, hi); err != nil {
		return fmt.Errorf("stage postings: %w", err)
	}
	load.pendSeq = hi
	return nil
}

// beginStage decides, at the start of a host transaction, where its
// posting rows go: to load's stage when load stages and the stage is
// still its own, or may begin one (the index is empty); else a stage
// left by anyone is entered first, in tx.
func (s *Store) beginStage(ctx context.Context, tx *store.Tx, load *HostLoad) error {
	var top int64
	if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(seq), 0) FROM host_postings_stage`).Scan(&top); err != nil {
		return fmt.Errorf("read posting stage: %w", err)
	}
	if load.stagingOn() {
		if top == load.stageSeq {
			load.pendSeq = top
			return nil
		}
		load.staging = false // entered by another writer
	}
	if load.on() && load.stage && load.maxID < 0 && top == 0 {
		var empty bool
		if err := tx.QueryRow(ctx, `SELECT NOT EXISTS (SELECT 1 FROM hosts) AND NOT EXISTS (SELECT 1 FROM host_postings)`).Scan(&empty); err != nil {
			return fmt.Errorf("read posting stage: %w", err)
		}
		if empty {
			load.staging, load.stageSeq, load.pendSeq = true, 0, 0
			return nil
		}
	}
	if top == 0 {
		return nil
	}
	_, err := s.enterStage(ctx, tx, false)
	return err
}

// FinishStagedPostings enters whatever posting rows wait in the stage into
// host_postings, in one transaction, and returns how many rows it read.
func (s *Store) FinishStagedPostings(ctx context.Context) (int64, error) {
	tx, err := s.st.Begin(ctx) // on a connection of its own: COPY on PostgreSQL
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if err := tx.Dialect().TakeTurns(ctx, tx, store.LockHosts); err != nil {
		return 0, err
	}
	n, err := s.enterStage(ctx, tx, true)
	if err != nil || n == 0 {
		return 0, err
	}
	if _, err := tx.Exec(ctx, bumpIndexGenSQL); err != nil {
		return 0, fmt.Errorf("enter posting stage: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("enter posting stage: %w", err)
	}
	return n, nil
}

// stageRun is one run of the stage being merged: the rows read and not yet
// taken, where the next read starts, and up to where its rows are deleted.
type stageRun struct {
	next, hi, gone int64
	rows           []stageRow
	size           int // rows its next read asks for (0: stageRead)
}

// stagedPosting is a posting row, encoded.
type stagedPosting struct {
	term  string
	first int64
	n     int
	ids   []byte
}

// seqRange is the seqs from lo up to, not including, hi.
type seqRange struct{ lo, hi int64 }

// stageRow is a row of the stage.
type stageRow struct {
	seq   int64
	term  string
	first int64
	n     int
	ids   []byte
}

// stageHeap orders runs by their first row's key.
type stageHeap []*stageRun

func (h stageHeap) Len() int { return len(h) }
func (h stageHeap) Less(i, j int) bool {
	a, b := &h[i].rows[0], &h[j].rows[0]
	if c := strings.Compare(a.term, b.term); c != 0 {
		return c < 0
	}
	if a.first != b.first {
		return a.first < b.first
	}
	return a.seq < b.seq
}
func (h stageHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *stageHeap) Push(x any)   { *h = append(*h, x.(*stageRun)) }
func (h *stageHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	*h = old[:len(old)-1]
	return r
}

// stageReader runs a query of the stage: in the transaction that enters
// it, or on a connection of its own (see mergeStage).
type stageReader func(ctx context.Context, q string, args ...any) (*sql.Rows, error)

// fill reads the run's next rows; it reports whether it has any.
func (r *stageRun) fill(ctx context.Context, read stageReader) (bool, error) {
	if len(r.rows) > 0 {
		return true, nil
	}
	if r.next > r.hi {
		return false, nil
	}
	if r.size <= 0 || r.size > stageRead {
		r.size = stageRead
	}
	rows, err := read(ctx, `SELECT seq, term, first_id, n, ids FROM host_postings_stage WHERE seq >= ? AND seq <= ? ORDER BY seq LIMIT ?`,
		r.next, r.hi, r.size)
	if err != nil {
		return false, fmt.Errorf("read posting stage: %w", err)
	}
	defer rows.Close()
	r.rows = r.rows[:0]
	bytes := 0
	for rows.Next() {
		var x stageRow
		if err := rows.Scan(&x.seq, &x.term, &x.first, &x.n, &x.ids); err != nil {
			return false, fmt.Errorf("read posting stage: %w", err)
		}
		if x.ids == nil {
			x.ids = []byte{} // a row of one id: an empty blob, never NULL
		}
		bytes += len(x.ids)
		r.rows = append(r.rows, x)
	}
	switch {
	case bytes > stageBytes:
		r.size = max(r.size/2, 8)
	case bytes < stageBytes/4:
		r.size *= 2
	}
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("read posting stage: %w", err)
	}
	if len(r.rows) == 0 {
		r.next = r.hi + 1
		return false, nil
	}
	r.next = r.rows[len(r.rows)-1].seq + 1
	return true, nil
}

// enterStage moves the stage into host_postings in tx and returns how many
// staged rows it read. With sep it reads the stage on a connection of its
// own when one is free within a second (a load's end; not inside another
// writer's transaction, where waiting for a connection could wait on
// writers that wait for it).
func (s *Store) enterStage(ctx context.Context, tx *store.Tx, sep bool) (int64, error) {
	var runs []*stageRun
	rs, err := tx.Query(ctx, `SELECT lo, hi FROM host_postings_stage_runs ORDER BY lo`)
	if err != nil {
		return 0, fmt.Errorf("read posting stage: %w", err)
	}
	for rs.Next() {
		r := &stageRun{}
		if err := rs.Scan(&r.next, &r.hi); err != nil {
			rs.Close()
			return 0, fmt.Errorf("read posting stage: %w", err)
		}
		runs = append(runs, r)
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return 0, fmt.Errorf("read posting stage: %w", err)
	}
	if len(runs) == 0 {
		return 0, nil
	}
	var mainEmpty bool
	if err := tx.QueryRow(ctx, `SELECT NOT EXISTS (SELECT 1 FROM host_postings)`).Scan(&mainEmpty); err != nil {
		return 0, fmt.Errorf("read posting stage: %w", err)
	}
	var read int64
	if !mainEmpty {
		// Not what happens (a stage begins on an empty index and is
		// entered before anyone writes postings), but if it did, the rows
		// are applied one by one in the order they were written.
		read, err = s.applyStage(ctx, tx, runs)
	} else {
		var conn *sql.Conn
		if sep {
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			if c, err := s.st.DB().Conn(cctx); err == nil {
				conn = c
				defer conn.Close()
				// Its reads go forward through the stage once: a bulk
				// load's large page cache (ingest's 256 MiB) would only
				// add to the process's memory, so it reads with 8 MiB
				// and gets its own size back after.
				if tx.Dialect().Name() != "postgres" {
					if restore := sqliteSmallCache(ctx, conn); restore != nil {
						defer restore()
					}
				}
			}
			cancel()
		}
		read, err = s.mergeStage(ctx, tx, runs, conn)
	}
	if err != nil {
		return 0, err
	}
	empty := []string{`DELETE FROM host_postings_stage`, `DELETE FROM host_postings_stage_runs`}
	if tx.Dialect().Name() == "postgres" {
		empty = []string{`TRUNCATE host_postings_stage, host_postings_stage_runs`}
	}
	for _, q := range empty {
		if _, err := tx.Exec(ctx, q); err != nil {
			return 0, fmt.Errorf("empty posting stage: %w", err)
		}
	}
	return read, nil
}

// mergeStage writes the runs' rows into an empty host_postings in key
// order, replaying the terms that need it (see the top of this file). With
// a connection of its own for reading (sep, not nil), the merge runs
// beside the inserts, on the other core: it reads only what the stage held
// when the transaction began, which the transaction's own deletes do not
// change for another connection.
func (s *Store) mergeStage(ctx context.Context, tx *store.Tx, runs []*stageRun, sep *sql.Conn) (int64, error) {
	w := postingWriter{tx: tx}
	write := func(b stageBatch) error {
		if err := w.insertEncoded(ctx, b.rows); err != nil {
			return err
		}
		for _, g := range b.gone {
			if _, err := tx.Exec(ctx, `DELETE FROM host_postings_stage WHERE seq >= ? AND seq < ?`, g.lo, g.hi); err != nil {
				return fmt.Errorf("empty posting stage: %w", err)
			}
		}
		return nil
	}
	// On SQLite the rows taken are deleted as the merge goes, so that the
	// pages they free take the new rows of host_postings and the file
	// grows by the stage once rather than twice (PostgreSQL truncates the
	// stage at the end).
	recycle := tx.Dialect().Name() != "postgres"
	if sep == nil {
		return mergeRuns(ctx, stageReader(tx.Query), runs, recycle, write)
	}
	read := func(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
		return sep.QueryContext(ctx, s.st.Rebind(q), args...)
	}
	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan stageBatch, 2)
	var n int64
	var merr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(batches)
		n, merr = mergeRuns(mctx, read, runs, recycle, func(b stageBatch) error {
			select {
			case batches <- b:
				return nil
			case <-mctx.Done():
				return mctx.Err()
			}
		})
	}()
	var werr error
	for b := range batches {
		if werr == nil {
			if werr = write(b); werr != nil {
				cancel() // the merge stops at its next batch
			}
		}
	}
	<-done
	if werr != nil {
		return 0, werr
	}
	return n, merr
}

// stageBatch is a part of the merge's output, in key order, with the
// ranges of the stage it has taken whole since the batch before (deleted
// by the writer when it recycles).
type stageBatch struct {
	rows []stagedPosting
	gone []seqRange
}

// mergeRuns merges the runs' rows into key order, replays the terms that
// need it, and hands the rows to write in batches; it returns how many
// staged rows it read.
func mergeRuns(ctx context.Context, read stageReader, runs []*stageRun, recycle bool, write func(stageBatch) error) (int64, error) {
	h := make(stageHeap, 0, len(runs))
	for _, r := range runs {
		r.gone = r.next
		ok, err := r.fill(ctx, read)
		if err != nil {
			return 0, err
		}
		if ok {
			h = append(h, r)
		}
	}
	heap.Init(&h)
	var pend []stagedPosting // rows to write, in key order
	var gone []seqRange
	flush := func() error {
		if len(pend) == 0 && len(gone) == 0 {
			return nil
		}
		err := write(stageBatch{rows: pend, gone: gone})
		pend, gone = nil, nil
		return err
	}
	var term []stageRow // the rows of the term being merged
	var taken, lastRecycle int64
	var re replay
	emit := func() error {
		if len(term) == 0 {
			return nil
		}
		if !needsReplay(term) {
			for _, r := range term {
				pend = append(pend, stagedPosting{term: r.term, first: r.first, n: r.n, ids: r.ids})
			}
		} else {
			rows, err := re.run(term)
			if err != nil {
				return err
			}
			pend = append(pend, rows...)
		}
		term = term[:0]
		if len(pend) >= 16384 {
			return flush()
		}
		return nil
	}
	for h.Len() > 0 {
		r := h[0]
		x := r.rows[0]
		r.rows = r.rows[1:]
		taken++
		if len(term) > 0 && term[0].term != x.term {
			if err := emit(); err != nil {
				return 0, err
			}
		}
		term = append(term, x)
		if recycle && taken-lastRecycle >= recycleEvery {
			// The rows taken are in memory: the writer deletes them from
			// the stage with the batch that carries these ranges or a
			// later one, in the transaction that writes them.
			for _, q := range runs {
				upto := q.next // the first seq not taken
				if len(q.rows) > 0 {
					upto = q.rows[0].seq
				}
				if upto > q.gone {
					gone = append(gone, seqRange{q.gone, upto})
					q.gone = upto
				}
			}
			lastRecycle = taken
		}
		ok, err := r.fill(ctx, read)
		if err != nil {
			return 0, err
		}
		if ok {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	if err := emit(); err != nil {
		return 0, err
	}
	return taken, flush()
}

// needsReplay reports whether a term's staged rows (in key order) remove
// ids or share a first id.
func needsReplay(rows []stageRow) bool {
	for i, r := range rows {
		if r.n < 0 || i > 0 && rows[i-1].first == r.first {
			return true
		}
	}
	return false
}

// replay evaluates a term's staged rows in the order they were written
// over a bitmap of ids, reused from term to term.
type replay struct {
	bits []uint64
}

func (re *replay) run(rows []stageRow) ([]stagedPosting, error) {
	slices.SortFunc(rows, func(a, b stageRow) int { return cmp.Compare(a.seq, b.seq) })
	lo, hi := rows[0].first, rows[0].first
	for _, r := range rows {
		lo = min(lo, r.first)
		last := r.first
		if err := eachPostingID(r.first, abs(r.n), r.ids, func(id int64) bool { last = id; return true }); err != nil {
			return nil, fmt.Errorf("posting stage of %q: %w", r.term, err)
		}
		hi = max(hi, last)
	}
	words := int((hi-lo)/64 + 1)
	if cap(re.bits) < words {
		re.bits = make([]uint64, words)
	}
	bm := re.bits[:words]
	clear(bm)
	for _, r := range rows {
		add := r.n > 0
		eachPostingID(r.first, abs(r.n), r.ids, func(id int64) bool {
			d := id - lo
			if add {
				bm[d>>6] |= 1 << (d & 63)
			} else {
				bm[d>>6] &^= 1 << (d & 63)
			}
			return true
		})
	}
	var out []stagedPosting
	ids := make([]int64, 0, 1024)
	put := func() {
		if len(ids) > 0 {
			out = append(out, stagedPosting{term: rows[0].term, first: ids[0], n: len(ids), ids: encodePostingIDs(ids)})
			ids = ids[:0]
		}
	}
	for i, w := range bm {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			w &= w - 1
			ids = append(ids, lo+int64(i)*64+int64(b))
			if len(ids) == maxPostingRow {
				put()
			}
		}
	}
	put()
	return out, nil
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// applyStage applies the runs' rows one by one, in the order they were
// written, through the writer every update uses.
func (s *Store) applyStage(ctx context.Context, tx *store.Tx, runs []*stageRun) (int64, error) {
	w := postingWriter{tx: tx}
	var read int64
	for _, r := range runs {
		for {
			ok, err := r.fill(ctx, stageReader(tx.Query))
			if err != nil {
				return 0, err
			}
			if !ok {
				break
			}
			for _, x := range r.rows {
				ids, err := decodePostingIDs(nil, x.first, abs(x.n), x.ids)
				if err != nil {
					return 0, fmt.Errorf("posting stage of %q: %w", x.term, err)
				}
				l := termIDList{term: x.term, ids: ids}
				if x.n > 0 {
					err = w.add(ctx, l)
				} else {
					err = w.remove(ctx, l)
				}
				if err != nil {
					return 0, err
				}
				read++
			}
			r.rows = r.rows[:0]
		}
	}
	return read, nil
}

// sqliteSmallCache gives a SQLite connection an 8 MiB page cache and
// returns what restores the one it had (nil when the size cannot be read
// or set).
func sqliteSmallCache(ctx context.Context, c *sql.Conn) func() {
	var size int64
	if err := c.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&size); err != nil {
		return nil
	}
	if _, err := c.ExecContext(ctx, `PRAGMA cache_size = -8192`); err != nil {
		return nil
	}
	return func() { c.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf(`PRAGMA cache_size = %d`, size)) }
}
