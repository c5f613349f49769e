package hoststore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/ledger"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
)

// HostStats reports what UpsertHosts did with a batch.
type HostStats struct {
	Inserted  int // new hosts
	Updated   int // known hosts the batch added something to
	Unchanged int // known hosts the batch added nothing to
	Rejected  int // observations whose name is not a valid host name or IP
	// Rejects holds the reasons of the first rejected observations.
	Rejects []string
	// Names lists the hosts inserted or updated, in batch order.
	Names []string
}

// Add adds the counts of o to st (Rejects and Names are appended).
func (st *HostStats) Add(o HostStats) {
	st.Inserted += o.Inserted
	st.Updated += o.Updated
	st.Unchanged += o.Unchanged
	st.Rejected += o.Rejected
	st.Rejects = append(st.Rejects, o.Rejects...)
	st.Names = append(st.Names, o.Names...)
}

// maxTermLen bounds an indexed value; longer values (TXT records, banners)
// are kept in the host object but not indexed.
const maxTermLen = 256

// hostChunk is how many rows one multi-row statement carries.
const hostChunk = 1000

// HostBatch is a batch of observations prepared for UpsertHostBatch:
// normalised, folded by name, sorted, and each already encoded as the host
// it creates when its name is new (stamped, derived, its document and index
// terms), with the terms of the batch grouped. Preparing is CPU work that
// needs no database, so an ingest does it beside the writer, on other
// cores.
type HostBatch struct {
	hosts []preparedHost
	// terms are the value terms of the batch's hosts, in term order, each
	// with the indexes in hosts of the hosts that have it, ascending:
	// grouped while preparing, so the writer only maps them to ids.
	terms    []batchTerm
	rejected int
	rejects  []string
	// Source is the observation's source for the change ledger (its Time
	// defaults to the write's time). A zero Source is named "ingest" and
	// covers nothing, so it can add and change values but remove none.
	Source ledger.Source
}

type batchTerm struct {
	term  string
	hosts []int32
}

// Len is the number of distinct hosts in the batch.
func (b *HostBatch) Len() int { return len(b.hosts) }

// preparedHost is one host of a batch as it is stored when new: kept small,
// since a writer's transaction may hold many batches.
type preparedHost struct {
	name string
	row  []any  // the hosts columns (hostArgs), document included
	doc  []byte // the document
	// The observation's own first and last seen times (0 when it had
	// none): a host that turns out to be stored merges the observation,
	// which is the document with these times.
	seenFirst, seenLast int64
	terms               []string // the value terms (hostTerms), until grouped into HostBatch.terms
	flags               uint8    // bit i: hostFlags[i] is set
	// The names and address of the host, for its ledger row when new.
	domain, tld, subdomain, ip string
}

// observation returns the observation p was prepared from, for merging into
// a stored host: its document (the observation derived, which merges the
// same) with the observation's own times.
func (p preparedHost) observation() (host.Host, error) {
	var h host.Host
	if err := decodeHostDoc(p.doc, &h); err != nil {
		return h, fmt.Errorf("decode prepared host %q: %w", p.name, err)
	}
	h.FirstSeen, h.LastSeen = p.seenFirst, p.seenLast
	return h, nil
}

