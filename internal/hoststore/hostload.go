package hoststore

import "hash/maphash"

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
// A HostLoad is used by one writer at a time (BeginHosts).
type HostLoad struct {
	seed  maphash.Seed
	names map[uint64]struct{} // hashes of the names the load stored
	maxID int64               // the largest host id once the load's writes are in; -1 before its first
	off   bool
}

// maxLoadNames bounds the names a HostLoad remembers (about 20 bytes each).
const maxLoadNames = 4 << 20

// NewHostLoad returns the state of a new bulk load.
func NewHostLoad() *HostLoad {
	return &HostLoad{seed: maphash.MakeSeed(), names: make(map[uint64]struct{}), maxID: -1}
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
	_, ok := l.names[maphash.String(l.seed, name)]
	return ok
}

// stored notes the names the load stored and the largest id after them.
func (l *HostLoad) stored(names []string, maxID int64) {
	if !l.on() {
		return
	}
	if len(l.names)+len(names) > maxLoadNames {
		l.stop()
		return
	}
	for _, n := range names {
		l.names[maphash.String(l.seed, n)] = struct{}{}
	}
	l.maxID = maxID
}

// stop turns the load off for good and lets go of its names.
func (l *HostLoad) stop() {
	if l != nil {
		l.off, l.names = true, nil
	}
}
