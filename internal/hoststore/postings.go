package hoststore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/periscope-oss/periscope/internal/store"
)

// The inverted index of the host store is a table of posting lists:
// host_postings holds, per term, rows of ascending host ids, each row keyed
// by (term, first id) and carrying its id count and the ids as uvarint
// gaps. A batch of new hosts adds one row per term it holds, so storing a
// host writes a few bytes per term instead of an index row per term; most
// terms of a batch (addresses, certificate hashes and names) are unique
// and take one small row each. Hosts a later observation changes get their
// added ids as rows of their own and their removed ids taken out of the
// rows holding them. Rows of one term may overlap in id range; readers
// merge them.

// maxPostingRow bounds the ids one row carries when a long list is written
// at once (a conversion of an old index); batches write at most a batch.
const maxPostingRow = 65536

// posting is one row of a posting list.
type posting struct {
	first int64
	ids   []int64
}

// A row's ids are stored in the smaller of two forms, told by the first
// byte of the blob (a row of one id has an empty blob):
//   - postingGaps: the gaps after the first id, as uvarints;
//   - postingBitmap: a bitmap of the ids from the first, bit i of byte j
//     standing for first + 8j + i: a common term, dense in the ids of its
//     batch, takes a bit per host, and intersections AND words.
const (
	postingGaps   = 1
	postingBitmap = 2
)

// encodePostingIDs encodes ascending, distinct ids (the first is the row's
// key) in the smaller form.
func encodePostingIDs(ids []int64) []byte {
	if len(ids) <= 1 {
		return []byte{} // not nil: that would be NULL
	}
	gaps := make([]byte, 1, len(ids)+1)
	gaps[0] = postingGaps
	for i := 1; i < len(ids); i++ {
		gaps = binary.AppendUvarint(gaps, uint64(ids[i]-ids[i-1]))
	}
	span := ids[len(ids)-1] - ids[0] + 1
	if 1+(span+7)/8 >= int64(len(gaps)) {
		return gaps
	}
	bm := make([]byte, 1+(span+7)/8)
	bm[0] = postingBitmap
	for _, id := range ids {
		d := id - ids[0]
		bm[1+d/8] |= 1 << (d % 8)
	}
	return bm
}

var errCorruptPosting = errors.New("corrupt posting list")

// eachPostingID calls fn with the n ids of a row starting at first, in
// order, stopping (without error) when fn returns false.
func eachPostingID(first int64, n int, b []byte, fn func(int64) bool) error {
	if n < 1 || first < 1 {
		return errCorruptPosting
	}
	if n == 1 {
		if len(b) != 0 {
			return errCorruptPosting
		}
		fn(first)
		return nil
	}
	if len(b) == 0 {
		return errCorruptPosting
	}
	switch b[0] {
	case postingGaps:
		b = b[1:]
		id := first
		if !fn(id) {
			return nil
		}
		for i := 1; i < n; i++ {
			var gap uint64
			if len(b) > 0 && b[0] < 0x80 { // most gaps are small
				gap, b = uint64(b[0]), b[1:]
			} else {
				var k int
				gap, k = binary.Uvarint(b)
				if k <= 0 || gap > 1<<62 {
					return errCorruptPosting
				}
				b = b[k:]
			}
			if gap == 0 {
				return errCorruptPosting
			}
			id += int64(gap)
			if !fn(id) {
				return nil
			}
		}
		if len(b) != 0 {
			return errCorruptPosting
		}
		return nil
	case postingBitmap:
		b = b[1:]
		if len(b) == 0 || b[0]&1 == 0 {
			return errCorruptPosting
		}
		seen := 0
		for j, v := range b {
			for v != 0 {
				i := bits.TrailingZeros8(v)
				v &= v - 1
				seen++
				if seen > n {
					return errCorruptPosting
				}
				if !fn(first + int64(8*j+i)) {
					return nil
				}
			}
		}
		if seen != n {
			return errCorruptPosting
		}
		return nil
	}
	return errCorruptPosting
}