// PrepareHosts prepares observations for UpsertHostBatch. An observation
// without first/last seen times is stamped with the store's clock for the
// case it creates a host. Observations with invalid names are counted as
// rejected. The encoding work is spread over all cores. hs is its scratch
// space: its elements are changed, and no reference to it is kept, so the
// caller may reuse it once PrepareHosts returns.
func (s *Store) PrepareHosts(hs []host.Host) (*HostBatch, error) {
	b := &HostBatch{}
	now := s.st.Now().Unix()
	// The distinct hosts are gathered at the front of hs, merged by name:
	// a batch of hosts is large, and copying it touched fresh memory.
	byName := make(map[string]int, len(hs))
	k := 0
	for i := range hs {
		h := &hs[i]
		n, err := host.Normalize(h.Host)
		if err != nil {
			b.rejected++
			if len(b.rejects) < 100 {
				b.rejects = append(b.rejects, err.Error())
			}
			continue
		}
		h.Host, h.Domain, h.TLD, h.Subdomain = n.Host, n.Domain, n.TLD, n.Subdomain
		if n.IP && h.IPAddress == "" {
			h.IPAddress = n.Host
		}
		if j, ok := byName[h.Host]; ok {
			hs[j] = host.Merge(hs[j], *h)
			continue
		}
		byName[h.Host] = k
		if k != i {
			hs[k] = *h
		}
		k++
	}
	batch := hs[:k]
	// In name order, so a batch's new hosts take ids in name order whatever
	// the input order. (The hosts are sorted through an index: a host is a
	// large struct.)
	order := make([]int32, len(batch))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(x, y int32) int { return strings.Compare(batch[x].Host, batch[y].Host) })
	b.hosts = make([]preparedHost, len(batch))
	prepare := func(i int, enc *docEncoder) error {
		p := &b.hosts[i]
		h := batch[order[i]]
		p.name, p.seenFirst, p.seenLast = h.Host, h.FirstSeen, h.LastSeen
		p.domain, p.tld, p.subdomain, p.ip = h.Domain, h.TLD, h.Subdomain, h.IPAddress
		if h.LastSeen == 0 {
			h.LastSeen = now
		}
		if h.FirstSeen == 0 {
			h.FirstSeen = h.LastSeen
		}
		h.Derive()
		doc, err := enc.encode(h)
		if err != nil {
			return err
		}
		p.doc, p.row, p.terms, p.flags = doc, hostArgs(h, doc), hostTerms(h), flagBits(h)
		return nil
	}
	// One core fewer than there are: the writer storing the batch before
	// keeps one (on two cores, 17.6k rather than 16.2k hosts/s at 1M).
	workers := min(max(1, runtime.GOMAXPROCS(0)-1), (len(batch)+255)/256)
	errs := make([]error, max(workers, 1))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var enc docEncoder
			for i := w; i < len(batch); i += workers {
				if err := prepare(i, &enc); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	b.terms = groupTerms(b.hosts)
	return b, nil
}

// groupTerms returns the terms of hs in term order, each with the hosts
// that have it, and drops the hosts' own lists.
func groupTerms(hs []preparedHost) []batchTerm {
	at := make(map[string]int, 4*len(hs))
	var terms []batchTerm
	for i := range hs {
		for _, t := range hs[i].terms {
			k, ok := at[t]
			if !ok {
				k = len(terms)
				at[t] = k
				terms = append(terms, batchTerm{term: t})
			}
			terms[k].hosts = append(terms[k].hosts, int32(i))
		}
		hs[i].terms = nil
	}
	slices.SortFunc(terms, func(x, y batchTerm) int { return strings.Compare(x.term, y.term) })
	return terms
}

// UpsertHosts stores a batch of host observations in one transaction,
// merging each into the stored host of the same name (host.Merge: nothing
// the observation lacks is erased) and updating the search index. It is
// PrepareHosts then UpsertHostBatch.
func (s *Store) UpsertHosts(ctx context.Context, hs []host.Host) (HostStats, error) {
	return s.UpsertHostsFrom(ctx, ledger.Source{}, hs)
}

// UpsertHostsFrom is UpsertHosts of observations made by src (for the
// change ledger: see HostBatch.Source).
func (s *Store) UpsertHostsFrom(ctx context.Context, src ledger.Source, hs []host.Host) (HostStats, error) {
	b, err := s.PrepareHosts(slices.Clone(hs))
	if err != nil {
		return HostStats{}, err
	}
	b.Source = src
	return s.UpsertHostBatch(ctx, b)
}

// UpsertHostBatch stores a prepared batch in one transaction. An
// observation without first/last seen times keeps the times as they are
// when it merges into a known host, so ingesting the same input twice
// changes nothing. On error nothing of the batch is stored.
func (s *Store) UpsertHostBatch(ctx context.Context, b *HostBatch) (HostStats, error) {
	w, err := s.BeginHosts(ctx, nil)
	if err != nil {
		return HostStats{Rejected: b.rejected, Rejects: slices.Clone(b.rejects)}, err
	}
	st, err := w.Upsert(ctx, b)
	if err == nil {
		err = w.Commit()
	}
	if err != nil {
		w.Rollback()
		return HostStats{Rejected: st.Rejected, Rejects: st.Rejects}, err
	}
	return st, nil
}

// HostWriter stores prepared batches in one transaction: a bulk load that
// puts many batches in each transaction writes the index pages it keeps
// touching once per transaction rather than once per batch. It holds the
// hosts' writer lock (on SQLite, the database's) until Commit or Rollback,
// so other writers wait meanwhile.
type HostWriter struct {
	s     *Store
	ctx   context.Context // BeginHosts's: the transaction's
	tx    *store.Tx
	load  *HostLoad
	moves termMoves // the updated hosts' term changes, applied at Commit
	// stage is load when the transaction's posting rows go to its stage
	// (stage.go; decided once, as the transaction begins), else nil.
	stage *HostLoad
	// tracked says a batch of the transaction went through the tracker.
	tracked bool
	failed  bool
	done    bool // committed or rolled back
}

