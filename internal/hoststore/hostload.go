package hoststore

import (
	"context"
	"fmt"
	"hash/maphash"
)

// HostLoad is what one bulk load knows between its transactions, so that
// storing a new name needs no lookup. A host is looked up by name before it
// is inserted (names have no unique index: store.insertHostRows); when the
// hosts table was empty as the load began and no one else has stored a
// host since, the names the load stored itself are all there are, and a
// name it has not stored is new without asking the database. Another
// writer is seen by the largest host id: hosts are never deleted and a new
// host always takes the next id, so the largest id is the load's own as
// long as no one else inserted. Then, or after a rollback, or past
// maxLoadNames names, the load looks names up as any writer does.
//
// The names are kept in Bloom filters (nameFilter), 2 bytes a name: a
// name the filters may hold is looked up, so a false positive
// costs one lookup and never a duplicate. (A map of their hashes took
// 30 bytes a name: 300 MB at ten million, so it stopped at 4 million and
// the rest of a 10M load looked every name up.)
//
// A HostLoad is used by one writer at a time (BeginHosts).
type HostLoad struct {
	seed  maphash.Seed
	names []*nameFilter // the names the load stored; the last one takes the new names
	count int           // names noted
	maxID int64         // the largest host id once the load's writes are in; -1 before its first
	off   bool
	// stage says the load may stage its posting rows (StagePostings);
	// staging that it does: the stage holds its rows and no one else's,
	// up to stageSeq (committed) and pendSeq (its open transaction's).
	stage, staging    bool
	stageSeq, pendSeq int64
}

// StagePostings has the load stage its posting rows when it begins on an
// empty host index (stage.go): they enter host_postings sorted when the
// load ends (FinishStagedPostings) or when another writer comes first,
// and until then searches by term do not find the load's hosts.
func (l *HostLoad) StagePostings() { l.stage = true }

// stagingOn reports whether the load's posting rows go to the stage.
func (l *HostLoad) stagingOn() bool { return l.on() && l.staging }

// Staged reports whether the load staged posting rows that may still be
// waiting (FinishStagedPostings enters them).
func (l *HostLoad) Staged() bool { return l != nil && l.stageSeq > 0 }

// maxLoadNames bounds the names a HostLoad remembers (its filters take
// 2 bytes a name).
const maxLoadNames = 256 << 20

// firstFilterNames is the capacity of a load's first filter; each next
// one holds twice the one before, so ten million names take four (30 MB).
const firstFilterNames = 1 << 20

// NewHostLoad returns the state of a new bulk load.
func NewHostLoad() *HostLoad {
	return &HostLoad{seed: maphash.MakeSeed(), maxID: -1}
}

// on reports whether the load answers for the names it did not store.
func (l *HostLoad) on() bool { return l != nil && !l.off }

// begin checks a batch against the largest stored id: the load stays on
// only when that is its own (or the table is empty at its start).
func (l *HostLoad) begin(maxID int64) {
	if !l.on() {
		return
	}
	if (l.maxID < 0 && maxID != 0) || (l.maxID >= 0 && maxID != l.maxID) {
		l.stop()
	}
}

// mayHave reports whether the load may have stored name (a hash may
// collide: a name it says "maybe" to is looked up).
func (l *HostLoad) mayHave(name string) bool {
	h := maphash.String(l.seed, name)
	for _, f := range l.names {
		if f.mayHave(h) {
			return true
		}
	}
	return false
}

// stored notes the names the load stored and the largest id after them.
func (l *HostLoad) stored(names []string, maxID int64) {
	if !l.on() {
		return
	}
	if l.count+len(names) > maxLoadNames {
		l.stop()
		return
	}
	for _, n := range names {
		if len(l.names) == 0 || l.names[len(l.names)-1].full() {
			c := firstFilterNames << len(l.names)
			l.names = append(l.names, newNameFilter(c))
		}
		l.names[len(l.names)-1].add(maphash.String(l.seed, n))
	}
	l.count += len(names)
	l.maxID = maxID
}

// stop turns the load off for good and lets go of its names.
func (l *HostLoad) stop() {
	if l != nil {
		l.off, l.names = true, nil
	}
}

// nameFilter is a Bloom filter of name hashes: 16 bits and 8 probes a
// name at capacity, which says "maybe" of about 0.06% of the names it was
// not given (and of every name it was).
type nameFilter struct {
	bits     []uint64
	mask     uint64 // len(bits)*64 - 1
	n, limit int
}

const (
	filterBitsPerName = 16
	filterProbes      = 8
)

func newNameFilter(capacity int) *nameFilter {
	words := 1
	for words*64 < capacity*filterBitsPerName {
		words *= 2 // a power of two: a probe is a mask
	}
	return &nameFilter{bits: make([]uint64, words), mask: uint64(words*64 - 1), limit: capacity}
}

func (f *nameFilter) full() bool { return f.n >= f.limit }

// probe returns the i-th bit position of hash h (double hashing: two
// halves of one 64-bit hash make the eight).
func (f *nameFilter) probe(h uint64, i int) uint64 {
	return (h + uint64(i)*(h>>32|h<<32|1)) & f.mask
}

func (f *nameFilter) add(h uint64) {
	for i := range filterProbes {
		b := f.probe(h, i)
		f.bits[b>>6] |= 1 << (b & 63)
	}
	f.n++
}

func (f *nameFilter) mayHave(h uint64) bool {
	for i := range filterProbes {
		b := f.probe(h, i)
		if f.bits[b>>6]&(1<<(b&63)) == 0 {
			return false
		}
	}
	return true
}

// BulkDeferredIndexes are the host-table indexes a first load into an
// empty host index builds at its end rather than row by row
// (store.DeferIndexes): the load never reads them. The reversed-name index
// stays: the load looks up the names its Bloom filters may hold.
var BulkDeferredIndexes = []string{"hosts_ipkey"}

// Empty reports whether no host is stored.
func (s *Store) Empty(ctx context.Context) (bool, error) {
	var n int
	if err := s.st.QueryRow(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM hosts LIMIT 1) h`).Scan(&n); err != nil {
		return false, fmt.Errorf("count hosts: %w", err)
	}
	return n == 0, nil
}