// decodePostingIDs appends the n ids of a row starting at first to dst.
func decodePostingIDs(dst []int64, first int64, n int, b []byte) ([]int64, error) {
	if cap(dst)-len(dst) < n {
		dst = slices.Grow(dst, max(n, len(dst))) // at least double: rows are appended one by one
	}
	err := eachPostingID(first, n, b, func(id int64) bool {
		dst = append(dst, id)
		return true
	})
	return dst, err
}

// rowHoldsAny reports whether the row of n ids starting at first holds any
// of ids (ascending).
func rowHoldsAny(first int64, n int, b []byte, ids []int64) (bool, error) {
	lo, _ := slices.BinarySearch(ids, first)
	ids = ids[lo:]
	switch {
	case len(ids) == 0:
		return false, nil
	case n == 1:
		return ids[0] == first, nil
	case len(b) > 1 && b[0] == postingBitmap:
		bm := b[1:]
		for _, id := range ids {
			d := id - first
			if d >= 8*int64(len(bm)) {
				break
			}
			if bm[d/8]&(1<<(d%8)) != 0 {
				return true, nil
			}
		}
		return false, nil
	}
	hit := false
	err := eachPostingID(first, n, b, func(id int64) bool {
		for len(ids) > 0 && ids[0] < id {
			ids = ids[1:]
		}
		if len(ids) == 0 {
			return false
		}
		hit = ids[0] == id
		return !hit
	})
	return hit, err
}

// eachPostingRow calls fn with the rows of term in first-id order (only
// those starting at most maxFirst when it is > 0) until fn returns false or
// an error, which it returns with the term named.
func (s *Store) eachPostingRow(ctx context.Context, term string, maxFirst int64, fn func(first int64, n int, blob []byte) (bool, error)) error {
	q, args := `SELECT first_id, n, ids FROM host_postings WHERE term = ? ORDER BY first_id`, []any{term}
	if maxFirst > 0 {
		q, args = `SELECT first_id, n, ids FROM host_postings WHERE term = ? AND first_id <= ? ORDER BY first_id`, []any{term, maxFirst}
	}
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("read postings of %q: %w", term, err)
	}
	defer rows.Close()
	for rows.Next() {
		var first int64
		var n int
		var blob []byte
		if err := rows.Scan(&first, &n, &blob); err != nil {
			return fmt.Errorf("read postings of %q: %w", term, err)
		}
		more, err := fn(first, n, blob)
		if err != nil {
			return fmt.Errorf("read postings of %q: %w", term, err)
		}
		if !more {
			return nil
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read postings of %q: %w", term, err)
	}
	return nil
}

// termIDs returns the ids of the hosts holding term, ascending. With limit
// > 0 it may stop once it has the limit smallest ids (it returns at least
// those), and reads the rows a few at a time: PostgreSQL sends a query's
// whole answer however early the reader stops, and a common term's rows
// are a megabyte at ten million hosts where a first page needs one.
func (s *Store) termIDs(ctx context.Context, term string, limit int) ([]int64, error) {
	var ids []int64
	sorted := true
	each := func(first int64, n int, blob []byte) (bool, error) {
		if limit > 0 && len(ids) >= limit {
			// Every later row starts at first or above: once the limit
			// smallest ids so far are all below it, they are the answer.
			if !sorted {
				ids, sorted = sortIDs(ids), true
			}
			if ids[limit-1] < first {
				return false, nil
			}
		}
		if len(ids) > 0 && first <= ids[len(ids)-1] {
			sorted = false
		}
		var err error
		ids, err = decodePostingIDs(ids, first, n, blob)
		return true, err
	}
	var err error
	if limit <= 0 {
		err = s.eachPostingRow(ctx, term, 0, each)
	} else {
		err = s.eachPostingRowPaged(ctx, term, each)
	}
	if err != nil {
		return nil, err
	}
	if !sorted {
		ids = sortIDs(ids)
	}
	return ids, nil
}

