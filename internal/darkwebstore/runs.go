package darkwebstore

import (
	"bufio"
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// feedQueue is the receiving end of feedBatches: batches from the
// merge's goroutine, read one value at a time (cur[i]); batches read go
// back to it through free.
type feedQueue[T any] struct {
	batches chan []T
	free    chan []T
	cur     []T
	i       int
}

// advance moves to the next value, waiting for the next batch when the
// current one is read; false at the end.
func (f *feedQueue[T]) advance() bool {
	f.i++
	for f.i >= len(f.cur) {
		if f.cur != nil {
			select {
			case f.free <- f.cur[:0]:
			default:
			}
		}
		b, ok := <-f.batches
		if !ok {
			f.cur = nil
			return false
		}
		f.cur, f.i = b, 0
	}
	return true
}

// idFeed is merged identities as a store.Rows (feedQueue).
type idFeed struct{ feedQueue[idRow] }

func (f *idFeed) Next() bool {
	return f.advance()
}

func (f *idFeed) Column(i int) any {
	if i == 0 {
		return f.cur[f.i].id[:]
	}
	return f.cur[f.i].seq
}

func (f *idFeed) Err() error { return nil }

// feedBatches sends the values next yields to batches, feedBatch at a time
// (in buffers the consumer hands back on free, when it has), until next
// ends or stop is closed.
func feedBatches[T any](batches chan<- []T, free <-chan []T, stop <-chan struct{}, next func() (T, bool)) {
	buf := make([]T, 0, feedBatch)
	send := func() bool {
		select {
		case batches <- buf:
		case <-stop:
			return false
		}
		select {
		case buf = <-free:
		default:
			buf = make([]T, 0, feedBatch)
		}
		return true
	}
	for {
		r, ok := next()
		if !ok {
			break
		}
		if buf = append(buf, r); len(buf) == feedBatch && !send() {
			return
		}
	}
	if len(buf) > 0 {
		send()
	}
}

// mergeIDs yields the rows of sorted runs in order (a binary min-heap of
// the runs' heads).
func mergeIDs(runs [][]idRow) func() (idRow, bool) {
	var h [][]idRow
	less := func(i, j int) bool { return compareIDs(h[i][0], h[j][0]) < 0 }
	down := func(i int) {
		for {
			l, s := 2*i+1, i
			if l < len(h) && less(l, s) {
				s = l
			}
			if r := l + 1; r < len(h) && less(r, s) {
				s = r
			}
			if s == i {
				return
			}
			h[i], h[s] = h[s], h[i]
			i = s
		}
	}
	for _, r := range runs {
		if len(r) > 0 {
			h = append(h, r)
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	return func() (idRow, bool) {
		if len(h) == 0 {
			return idRow{}, false
		}
		top := h[0][0]
		if h[0] = h[0][1:]; len(h[0]) == 0 {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		if len(h) > 0 {
			down(0)
		}
		return top, true
	}
}

// indexRow is one darkweb_index row (x 0: NULL).
type indexRow struct{ k, d, rec, x int64 }

// sortRun sorts a run of index rows (compareRows), using tmp (grown as
// needed and kept for the next run) as scratch. The rows of a run are
// appended in seq order, batch after batch, each batch with its date: in
// a run whose seqs and dates never decrease, the rows of a key are in
// (date, seq) order already, and a stable sort by key alone, a radix
// sort, orders the run. It took a third of the time of a comparison sort
// (which took 27 s of CPU for the 26 runs of a 10M load). A run whose
// dates go back (another load's staged records, a clock set back) is
// sorted by comparisons.
func sortRun(rows []indexRow, tmp *[]indexRow) {
	if len(rows) < 2 {
		return
	}
	for i := 1; i < len(rows); i++ {
		if rows[i].rec < rows[i-1].rec || rows[i].d < rows[i-1].d {
			slices.SortFunc(rows, compareRows)
			return
		}
	}
	if cap(*tmp) < len(rows) {
		*tmp = make([]indexRow, len(rows))
	}
	src, dst := rows, (*tmp)[:len(rows)]
	// Four passes of a byte each, least significant first, over the top
	// half of the key with its sign bit flipped (so that negative keys
	// come first); a pass whose byte is the same in every row is skipped.
	// Keys are blind indexes (uniformly spread below their type's byte),
	// so rows whose top halves are equal are few and mostly share the
	// whole key: an insertion pass over the nearly sorted rows finishes
	// the sort, stably, at a small fraction of the four passes it saves.
	var count [256]int
	for shift := 32; shift < 64; shift += 8 {
		clear(count[:])
		for i := range src {
			count[byte((uint64(src[i].k)^1<<63)>>shift)]++
		}
		if count[byte((uint64(src[0].k)^1<<63)>>shift)] == len(src) {
			continue
		}
		pos := 0
		for b, n := range count {
			count[b] = pos
			pos += n
		}
		for i := range src {
			b := byte((uint64(src[i].k) ^ 1<<63) >> shift)
			dst[count[b]] = src[i]
			count[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &rows[0] {
		copy(rows, src)
	}
	// Rows move only past rows of a greater key with the same top half;
	// past a budget of as many moves as rows (keys that are not spread),
	// a stable comparison sort finishes instead.
	moves := 0
	for i := 1; i < len(rows); i++ {
		r := rows[i]
		j := i
		for j > 0 && rows[j-1].k > r.k {
			rows[j] = rows[j-1]
			j--
		}
		rows[j] = r
		if moves += i - j; moves > len(rows) {
			slices.SortStableFunc(rows, func(a, b indexRow) int { return cmp.Compare(a.k, b.k) })
			return
		}
	}
}

func compareRows(a, b indexRow) int {
	if c := cmp.Compare(a.k, b.k); c != 0 {
		return c
	}
	if c := cmp.Compare(a.d, b.d); c != 0 {
		return c
	}
	return cmp.Compare(a.rec, b.rec)
}

// feedBatch is how many merged rows the merge hands to the insert at once.
const feedBatch = 4096

// rowFeed is the merged index rows as a store.Rows (x 0: NULL), in
// batches from the merge's goroutine; batches read go back to it through
// free. It ends at the first row whose key is hi or more (unless last is
// set) and, with hi moved on, goes on from that row for the next
// statement.
type rowFeed struct {
	feedQueue[indexRow]
	hi   int64
	last bool
	// held: the row at i ended the previous statement's rows, unread.
	held bool
	// n counts the rows read since it was last set to 0; with max set, the
	// feed ends at max.
	n, max int
	// d and boxedD: the last date returned, and it as an interface
	// value (a load's rows share a few dates: boxing each row's was an
	// allocation a row).
	d      int64
	boxedD any
}

func (f *rowFeed) Next() bool {
	if f.max > 0 && f.n >= f.max {
		return false
	}
	if f.held {
		f.held = !f.last && f.cur[f.i].k >= f.hi
		if !f.held {
			f.n++
		}
		return !f.held
	}
	if !f.advance() {
		return false
	}
	f.held = !f.last && f.cur[f.i].k >= f.hi
	if !f.held {
		f.n++
	}
	return !f.held
}

func (f *rowFeed) Column(i int) any {
	r := &f.cur[f.i]
	switch i {
	case 0:
		return r.k
	case 1:
		if f.boxedD == nil || r.d != f.d {
			f.d, f.boxedD = r.d, r.d
		}
		return f.boxedD
	case 2:
		return r.rec
	}
	if r.x == 0 {
		return nil
	}
	return r.x
}

// Err is nil: a run that failed to read ends the merge early and is
// reported from its own err by insertSorted.
func (f *rowFeed) Err() error { return nil }

// mergeRows sends the merged rows not in skip to f in batches, counting
// the listing totals, until the merge ends or stop is closed.
func mergeRows(m *merge, skip *seqSet, tally *listTally, f *rowFeed, stop <-chan struct{}) {
	feedBatches(f.batches, f.free, stop, func() (indexRow, bool) {
		for {
			r, ok := m.next()
			if !ok || !skip.has(r.rec) {
				if ok {
					tally.add(r)
				}
				return r, ok
			}
		}
	})
}

// readStaged reads the keys staged in darkweb_stage as index rows, in runs
// of runRows rows: each full run is sorted and spilled in the background
// while the next is read; the last is returned sorted, in memory.
func readStaged(ctx context.Context, tx *sql.Tx, runRows int) ([]*run, []indexRow, error) {
	rows, err := tx.QueryContext(ctx, `SELECT seq, d, email, keys FROM darkweb_stage WHERE keys IS NOT NULL`)
	if err != nil {
		return nil, nil, fmt.Errorf("index build: read stage: %w", err)
	}
	defer rows.Close()
	var runs []*run
	// spilling is the run being sorted and written in the background.
	var spilling chan error
	waitSpill := func() error {
		if spilling == nil {
			return nil
		}
		err := <-spilling
		spilling = nil
		return err
	}
	defer waitSpill()
	all := make([]indexRow, 0, 1024)
	var spare, sortTmp []indexRow
	lo18, hi18 := codeLo(codeDomainEmail), codeLo(codeDomainEmail+1)
	for rows.Next() {
		var seq, d int64
		var email sql.NullInt64
		var keys string
		if err := rows.Scan(&seq, &d, &email, &keys); err != nil {
			return runs, nil, err
		}
		keys = strings.TrimSuffix(strings.TrimPrefix(keys, "["), "]")
		for keys != "" {
			var num string
			num, keys, _ = strings.Cut(keys, ",")
			k, err := strconv.ParseInt(num, 10, 64)
			if err != nil {
				return runs, nil, fmt.Errorf("index build: staged key %q of record %d: %w", num, seq, err)
			}
			r := indexRow{k: k, d: d, rec: seq}
			if k >= lo18 && k < hi18 {
				r.x = email.Int64
			}
			all = append(all, r)
		}
		if len(all) >= runRows {
			if err := waitSpill(); err != nil {
				return runs, nil, err
			}
			f, err := newRun()
			if err != nil {
				return runs, nil, err
			}
			runs = append(runs, f)
			spilling = make(chan error, 1)
			go func(full []indexRow) {
				sortRun(full, &sortTmp)
				spilling <- f.write(full)
			}(all)
			all, spare = spare[:0], all
		}
	}
	if err := rows.Err(); err != nil {
		return runs, nil, fmt.Errorf("index build: read stage: %w", err)
	}
	if err := waitSpill(); err != nil {
		return runs, nil, err
	}
	sortRun(all, &sortTmp)
	return runs, all, nil
}

// run is a sorted run of index rows spilled to an unlinked temporary file
// (nothing is left behind if the process dies), read back through a
// buffer.
type run struct {
	f   *os.File
	r   *bufio.Reader
	buf [32]byte
	err error
}

func newRun() (*run, error) {
	f, err := os.CreateTemp("", "periscope-darkweb-run-*")
	if err != nil {
		return nil, fmt.Errorf("index build: spill sorted rows: %w", err)
	}
	os.Remove(f.Name())
	return &run{f: f}, nil
}

func (r *run) write(rows []indexRow) error {
	w := bufio.NewWriterSize(r.f, 1<<20)
	var b [32]byte
	for _, x := range rows {
		binary.LittleEndian.PutUint64(b[0:], uint64(x.k))
		binary.LittleEndian.PutUint64(b[8:], uint64(x.d))
		binary.LittleEndian.PutUint64(b[16:], uint64(x.rec))
		binary.LittleEndian.PutUint64(b[24:], uint64(x.x))
		if _, err := w.Write(b[:]); err != nil {
			return fmt.Errorf("index build: spill sorted rows: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("index build: spill sorted rows: %w", err)
	}
	if _, err := r.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("index build: spill sorted rows: %w", err)
	}
	r.r = bufio.NewReaderSize(r.f, 1<<20)
	return nil
}

// read returns the run's next row; false at its end (or on an error,
// kept in r.err).
func (r *run) read() (indexRow, bool) {
	if _, err := io.ReadFull(r.r, r.buf[:]); err != nil {
		if err != io.EOF {
			r.err = fmt.Errorf("index build: read spilled rows: %w", err)
		}
		return indexRow{}, false
	}
	b := r.buf[:]
	return indexRow{
		k:   int64(binary.LittleEndian.Uint64(b[0:])),
		d:   int64(binary.LittleEndian.Uint64(b[8:])),
		rec: int64(binary.LittleEndian.Uint64(b[16:])),
		x:   int64(binary.LittleEndian.Uint64(b[24:])),
	}, true
}

func (r *run) close() { r.f.Close() }

// merge yields the rows of sorted runs (and of a last run kept in
// memory) in order: a binary min-heap of each run's next row.
type merge struct {
	heads []indexRow
	from  []func() (indexRow, bool)
}

func newMerge(runs []*run, lasts ...[]indexRow) (*merge, error) {
	m := &merge{}
	add := func(next func() (indexRow, bool)) {
		if r, ok := next(); ok {
			m.heads = append(m.heads, r)
			m.from = append(m.from, next)
			m.up(len(m.heads) - 1)
		}
	}
	for _, r := range runs {
		add(r.read)
		if r.err != nil {
			return nil, r.err
		}
	}
	for _, last := range lasts {
		add(func() (indexRow, bool) {
			if len(last) == 0 {
				return indexRow{}, false
			}
			r := last[0]
			last = last[1:]
			return r, true
		})
	}
	return m, nil
}

func (m *merge) next() (indexRow, bool) {
	if len(m.heads) == 0 {
		return indexRow{}, false
	}
	top := m.heads[0]
	if r, ok := m.from[0](); ok {
		m.heads[0] = r
	} else {
		n := len(m.heads) - 1
		m.heads[0], m.from[0] = m.heads[n], m.from[n]
		m.heads, m.from = m.heads[:n], m.from[:n]
	}
	m.down(0)
	return top, true
}

func (m *merge) less(i, j int) bool { return compareRows(m.heads[i], m.heads[j]) < 0 }

func (m *merge) swap(i, j int) {
	m.heads[i], m.heads[j] = m.heads[j], m.heads[i]
	m.from[i], m.from[j] = m.from[j], m.from[i]
}

func (m *merge) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !m.less(i, p) {
			return
		}
		m.swap(i, p)
		i = p
	}
}

func (m *merge) down(i int) {
	for {
		l, s := 2*i+1, i
		if l < len(m.heads) && m.less(l, s) {
			s = l
		}
		if r := l + 1; r < len(m.heads) && m.less(r, s) {
			s = r
		}
		if s == i {
			return
		}
		m.swap(i, s)
		i = s
	}
}

// memIndex is the index rows of the records a Loader staged on SQLite,
// kept in Go: a load of ten million full records would otherwise write
// 120 million keys as text into darkweb_stage (2.5 GB) for its build to
// read back and parse. The rows are sorted and spilled to temporary files
// in runs of runRows in the background while the load goes on; the build
// merges them. A process that dies loses them, not its records: those
// stay staged without keys, and the next build computes the keys from
// their blobs.
type memIndex struct {
	runRows int
	cur     []indexRow
	spare   []indexRow
	runs    []*run
	// sortTmp is sortRun's scratch, for one run at a time.
	sortTmp []indexRow
	// spilling is the run being sorted and written in the background.
	spilling chan error
	// ranges are the seqs of the records held, ascending; records their
	// number.
	ranges  []seqRange
	records int64
	// ids are the records' identities, sorted batch by batch (runs
	// ending at idRuns), so the build need not read them back from the
	// records (a scan of the whole table's pages).
	ids    []idRow
	idRuns []int
}

type seqRange struct{ lo, hi int64 }

// gaps are the seq ranges around and between m's.
func (m *memIndex) gaps() []seqRange {
	var out []seqRange
	lo := int64(math.MinInt64)
	for _, r := range m.ranges {
		if r.lo > lo {
			out = append(out, seqRange{lo, r.lo - 1})
		}
		lo = r.hi + 1
	}
	return append(out, seqRange{lo, math.MaxInt64})
}

// holds reports whether m holds rows.
func (m *memIndex) holds() bool { return m != nil && m.records > 0 }

// owns reports whether seq is a record m holds.
func (m *memIndex) owns(seq int64) bool {
	for _, r := range m.ranges {
		if seq >= r.lo && seq <= r.hi {
			return true
		}
	}
	return false
}

// add keeps the index rows of a batch written from seq base+1 on, on date d.
func (m *memIndex) add(base, d int64, batch []sealed) error {
	lo18, hi18 := codeLo(codeDomainEmail), codeLo(codeDomainEmail+1)
	for i := range batch {
		p := &batch[i]
		seq := base + int64(i) + 1
		for _, k := range p.keys {
			r := indexRow{k: k, d: d, rec: seq}
			if k >= lo18 && k < hi18 {
				r.x = p.email
			}
			m.cur = append(m.cur, r)
		}
		if len(m.cur) >= m.runRows {
			if err := m.spill(); err != nil {
				return err
			}
		}
	}
	start := len(m.ids)
	for i := range batch {
		r := idRow{seq: base + int64(i) + 1}
		copy(r.id[:], batch[i].id)
		m.ids = append(m.ids, r)
	}
	slices.SortFunc(m.ids[start:], compareIDs)
	m.idRuns = append(m.idRuns, len(m.ids))
	hi := base + int64(len(batch))
	if n := len(m.ranges); n > 0 && m.ranges[n-1].hi == base {
		m.ranges[n-1].hi = hi
	} else {
		m.ranges = append(m.ranges, seqRange{base + 1, hi})
	}
	m.records += int64(len(batch))
	return nil
}

// spill sorts the current run and writes it to a temporary file in the
// background.
func (m *memIndex) spill() error {
	if err := m.waitSpill(); err != nil {
		return err
	}
	f, err := newRun()
	if err != nil {
		return err
	}
	m.runs = append(m.runs, f)
	m.spilling = make(chan error, 1)
	go func(full []indexRow) {
		sortRun(full, &m.sortTmp)
		m.spilling <- f.write(full)
	}(m.cur)
	m.cur, m.spare = m.spare[:0], m.cur
	if m.cur == nil {
		m.cur = make([]indexRow, 0, m.runRows+64)
	}
	return nil
}

func (m *memIndex) waitSpill() error {
	if m.spilling == nil {
		return nil
	}
	err := <-m.spilling
	m.spilling = nil
	return err
}

// finish waits for the run being spilled and sorts the last one (kept in
// memory).
func (m *memIndex) finish() error {
	if err := m.waitSpill(); err != nil {
		return err
	}
	sortRun(m.cur, &m.sortTmp)
	return nil
}

// reset drops every row held.
func (m *memIndex) reset() {
	m.waitSpill()
	for _, r := range m.runs {
		r.close()
	}
	m.runs, m.cur, m.ranges, m.records = nil, m.cur[:0], nil, 0
	m.ids, m.idRuns = m.ids[:0], m.idRuns[:0]
}