// BeginHosts starts a transaction of host batches, as part of load when
// it is not nil (the transactions of one bulk load, one after the other).
func (s *Store) BeginHosts(ctx context.Context, load *HostLoad) (*HostWriter, error) {
	tx, err := s.st.Begin(ctx)
	if err != nil {
		return nil, err
	}
	w := &HostWriter{s: s, ctx: ctx, tx: tx, load: load, moves: termMoves{}}
	// One writer at a time: new hosts take the ids after the largest
	// stored one, and merges read before they write.
	if err := tx.Dialect().TakeTurns(ctx, tx, store.LockHosts); err != nil {
		tx.Rollback()
		return nil, err
	}
	// Where its posting rows go; a stage that is not load's is entered
	// first.
	if err := s.beginStage(ctx, tx, load); err != nil {
		tx.Rollback()
		return nil, err
	}
	if load.stagingOn() {
		w.stage = load
	}
	return w, nil
}

// Upsert stores a batch in the transaction and returns what it did. After
// an error the transaction can only be rolled back.
func (w *HostWriter) Upsert(ctx context.Context, b *HostBatch) (HostStats, error) {
	st := HostStats{Rejected: b.rejected, Rejects: slices.Clone(b.rejects)}
	if w.failed {
		return st, errors.New("upsert hosts: the transaction failed before")
	}
	if len(b.hosts) == 0 {
		return st, nil
	}
	w.tracked = w.tracked || w.s.tracker != nil
	if err := w.s.upsertHostsTx(ctx, w.tx, b, &st, w.load, w.stage, w.moves); err != nil {
		w.failed = true
		return HostStats{Rejected: st.Rejected, Rejects: st.Rejects}, err
	}
	return st, nil
}

// bumpIndexGenSQL adds one to the host index's generation (migration
// 0043): readers that see it unchanged saw no write in between.
const bumpIndexGenSQL = `UPDATE host_index_gen SET gen = gen + 1`

// Commit makes the transaction's batches durable.
func (w *HostWriter) Commit() error {
	if w.failed {
		w.Rollback()
		return errors.New("commit hosts: the transaction failed")
	}
	if err := w.moves.apply(w.ctx, w.tx, w.stage); err != nil {
		w.Rollback()
		return fmt.Errorf("commit hosts: %w", err)
	}
	// Last before the commit: the generation's row lock is held only
	// while the commit runs (the writers take turns anyway).
	if _, err := w.tx.Exec(w.ctx, bumpIndexGenSQL); err != nil {
		w.Rollback()
		return fmt.Errorf("commit hosts: %w", err)
	}
	w.done = true
	if err := w.tx.Commit(); err != nil {
		w.load.stop() // what it noted of the transaction may not be stored
		return fmt.Errorf("commit: %w", err)
	}
	if w.stage != nil {
		w.stage.stageSeq = w.stage.pendSeq
	}
	if w.tracked {
		w.s.tracker.Committed()
	}
	return nil
}

// Rollback drops the transaction's batches (after Commit, it does nothing).
func (w *HostWriter) Rollback() {
	if !w.done {
		w.done = true
		w.load.stop() // it noted names that are not stored
	}
	w.tx.Rollback()
}

type storedHost struct {
	id  int64
	doc []byte
}