// eachPostingRowPaged is eachPostingRow over every row of term, read in
// pages of 4, 16, 64… rows (each after the last first id read: a term's
// first ids are distinct, they are its rows' key).
func (s *Store) eachPostingRowPaged(ctx context.Context, term string, fn func(first int64, n int, blob []byte) (bool, error)) error {
	after, page := int64(math.MinInt64), 4
	for {
		rows, err := s.query(ctx, `SELECT first_id, n, ids FROM host_postings WHERE term = ? AND first_id > ? ORDER BY first_id LIMIT ?`, term, after, page)
		if err != nil {
			return fmt.Errorf("read postings of %q: %w", term, err)
		}
		got, more := 0, true
		for rows.Next() && more {
			var n int
			var blob []byte
			if err := rows.Scan(&after, &n, &blob); err != nil {
				rows.Close()
				return fmt.Errorf("read postings of %q: %w", term, err)
			}
			got++
			if more, err = fn(after, n, blob); err != nil {
				rows.Close()
				return fmt.Errorf("read postings of %q: %w", term, err)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read postings of %q: %w", term, err)
		}
		if !more || got < page {
			return nil
		}
		page = min(4*page, 1024)
	}
}

func sortIDs(ids []int64) []int64 {
	slices.Sort(ids)
	return slices.Compact(ids)
}

// termCount returns how many hosts hold term. Rows never hold an id twice
// unless they overlap, which only updates of old hosts cause; the count is
// exact unless such rows hold the same id, which writes prevent.
func (s *Store) termCount(ctx context.Context, term string) (int, error) {
	var n int
	if err := s.queryRow(ctx, `SELECT COALESCE(SUM(n), 0) FROM host_postings WHERE term = ?`, term).Scan(&n); err != nil {
		return 0, fmt.Errorf("count postings of %q: %w", term, err)
	}
	return n, nil
}

// idBitmap is a set of the host ids from lo to hi.
type idBitmap struct {
	lo, hi int64
	words  []uint64
}

func newIDBitmap(lo, hi int64) *idBitmap {
	return &idBitmap{lo: lo, hi: hi, words: make([]uint64, (hi-lo)/64+1)}
}

func (m *idBitmap) set(id int64) {
	if id >= m.lo && id <= m.hi {
		d := id - m.lo
		m.words[d>>6] |= 1 << (d & 63)
	}
}

// orRow adds the ids of a bitmap row (its bytes after the kind) starting at
// first: byte by byte, shifted into place.
func (m *idBitmap) orRow(first int64, b []byte) {
	for j, v := range b {
		base := first + 8*int64(j)
		if base > m.hi {
			return
		}
		if v == 0 {
			continue
		}
		if base < m.lo || base+7 > m.hi { // an edge byte: bit by bit
			for i := range 8 {
				if v&(1<<i) != 0 {
					m.set(base + int64(i))
				}
			}
			continue
		}
		pos := base - m.lo
		w, sh := pos>>6, uint(pos&63)
		m.words[w] |= uint64(v) << sh
		if sh > 56 {
			m.words[w+1] |= uint64(v) >> (64 - sh)
		}
	}
}

// and keeps the ids in both sets (of the same range).
func (m *idBitmap) and(o *idBitmap) {
	for i := range m.words {
		m.words[i] &= o.words[i]
	}
}

// count returns how many ids the set holds.
func (m *idBitmap) count() int {
	n := 0
	for _, w := range m.words {
		n += bits.OnesCount64(w)
	}
	return n
}

// page returns at most limit members after the first offset, ascending.
func (m *idBitmap) page(offset, limit int) []int64 {
	var out []int64
	for i, w := range m.words {
		if c := bits.OnesCount64(w); offset >= c {
			offset -= c
			continue
		}
		for w != 0 && len(out) < limit {
			id := m.lo + int64(64*i+bits.TrailingZeros64(w))
			w &= w - 1
			if offset > 0 {
				offset--
				continue
			}
			out = append(out, id)
		}
		if len(out) == limit {
			break
		}
	}
	return out
}

// ids returns the members, ascending.
func (m *idBitmap) ids() []int64 {
	out := make([]int64, 0, m.count())
	for i, w := range m.words {
		for w != 0 {
			out = append(out, m.lo+int64(64*i+bits.TrailingZeros64(w)))
			w &= w - 1
		}
	}
	return out
}

// termBitmap returns the hosts holding term among the ids from lo to hi.
func (s *Store) termBitmap(ctx context.Context, term string, lo, hi int64) (*idBitmap, error) {
	m := newIDBitmap(lo, hi)
	err := s.eachPostingRow(ctx, term, hi, func(first int64, n int, blob []byte) (bool, error) {
		if n > 1 && len(blob) > 1 && blob[0] == postingBitmap && blob[1]&1 != 0 {
			m.orRow(first, blob[1:])
			return true, nil
		}
		return true, eachPostingID(first, n, blob, func(id int64) bool {
			m.set(id)
			return id <= hi
		})
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// intersectIDs returns the ids in both ascending lists. Lists of like
// length meet in a bitmap of the shorter one's range (a bit test per id of
// the longer one, without the mispredicted branches of a merge); a much
// longer list is galloped through.
func intersectIDs(a, b []int64) []int64 {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(a) == 0 {
		return nil
	}
	if len(b) <= 16*len(a) {
		lo, hi := a[0], a[len(a)-1]
		if span := hi - lo + 1; span <= 64*int64(len(a)) { // the bitmap is no larger than a
			bm := make([]uint64, span/64+1)
			for _, id := range a {
				d := id - lo
				bm[d>>6] |= 1 << (d & 63)
			}
			out := make([]int64, 0, len(a))
			for _, id := range b {
				if id < lo {
					continue
				}
				if id > hi {
					break
				}
				d := id - lo
				if bm[d>>6]&(1<<(d&63)) != 0 {
					out = append(out, id)
				}
			}
			return out
		}
	}
	out := make([]int64, 0, len(a))
	// Gallop (skip ahead in growing steps) only when b is much longer:
	// on lists of like length a plain merge is faster.
	gallop := len(b) > 16*len(a)
	j := 0
	for _, id := range a {
		if gallop && j < len(b) && b[j] < id {
			step := 1
			for j+step < len(b) && b[j+step] < id {
				j += step
				step *= 2
			}
		}
		for j < len(b) && b[j] < id {
			j++
		}
		if j == len(b) {
			break
		}
		if b[j] == id {
			out = append(out, id)
			j++
		}
	}
	return out
}

// postingWriter writes posting rows in one transaction.
type postingWriter struct {
	tx *store.Tx
}

// termIDList is the ids a batch adds to or removes from one term.
type termIDList struct {
	term string
	ids  []int64 // ascending
}

// postingCols are the columns of host_postings.
var postingCols = []string{"term", "first_id", "n", "ids"}

// insertNew writes one row per term for ids no row holds yet and above every
// stored id (new hosts), in term order.
func (w postingWriter) insertNew(ctx context.Context, lists []termIDList) error {
	rows := make([]stagedPosting, len(lists))
	for i, l := range lists {
		rows[i] = stagedPosting{term: l.term, first: l.ids[0], n: len(l.ids), ids: encodePostingIDs(l.ids)}
	}
	return w.insertEncoded(ctx, rows)
}

// insertEncoded writes encoded rows that no row's key equals, in key order.
func (w postingWriter) insertEncoded(ctx context.Context, ps []stagedPosting) error {
	rows := make([][]any, len(ps))
	for i, p := range ps {
		rows[i] = []any{p.term, p.first, p.n, p.ids}
	}
	// A conflict would mean a row already holds one of these ids: the
	// batch fails rather than lose an id.
	if err := insertAll(ctx, w.tx, "host_postings", postingCols, "term, first_id", rows); err != nil {
		return fmt.Errorf("insert postings: %w", err)
	}
	return nil
}

// insertAll writes rows (values in the order of cols) into table, through
// COPY where the engine has it, else in multi-row INSERTs that ignore a
// conflict on key (OR IGNORE keeps SQLite from journalling the statement),
// and fails unless every row was stored: a conflict fails a COPY as a
// whole, and an INSERT's count proves nothing was ignored.
func insertAll(ctx context.Context, tx *store.Tx, table string, cols []string, key string, rows [][]any) error {
	if copied, err := tx.CopyFrom(ctx, table, cols, rows); err != nil || copied {
		return err
	}
	const per = 200 // rows per statement
	row := "(" + strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",") + ")"
	for c := range slices.Chunk(rows, per) {
		q, err := tx.Prepared(ctx, tx.Dialect().InsertIgnoring(table+" ("+strings.Join(cols, ", ")+") VALUES "+
			row+strings.Repeat(","+row, len(c)-1), key))
		if err != nil {
			return err
		}
		args := make([]any, 0, len(cols)*len(c))
		for _, r := range c {
			args = append(args, r...)
		}
		res, err := q.ExecContext(ctx, args...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != int64(len(c)) {
			return fmt.Errorf("%d of %d rows stored (%v)", n, len(c), err)
		}
	}
	return nil
}

// add adds ids of stored hosts to a term: as a row of their own, merged
// into the row of the same first id when there is one.
func (w postingWriter) add(ctx context.Context, l termIDList) error {
	var n int
	var blob []byte
	err := w.tx.QueryRow(ctx, `SELECT n, ids FROM host_postings WHERE term = ? AND first_id = ?`, l.term, l.ids[0]).Scan(&n, &blob)
	switch {
	case err == nil:
		have, err := decodePostingIDs(nil, l.ids[0], n, blob)
		if err != nil {
			return fmt.Errorf("add to postings of %q: %w", l.term, err)
		}
		ids := sortIDs(append(have, l.ids...))
		_, err = w.tx.Exec(ctx, `UPDATE host_postings SET n = ?, ids = ? WHERE term = ? AND first_id = ?`,
			len(ids), encodePostingIDs(ids), l.term, l.ids[0])
		if err != nil {
			return fmt.Errorf("add to postings of %q: %w", l.term, err)
		}
		return nil
	case errors.Is(err, sql.ErrNoRows):
		return w.insertNew(ctx, []termIDList{l})
	default:
		return fmt.Errorf("add to postings of %q: %w", l.term, err)
	}
}

// remove takes ids out of the rows of a term that hold them.
func (w postingWriter) remove(ctx context.Context, l termIDList) error {
	rows, err := w.tx.Query(ctx, `SELECT first_id, n, ids FROM host_postings WHERE term = ? AND first_id <= ? ORDER BY first_id`,
		l.term, l.ids[len(l.ids)-1])
	if err != nil {
		return fmt.Errorf("remove from postings of %q: %w", l.term, err)
	}
	var ps []posting
	for rows.Next() {
		var p posting
		var n int
		var blob []byte
		if err := rows.Scan(&p.first, &n, &blob); err != nil {
			rows.Close()
			return fmt.Errorf("remove from postings of %q: %w", l.term, err)
		}
		// Most rows hold none of the ids: they are told apart without
		// decoding (a bitmap row by its bits).
		if holds, err := rowHoldsAny(p.first, n, blob, l.ids); err != nil {
			rows.Close()
			return fmt.Errorf("remove from postings of %q: %w", l.term, err)
		} else if !holds {
			continue
		}
		if p.ids, err = decodePostingIDs(nil, p.first, n, blob); err != nil {
			rows.Close()
			return fmt.Errorf("remove from postings of %q: %w", l.term, err)
		}
		ps = append(ps, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("remove from postings of %q: %w", l.term, err)
	}
	for _, p := range ps {
		kept := slices.DeleteFunc(slices.Clone(p.ids), func(id int64) bool {
			_, found := slices.BinarySearch(l.ids, id)
			return found
		})
		if len(kept) == len(p.ids) {
			continue
		}
		if len(kept) > 0 && kept[0] == p.first {
			_, err := w.tx.Exec(ctx, `UPDATE host_postings SET n = ?, ids = ? WHERE term = ? AND first_id = ?`,
				len(kept), encodePostingIDs(kept), l.term, p.first)
			if err != nil {
				return fmt.Errorf("remove from postings of %q: %w", l.term, err)
			}
			continue
		}
		// The first id went: the row moves to its new first id.
		if _, err := w.tx.Exec(ctx, `DELETE FROM host_postings WHERE term = ? AND first_id = ?`, l.term, p.first); err != nil {
			return fmt.Errorf("remove from postings of %q: %w", l.term, err)
		}
		if len(kept) > 0 {
			if err := w.add(ctx, termIDList{l.term, kept}); err != nil {
				return err
			}
		}
	}
	return nil
}

// moveHostTerms is the Go step of migration 5: it writes the rows of
// host_terms (one per term and host) as posting lists, leaving out the
// terms a host's own row answers, adds the flag terms of every host, and
// drops host_terms. Both are read in key ranges, so
// memory stays flat however large the index.
func moveHostTerms(ctx context.Context, tx *store.Tx) error {
	w := postingWriter{tx: tx}
	var pending []termIDList
	flush := func(force bool) error {
		if len(pending) < 2000 && !force {
			return nil
		}
		err := w.insertNew(ctx, pending)
		pending = pending[:0]
		return err
	}
	var term string
	var ids []int64
	add := func() error {
		for c := range slices.Chunk(ids, maxPostingRow) {
			pending = append(pending, termIDList{term, slices.Clone(c)})
		}
		ids = ids[:0]
		return flush(false)
	}
	afterTerm, afterID := "", int64(-1)
	for {
		rows, err := tx.Query(ctx, `SELECT t.term, t.host_id, h.ip, h.name FROM host_terms t JOIN hosts h ON h.id = t.host_id
			WHERE (t.term, t.host_id) > (?, ?) ORDER BY t.term, t.host_id LIMIT 50000`, afterTerm, afterID)
		if err != nil {
			return fmt.Errorf("move host terms: %w", err)
		}
		n := 0
		for rows.Next() {
			var t, ip, name string
			var id int64
			if err := rows.Scan(&t, &id, &ip, &name); err != nil {
				rows.Close()
				return fmt.Errorf("move host terms: %w", err)
			}
			n++
			afterTerm, afterID = t, id
			// Terms the host's own row answers are not posted (see
			// selfAnswered).
			if t == Term(TermIP, ip) || t == Term(TermCertSubjectCN, name) || t == Term(TermCertDNSName, name) {
				continue
			}
			if t != term && len(ids) > 0 {
				if err := add(); err != nil {
					rows.Close()
					return err
				}
			}
			term = t
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("move host terms: %w", err)
		}
		if n < 50000 {
			break
		}
	}
	if len(ids) > 0 {
		if err := add(); err != nil {
			return err
		}
	}
	flags := hostFlags[:]
	var cols []string
	for _, f := range flags {
		cols = append(cols, string(f))
	}
	after := int64(0)
	for {
		rows, err := tx.Query(ctx, `SELECT id, `+strings.Join(cols, ", ")+` FROM hosts WHERE id > ? ORDER BY id LIMIT 50000`, after)
		if err != nil {
			return fmt.Errorf("move host flags: %w", err)
		}
		lists := make(map[string][]int64)
		n := 0
		for rows.Next() {
			var id int64
			vals := make([]int, len(flags))
			dst := []any{&id}
			for i := range vals {
				dst = append(dst, &vals[i])
			}
			if err := rows.Scan(dst...); err != nil {
				rows.Close()
				return fmt.Errorf("move host flags: %w", err)
			}
			n++
			after = id
			for i, f := range flags {
				t := flagTerm(f, vals[i] != 0)
				lists[t] = append(lists[t], id)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("move host flags: %w", err)
		}
		pending = append(pending, sortedTermLists(lists)...)
		if err := flush(false); err != nil {
			return err
		}
		if n < 50000 {
			break
		}
	}
	if err := flush(true); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DROP TABLE host_terms`); err != nil {
		return fmt.Errorf("move host terms: %w", err)
	}
	return nil
}