// upsertHostsTx stores a batch: every host is inserted as new, taking the
// ids after the largest stored one (the store's writers take turns, so no
// one else takes them), except the names already stored (looked up through
// the reversed-label index, or known new to a HostLoad), which are read,
// merged and updated. New hosts' terms are written
// as one posting row per term; updated hosts' term changes are applied to
// the rows holding them.
func (s *Store) upsertHostsTx(ctx context.Context, tx *store.Tx, b *HostBatch, st *HostStats, load, stage *HostLoad, moves termMoves) error {
	var next int64
	if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(id), 0) + 1 FROM hosts`).Scan(&next); err != nil {
		return fmt.Errorf("upsert hosts: %w", err)
	}
	load.begin(next - 1)
	ids := make([]int64, len(b.hosts)) // the id of each new host; 0 for stored ones
	allInserted := true
	for lo := 0; lo < len(b.hosts); lo += hostChunk {
		c := b.hosts[lo:min(lo+hostChunk, len(b.hosts))]
		var all bool
		var err error
		next, all, err = s.insertHostRows(ctx, tx, next, c, ids[lo:lo+len(c)], load)
		if err != nil {
			return err
		}
		allInserted = allInserted && all
	}
	if err := s.d.syncIDs(ctx, tx); err != nil {
		return fmt.Errorf("upsert hosts: %w", err)
	}

	// The posting rows of the new hosts, in term order (the inserts walk
	// the posting index in order): one per term of the batch, each host
	// added in id order (ids rise with the index in the batch).
	var flagIDs [2 * len(hostFlags)][]int64
	for i, p := range b.hosts {
		if ids[i] == 0 {
			continue
		}
		for f := range hostFlags {
			k := 2 * f
			if p.flags&(1<<f) != 0 {
				k++
			}
			flagIDs[k] = append(flagIDs[k], ids[i])
		}
	}
	flags := make([]termIDList, 0, len(flagIDs))
	for k, l := range flagIDs {
		if len(l) > 0 {
			flags = append(flags, termIDList{flagTerm(hostFlags[k/2], k%2 == 1), l})
		}
	}
	slices.SortFunc(flags, func(x, y termIDList) int { return strings.Compare(x.term, y.term) })
	size := 0
	for _, t := range b.terms {
		size += len(t.hosts)
	}
	all := make([]int64, 0, size) // every list's ids, in one allocation
	lists := make([]termIDList, 0, len(b.terms)+len(flags))
	for _, t := range b.terms {
		for len(flags) > 0 && flags[0].term < t.term {
			lists, flags = append(lists, flags[0]), flags[1:]
		}
		start := len(all)
		for _, i := range t.hosts {
			if ids[i] != 0 {
				all = append(all, ids[i])
			}
		}
		if len(all) > start {
			lists = append(lists, termIDList{t.term, all[start:len(all):len(all)]})
		}
	}
	lists = append(lists, flags...)
	if stage != nil {
		if err := stageLists(ctx, tx, stage, lists, false); err != nil {
			return err
		}
	} else if err := (postingWriter{tx: tx}).insertNew(ctx, lists); err != nil {
		return err
	}
	for i, p := range b.hosts {
		if ids[i] != 0 {
			st.Inserted++
			st.Names = append(st.Names, p.name)
		}
	}
	var known []preparedHost
	var knownNames []string
	if !allInserted {
		for i, p := range b.hosts {
			if ids[i] == 0 {
				known = append(known, p)
				knownNames = append(knownNames, p.name)
			}
		}
	}
	var tr BatchChanges
	if s.tracker != nil {
		src := b.Source
		if src.Name == "" {
			src.Name, src.Covers = "ingest", []ledger.Category{}
		}
		if src.Time == 0 {
			src.Time = s.st.Now().Unix() // ingest time: when the index learnt it
		}
		var err error
		if tr, err = s.tracker.Track(ctx, tx, src, knownNames); err != nil {
			return fmt.Errorf("upsert hosts: %w", err)
		}
		for i, p := range b.hosts {
			if ids[i] != 0 {
				tr.New(&host.Host{Host: p.name, Domain: p.domain, TLD: p.tld, Subdomain: p.subdomain, IPAddress: p.ip})
			}
		}
	}
	if err := s.mergeKnown(ctx, tx, known, tr, st, moves); err != nil {
		return err
	}
	if tr != nil {
		if err := tr.Flush(ctx, tx); err != nil {
			return fmt.Errorf("upsert hosts: %w", err)
		}
	}
	return nil
}

// mergeKnown merges the batch's hosts already stored into their rows,
// tracking the changes in tr when it is not nil, and notes their term
// moves.
func (s *Store) mergeKnown(ctx context.Context, tx *store.Tx, known []preparedHost, tr BatchChanges, st *HostStats, moves termMoves) error {
	if len(known) == 0 {
		return nil
	}
	existing, err := s.loadHosts(ctx, tx, known)
	if err != nil {
		return err
	}
	for _, p := range known {
		old, ok := existing[p.name]
		if !ok {
			return fmt.Errorf("upsert hosts: %q is neither new nor stored", p.name)
		}
		h, err := p.observation()
		if err != nil {
			return err
		}
		var prev host.Host
		if err := decodeHostDoc(old.doc, &prev); err != nil {
			return fmt.Errorf("decode stored host %q: %w", h.Host, err)
		}
		// An observation older than what is stored fills gaps but does
		// not override newer values, so the order in which files are
		// ingested does not matter and re-ingesting changes nothing.
		var merged host.Host
		if h.LastSeen != 0 && h.LastSeen < prev.LastSeen {
			merged = host.Merge(h, prev)
		} else {
			merged = host.Merge(prev, h)
		}
		if tr != nil {
			tr.Diff(&prev, &merged, &h) // prunes what the source no longer sees
		}
		doc, err := encodeHostDoc(merged)
		if err != nil {
			return err
		}
		if bytes.Equal(doc, old.doc) || !isCurrentDoc(old.doc) && samePrevDoc(prev, doc) {
			st.Unchanged++
			continue
		}
		if err := s.updateHostRow(ctx, tx, old.id, merged, doc); err != nil {
			return err
		}
		oldTerms, newTerms := allHostTerms(prev), allHostTerms(merged)
		for _, t := range newTerms {
			if _, found := slices.BinarySearch(oldTerms, t); !found {
				moves.note(t, old.id, true)
			}
		}
		for _, t := range oldTerms {
			if _, found := slices.BinarySearch(newTerms, t); !found {
				moves.note(t, old.id, false)
			}
		}
		st.Updated++
		st.Names = append(st.Names, h.Host)
	}
	return nil
}

// termMoves are the posting changes of a transaction's updated hosts,
// applied once as it commits (nothing reads postings inside a host
// transaction): a common term's rows are read and rewritten once a
// transaction rather than once a batch, and a change that a later batch
// undoes is never written. term → host id → added (true) or removed.
type termMoves map[string]map[int64]bool

// note records that id gained (add) or lost term. Changes come from
// successive versions of the host, so a change opposite to the one noted
// before cancels it.
func (m termMoves) note(term string, id int64, add bool) {
	ids := m[term]
	if ids == nil {
		ids = make(map[int64]bool)
		m[term] = ids
	}
	if prev, ok := ids[id]; ok && prev != add {
		delete(ids, id)
		return
	}
	ids[id] = add
}

// apply writes the changes: removals first, then additions, each in term
// order; to the stage of load when it is not nil.
func (m termMoves) apply(ctx context.Context, tx *store.Tx, stage *HostLoad) error {
	adds, dels := map[string][]int64{}, map[string][]int64{}
	for t, ids := range m {
		for id, add := range ids {
			if add {
				adds[t] = append(adds[t], id)
			} else {
				dels[t] = append(dels[t], id)
			}
		}
	}
	if stage != nil {
		if err := stageLists(ctx, tx, stage, sortedTermLists(dels), true); err != nil {
			return err
		}
		if err := stageLists(ctx, tx, stage, sortedTermLists(adds), false); err != nil {
			return err
		}
		clear(m)
		return nil
	}
	w := postingWriter{tx: tx}
	for _, l := range sortedTermLists(dels) {
		if err := w.remove(ctx, l); err != nil {
			return err
		}
	}
	for _, l := range sortedTermLists(adds) {
		if err := w.add(ctx, l); err != nil {
			return err
		}
	}
	clear(m)
	return nil
}

// sortedTermLists returns m's lists in term order, each sorted.
func sortedTermLists(m map[string][]int64) []termIDList {
	out := make([]termIDList, 0, len(m))
	for t, ids := range m {
		out = append(out, termIDList{t, sortIDs(ids)})
	}
	slices.SortFunc(out, func(a, b termIDList) int { return strings.Compare(a.term, b.term) })
	return out
}

// samePrevDoc reports whether prev, read from a document of an older form,
// encodes to doc: the host did not change.
func samePrevDoc(prev host.Host, doc []byte) bool {
	again, err := encodeHostDoc(prev)
	return err == nil && bytes.Equal(again, doc)
}

func (s *Store) loadHosts(ctx context.Context, tx *store.Tx, batch []preparedHost) (map[string]storedHost, error) {
	out := make(map[string]storedHost)
	keys := make([]string, len(batch))
	for i, p := range batch {
		keys[i] = host.ReverseKey(p.name)
	}
	err := store.QueryIn(ctx, tx, `SELECT id, name, doc FROM hosts WHERE rkey IN (%s)`, keys, func(rows *sql.Rows) error {
		var sh storedHost
		var name string
		if err := rows.Scan(&sh.id, &name, &sh.doc); err != nil {
			return err
		}
		out[name] = sh
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load hosts: %w", err)
	}
	return out, nil
}

const hostCols = `name, rkey, ipkey, is_resolvable, http_title, last_seen, doc`

func hostArgs(h host.Host, doc []byte) []any {
	return []any{h.Host, host.ReverseKey(h.Host), IPKey(h.IPAddress), store.BoolInt(h.IsResolvable),
		strings.ToLower(h.HTTPTitle), h.LastSeen, doc}
}

// IPKey returns the index key of an IP address: its 16 bytes (an IPv4
// address mapped into IPv6) as 32 lower-case hex digits, or "" when s is
// not an address.
func IPKey(s string) string {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return ""
	}
	b := a.As16()
	return hex.EncodeToString(b[:])
}

// storedNames returns which of names are stored, looked up by their
// reversed-label keys (the subdomain index; names have no index of their
// own).
func (s *Store) storedNames(ctx context.Context, tx *store.Tx, names []string) (map[string]bool, error) {
	out := make(map[string]bool)
	keys := make([]string, len(names))
	for i, n := range names {
		keys[i] = host.ReverseKey(n)
	}
	collect := func(rows *sql.Rows) error {
		var n string
		if err := rows.Scan(&n); err != nil {
			return err
		}
		out[n] = true
		return nil
	}
	err := s.d.storedNames(ctx, tx, keys, collect)
	if err != nil {
		return nil, fmt.Errorf("find stored hosts: %w", err)
	}
	return out, nil
}

// insertHostRows inserts the hosts of a chunk whose names are not stored and
// sets ids[i] to the id hs[i] took (0 when stored before). next is the id
// the first new host takes; it returns the one after and whether every
// host was new. The hosts' writers take turns, so what storedNames finds
// stays true until the insert. New hosts take consecutive ids: on SQLite
// the table's own (largest + 1, in order), on PostgreSQL given.
func (s *Store) insertHostRows(ctx context.Context, tx *store.Tx, next int64, hs []preparedHost, ids []int64, load *HostLoad) (int64, bool, error) {
	names := make([]string, 0, len(hs))
	for _, p := range hs {
		// A bulk load that stored every stored name knows the others
		// are new (HostLoad).
		if !load.on() || load.mayHave(p.name) {
			names = append(names, p.name)
		}
	}
	stored := map[string]bool{}
	if len(names) > 0 {
		var err error
		if stored, err = s.storedNames(ctx, tx, names); err != nil {
			return 0, false, err
		}
	}
	ownIDs := !s.d.explicitIDs()
	args := make([]any, 0, 8*len(hs))
	n := int64(0)
	for i, p := range hs {
		if stored[p.name] {
			continue
		}
		ids[i] = next + n
		if !ownIDs {
			args = append(args, ids[i])
		}
		args = append(args, p.row...)
		n++
	}
	if n == 0 {
		return next, false, nil
	}
	if err := s.insertHosts(ctx, tx, ownIDs, n, args); err != nil {
		return 0, false, err
	}
	if load.on() {
		inserted := make([]string, 0, n)
		for i, p := range hs {
			if ids[i] != 0 {
				inserted = append(inserted, p.name)
			}
		}
		load.stored(inserted, next+n-1)
	}
	return next + n, int(n) == len(hs), nil
}

// hostCopyCols are the columns of a host row with its id, for COPY.
var hostCopyCols = strings.Split("id, "+hostCols, ", ")

// insertHosts inserts n new host rows, whose values are args (each row's
// id first unless ownIDs): through COPY where the engine has it (one
// binary stream, no statement of 8,000 parameters to bind and execute),
// else as one multi-row INSERT.
func (s *Store) insertHosts(ctx context.Context, tx *store.Tx, ownIDs bool, n int64, args []any) error {
	if !ownIDs {
		rows := make([][]any, n)
		for i := range rows {
			rows[i] = args[i*len(hostCopyCols) : (i+1)*len(hostCopyCols)]
		}
		if copied, err := tx.CopyFrom(ctx, "hosts", hostCopyCols, rows); err != nil {
			return fmt.Errorf("insert hosts: %w", err)
		} else if copied {
			return nil
		}
	}
	cols, row := hostCols, `(?,?,?,?,?,?,?)`
	if !ownIDs {
		// An explicit id on SQLite would make the insert a statement
		// that can abort (a non-integer id), and so journalled.
		cols, row = "id, "+hostCols, `(?,?,?,?,?,?,?,?)`
	}
	// OR IGNORE keeps SQLite from journalling the statement; nothing is
	// there to ignore, and the count below proves it.
	q := `INSERT INTO hosts (` + cols + `) VALUES ` + row + strings.Repeat(","+row, int(n)-1)
	if ownIDs {
		q = `INSERT OR IGNORE INTO hosts (` + cols + `) VALUES ` + row + strings.Repeat(","+row, int(n)-1)
	}
	stmt, err := tx.Prepared(ctx, q)
	if err != nil {
		return fmt.Errorf("insert hosts: %w", err)
	}
	res, err := stmt.ExecContext(ctx, args...)
	if err != nil {
		return fmt.Errorf("insert hosts: %w", err)
	}
	if got, err := res.RowsAffected(); err != nil || got != n {
		return fmt.Errorf("insert hosts: %d of %d rows stored (%v)", got, n, err)
	}
	return nil
}

func (s *Store) updateHostRow(ctx context.Context, tx *store.Tx, id int64, h host.Host, doc []byte) error {
	stmt, err := tx.Prepared(ctx, `UPDATE hosts SET ipkey = ?, is_resolvable = ?, http_title = ?, last_seen = ?, doc = ? WHERE id = ?`)
	if err != nil {
		return fmt.Errorf("update host %q: %w", h.Host, err)
	}
	args := append(hostArgs(h, doc)[2:], id) // name and rkey never change
	if _, err := stmt.ExecContext(ctx, args...); err != nil {
		return fmt.Errorf("update host %q: %w", h.Host, err)
	}
	return nil
}

// Host returns the stored host of the given name (normalised first), or a
// not_found error.
func (s *Store) Host(ctx context.Context, name string) (host.Host, error) {
	n, err := host.Normalize(name)
	if err != nil {
		return host.Host{}, periscope.Errorf(periscope.ENotFound, "No host %q is indexed.", periscope.Clip(name, 64))
	}
	row, err := s.st.QueryRowPrepared(ctx, `SELECT doc FROM hosts WHERE rkey = ? AND name = ?`, host.ReverseKey(n.Host), n.Host)
	if err != nil {
		return host.Host{}, fmt.Errorf("find host %q: %w", n.Host, err)
	}
	var doc []byte
	if err := row.Scan(&doc); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return host.Host{}, periscope.Errorf(periscope.ENotFound, "No host %q is indexed.", n.Host)
		}
		return host.Host{}, fmt.Errorf("find host %q: %w", n.Host, err)
	}
	var h host.Host
	if err := decodeHostDoc(doc, &h); err != nil {
		return host.Host{}, fmt.Errorf("decode host %q: %w", n.Host, err)
	}
	return h, nil
}

// hostTerms returns the sorted, distinct value terms of h: "<field>:<value>"
// with values lower-cased, one per value of each indexed field (its flag
// terms are allHostTerms'). Search
// filters are looked up as the same terms (see HostQuery).
func hostTerms(h host.Host) []string {
	// The terms are written into one buffer and cut from one string: a
	// host has about 25, and one allocation instead of one each.
	buf := make([]byte, 0, 1024)
	ends := make([]int, 0, 48) // start and end of each term in buf
	add := func(field, v string) {
		v = strings.TrimSpace(v)
		if v == "" {
			return
		}
		start := len(buf)
		buf = append(append(buf, field...), ':')
		if isLowerASCII(v) {
			buf = append(buf, v...)
		} else {
			buf = append(buf, strings.ToLower(v)...)
		}
		if len(buf)-start-len(field)-1 > maxTermLen {
			buf = buf[:start]
			return
		}
		ends = append(ends, start, len(buf))
	}
	addAll := func(field string, vs []string) {
		for _, v := range vs {
			add(field, v)
		}
	}
	// Terms the host's own row answers are left out (see selfAnswered):
	// its address (the ipkey index) and its own name in its certificate
	// (the reversed-label index). Most hosts have nothing else unique to index, so
	// storing a host writes few index rows at random places.
	notSelf := func(v string) bool { return !strings.EqualFold(strings.TrimSpace(v), h.Host) }
	add(TermDomain, h.Domain)
	add(TermTLD, h.TLD)
	for _, ips := range [][]string{h.DNS.A, h.DNS.AAAA} {
		for _, v := range ips {
			if !strings.EqualFold(v, h.IPAddress) {
				add(TermIP, v)
			}
		}
	}
	m := h.IPMetadata
	add(TermCountry, m.CountryCode)
	add(TermCountryName, m.CountryName)
	add(TermCity, m.CityName)
	if m.ASN > 0 {
		add(TermASN, strconv.Itoa(m.ASN))
	}
	add(TermOrg, m.Organization)
	if m.ISP != m.Organization {
		add(TermOrg, m.ISP)
	}
	add(TermCloud, h.Cloud.Provider)
	add(TermRegion, h.Cloud.Region)
	add(TermCDN, h.CDN)
	if h.HTTPStatusCode > 0 {
		add(TermStatus, strconv.Itoa(h.HTTPStatusCode))
	}
	for _, p := range h.NetworkPorts {
		add(TermPort, strconv.Itoa(p))
	}
	for _, sv := range h.NetworkServices {
		add(TermService, sv.Service)
		add(TermProduct, sv.Product)
	}
	addAll(TermProduct, h.Products)
	addAll(TermTag, h.Tags)
	addAll(TermTech, h.Web)
	addAll(TermDNSCNAME, h.DNS.CNAME)
	addAll(TermDNSMX, h.DNS.MX)
	addAll(TermDNSNS, h.DNS.NS)
	addAll(TermDNSPTR, h.DNS.PTR)
	addAll(TermDNSTXT, h.DNS.TXT)
	c := h.Cert
	if notSelf(c.SubjectCommonName) {
		add(TermCertSubjectCN, c.SubjectCommonName)
	}
	add(TermCertSubjectOrg, c.SubjectOrg)
	add(TermCertIssuerCN, c.IssuerCommonName)
	add(TermCertIssuerOrg, c.IssuerOrg)
	add(TermCertSHA256, c.SHA256Fingerprint)
	add(TermCertSHA1, c.SHA1Fingerprint)
	add(TermCertMD5, c.MD5Fingerprint)
	add(TermCertSerial, c.SerialNumber)
	for _, n := range c.DNSNames {
		if notSelf(n) {
			add(TermCertDNSName, n)
		}
	}
	all := string(buf)
	ts := make([]string, len(ends)/2)
	for i := range ts {
		ts[i] = all[ends[2*i]:ends[2*i+1]]
	}
	slices.Sort(ts)
	return slices.Compact(ts)
}

// isLowerASCII reports whether s is ASCII without upper-case letters, so
// strings.ToLower would return it as it is.
func isLowerASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || ('A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// allHostTerms returns the value terms and the flag terms of h, sorted.
func allHostTerms(h host.Host) []string {
	ts := hostTerms(h)
	bits := flagBits(h)
	for i, f := range hostFlags {
		ts = append(ts, flagTerm(f, bits&(1<<i) != 0))
	}
	slices.Sort(ts)
	return ts
}

// hostFlags are the flags, in the order of flagBits.
var hostFlags = [...]HostFlag{FlagLive, FlagResolvable, FlagCloud, FlagCDN, FlagCloudflare, FlagIPv6, FlagPrivateIP}

// flagBits returns h's flags as bits in the order of hostFlags.
func flagBits(h host.Host) uint8 {
	var b uint8
	for i, set := range []bool{h.IsLive, h.IsResolvable, h.IsCloud, h.IsCDN, h.IsCloudflare, h.HasIPv6, h.HasPrivateIP} {
		if set {
			b |= 1 << i
		}
	}
	return b
}

// flagTerm is the index term of a flag's value: every host has one term
// per flag, so a flag test, true or false, is a posting list like any
// other filter.
func flagTerm(f HostFlag, set bool) string {
	return string(f) + ":" + strconv.FormatBool(set)
}

// The fields of index terms.
const (
	TermDomain         = "d"
	TermTLD            = "tld"
	TermIP             = "ip"
	TermCountry        = "cc"
	TermCountryName    = "cn"
	TermCity           = "city"
	TermASN            = "asn"
	TermOrg            = "org"
	TermCloud          = "cloud"
	TermRegion         = "region"
	TermCDN            = "cdn"
	TermStatus         = "status"
	TermPort           = "port"
	TermService        = "svc"
	TermProduct        = "prod"
	TermTag            = "tag"
	TermTech           = "tech"
	TermDNSCNAME       = "cname"
	TermDNSMX          = "mx"
	TermDNSNS          = "ns"
	TermDNSPTR         = "ptr"
	TermDNSTXT         = "txt"
	TermCertSubjectCN  = "scn"
	TermCertSubjectOrg = "sorg"
	TermCertIssuerCN   = "icn"
	TermCertIssuerOrg  = "iorg"
	TermCertSHA256     = "sha256"
	TermCertSHA1       = "sha1"
	TermCertMD5        = "md5"
	TermCertSerial     = "serial"
	TermCertDNSName    = "san"
)

// AnalyzeHosts refreshes the PostgreSQL planner statistics of the host
// index after a bulk load, so the first queries are planned on real
// figures rather than waiting for autovacuum. SQLite needs nothing: its
// host queries fix their join order.
func (s *Store) AnalyzeHosts(ctx context.Context) error {
	q := s.d.analyze()
	if q == "" {
		return nil
	}
	if _, err := s.exec(ctx, q); err != nil {
		return fmt.Errorf("analyze hosts: %w", err)
	}
	return nil
}

// VacuumHosts vacuums and analyzes the host index after a first bulk load
// (PostgreSQL: every page of the new tables is marked visible for
// index-only scans now, not by autovacuum under the first searches);
// nothing on SQLite.
func (s *Store) VacuumHosts(ctx context.Context) error {
	if err := s.st.VacuumAnalyze(ctx, "hosts", "host_postings"); err != nil {
		return fmt.Errorf("vacuum hosts: %w", err)
	}
	return nil
}
