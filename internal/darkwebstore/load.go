package darkwebstore

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/periscope-oss/periscope/internal/darkweb"
)

// Listing index codes: internal rows that make the enterprise listings
// index-only range scans. codeCredDomain rows (email-domain key → record)
// exist only for records with a password or hash; codeDomainEmail rows
// (email-domain key → record, x = the email's key) exist for every record
// with an email, so a page of distinct emails, most recently seen first, is
// a range scan. An email's domains are fixed by the email, so an email
// whose search key is not stored yet is new to each of them: that is how
// the build counts a domain's distinct emails, without rows of its own.
const (
	codeCredDomain  = 17
	codeDomainEmail = 18
)

// A stored key is a blind index packed into an integer: the type code in
// the top byte and the first 56 bits of the HMAC-SHA256 below it. An
// integer of 8 bytes is a third of the 16-byte blob it replaces, compares
// in one instruction and packs into the staged JSON arrays. At 56 bits two
// values of one type share a key about once in 2^28 values' worth of
// pairs; every search and listing checks each record it returns against
// the decrypted value, so a shared key costs a wasted read, never a wrong
// answer.
const keyMask = 1<<56 - 1

func packKey(code int, h []byte) int64 {
	return int64(uint64(code)<<56 | binary.BigEndian.Uint64(h[:8])>>8)
}

// key is the stored key of a normalised value of type t.
func (d *Store) key(t darkweb.Type, v string) int64 { return packKey(typeCodes[t], d.keys.Index(t, v)) }

// codeLo is the smallest key of a code (the next code's is its bound).
func codeLo(code int) int64 { return int64(code) << 56 }

// recordKeys returns the keys a cleaned record is indexed under (its
// listing keys last, from nlist on) and the key of its email (0 without
// one).
func (d *Store) recordKeys(r *darkweb.Record) (keys []int64, nlist int, email int64) {
	terms := d.norm.Terms(r)
	for _, t := range terms {
		if t.Type == darkweb.Email {
			email = d.key(darkweb.Email, t.Value)
		}
	}
	keys = make([]int64, 0, len(terms)+2)
	for _, t := range terms {
		if t.Type != darkweb.EmailDomain {
			keys = append(keys, d.key(t.Type, t.Value))
		}
	}
	nlist = len(keys)
	for _, t := range terms {
		if t.Type != darkweb.EmailDomain {
			continue
		}
		// An email domain is not a search type (domain is): only the
		// listing rows are kept for it.
		h := d.keys.Index(darkweb.EmailDomain, t.Value)
		if r.HasSecret() {
			keys = append(keys, packKey(codeCredDomain, h))
		}
		if email != 0 {
			keys = append(keys, packKey(codeDomainEmail, h))
		}
	}
	return keys, nlist, email
}

// packKeys is the staged form of keys: a JSON array of integers, which
// SQLite's json_each and PostgreSQL's json_array_elements_text unpack.
func packKeys(keys []int64) string {
	b := make([]byte, 0, 20*len(keys)+2)
	b = append(b, '[')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, k, 10)
	}
	return string(append(b, ']'))
}

// Multi-row inserts: rows per statement (well under SQLite's 32,766 and
// PostgreSQL's 65,535 parameters).
const (
	recordsPerInsert = 200
	stagePerInsert   = 500
)

const (
	recordColumns = `darkweb_records (seq, id, key_id, blob, breach, breach_date, source, date_added) VALUES `
	stageColumns  = `darkweb_stage (seq, d, email, keys, lkeys) VALUES `
	// stageSeqColumns stage a record whose keys a Loader holds in memory.
	stageSeqColumns = `darkweb_stage (seq, d, email) VALUES `
)

// AddResult counts what Add did.
type AddResult struct {
	Added, Duplicates int
}

// row is a stored record as read back.
type row struct {
	seq                                   int64
	id, keyID, breach, breachDate, source string
	blob                                  []byte
	dateAdded                             int64
}

// Result is a record found by a search or listing.
type Result struct {
	ID        string
	Record    darkweb.Record
	DateAdded int64
}

// sealed is a record ready to store: its id, blob and packed keys.
type sealed struct {
	id    []byte
	blob  []byte
	email int64
	keys  []int64 // every key, the listing keys from nlist on
	nlist int
	// The record's clear columns (copied: a Loader writes after Add
	// returns, when the caller may have reused its records).
	breach, breachDate, source string
}

// seal computes ids, blobs and keys of recs on every core (AES-GCM, a
// dozen HMACs and the normalisation of every indexed value are most of
// ingest's CPU).
func (d *Store) seal(recs []darkweb.Record) ([]sealed, error) {
	out := make([]sealed, len(recs))
	workers := min(runtime.GOMAXPROCS(0), max(1, len(recs)/64))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(recs); i += workers {
				r := &recs[i]
				hexID := d.keys.RecordID(r)
				id, _ := hex.DecodeString(hexID)
				blob, err := d.keys.Seal(hexID, r)
				if err != nil {
					errs[w] = fmt.Errorf("seal record: %w", err)
					return
				}
				keys, nlist, email := d.recordKeys(r)
				out[i] = sealed{id: id, blob: blob, email: email, keys: keys, nlist: nlist, breach: r.Breach, breachDate: r.BreachDate, source: r.Source}
			}
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// Loader adds batches of records through one connection held for its
// life (SQLite keeps that connection's page cache warm from batch to
// batch). Its batches are stored at once but indexed later, in bulk: see
// Flush. Close it when done.
type Loader struct {
	d    *Store
	conn *sql.Conn
	// writing is set while a batch's transaction runs in the background;
	// written receives its error.
	writing bool
	written chan error
	// busy is the time spent in the connection's transactions (the
	// single writer's share of a load).
	busy time.Duration
	// buildEvery is how many staged records trigger a build (0, the
	// default: only Flush and Close build). A build inserts its rows in
	// key order into the whole index: with builds every million records,
	// a load of ten million rewrote most of a growing index ten times
	// (31 GB written), while one build at the end appends into an empty
	// index or passes over an existing one once.
	buildEvery int
	staged     int
	// dups counts duplicates found by builds Add ran, not yet reported.
	dups int
	// mem holds the index rows of the records this loader staged, on
	// SQLite (nil on PostgreSQL, whose build is set-based SQL over the
	// keys staged in darkweb_stage).
	mem *memIndex
}

// lockDarkweb is the PostgreSQL advisory lock key that makes dark-web
// writers take turns (a batch reads the highest seq before it appends;
// SQLite's BEGIN IMMEDIATE serialises writers already).
const lockDarkweb = 1685550955

// Loader returns a loader on a connection of its own. Records left staged
// by an interrupted load are indexed first.
func (d *Store) Loader(ctx context.Context) (*Loader, error) {
	if d.keys == nil {
		return nil, ErrLocked
	}
	if err := d.finishPending(ctx); err != nil {
		return nil, err
	}
	c, err := d.s.DB().Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("dark-web loader: %w", err)
	}
	l := &Loader{d: d, conn: c, written: make(chan error, 1)}
	if d.s.Engine() == "sqlite" {
		l.mem = &memIndex{runRows: cmp.Or(d.runRows, buildRunRows)}
	}
	return l, nil
}

// WriterTime is the time the loader's connection has spent in its
// transactions: the single writer's share of a load.
func (l *Loader) WriterTime() time.Duration {
	l.wait()
	return l.busy
}

// wait waits for the batch being written, if any, and returns its error.
func (l *Loader) wait() error {
	if !l.writing {
		return nil
	}
	l.writing = false
	return <-l.written
}

// SetBuildEvery sets how many staged records trigger a build inside Add
// (0, the default: only Flush and Close build; records become searchable
// when their build commits).
func (l *Loader) SetBuildEvery(n int) { l.buildEvery = n }

// Close finishes the batch being written, indexes what is staged and
// releases the loader's connection.
func (l *Loader) Close() error {
	_, err := l.Flush(context.Background())
	return errors.Join(err, l.release())
}

// release drops the rows held in memory and returns the connection (a
// record whose rows are dropped stays staged: the next build computes
// its keys from its blob).
func (l *Loader) release() error {
	if l.mem != nil {
		l.mem.reset()
		l.mem.cur, l.mem.spare, l.mem.ids, l.mem.sortTmp = nil, nil, nil, nil
	}
	return l.conn.Close()
}

// Add stores cleaned records (darkweb.Normalizer.Clean) in one transaction:
// all or none. A record already stored (same identity) is counted as a
// duplicate and left as it is.
func (d *Store) Add(ctx context.Context, recs []darkweb.Record) (AddResult, error) {
	l, err := d.Loader(ctx)
	if err != nil {
		return AddResult{}, err
	}
	defer l.release()
	res, err := l.Add(ctx, recs)
	if err == nil {
		err = l.wait()
	}
	if err != nil {
		return AddResult{}, err
	}
	dups, err := l.Flush(ctx)
	res.Added -= dups
	res.Duplicates += dups
	return res, err
}

// Add stores a batch: the sealed records are appended (an ascending seq,
// so the table grows at its end) with their packed keys staged beside
// them, in one transaction (all or none). The transaction runs in the
// background while the caller reads its next batch and Add seals it; its
// error is returned by the next Add, Flush or Close. A batch is
// searchable once built (Flush, Close, or every buildEvery records); the
// records that the build finds already stored are then removed and
// counted as duplicates in the result of the Add that built them (or of
// Flush). Duplicates within a batch are counted at once.
func (l *Loader) Add(ctx context.Context, recs []darkweb.Record) (AddResult, error) {
	var res AddResult
	d := l.d
	all, err := d.seal(recs)
	if err != nil {
		return res, err
	}
	batch := make([]sealed, 0, len(all))
	seen := make(map[string]bool, len(all))
	for _, p := range all {
		if seen[string(p.id)] {
			res.Duplicates++
			continue
		}
		seen[string(p.id)] = true
		batch = append(batch, p)
	}
	if err := l.wait(); err != nil {
		return AddResult{}, err
	}
	if len(batch) == 0 {
		return res, nil
	}
	l.writing = true
	go func() { l.written <- l.write(ctx, batch) }()
	res.Added = len(batch)
	l.staged += len(batch)
	if l.buildEvery > 0 && l.staged >= l.buildEvery {
		dups, err := l.Flush(ctx)
		if err != nil {
			return res, err
		}
		res.Added -= dups
		res.Duplicates += dups
	}
	return res, nil
}

// write appends a sealed batch and stages its keys in one transaction.
func (l *Loader) write(ctx context.Context, batch []sealed) error {
	d := l.d
	start := time.Now()
	defer func() { l.busy += time.Since(start) }()
	now := d.s.Now().Unix()
	keyID := d.keys.ID()
	tx, err := l.conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	defer tx.Rollback()
	if d.s.Engine() != "sqlite" {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, lockDarkweb); err != nil {
			return fmt.Errorf("dark-web writer lock: %w", err)
		}
	}
	var base int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM darkweb_records`).Scan(&base); err != nil {
		return fmt.Errorf("read last record: %w", err)
	}
	if copied, err := l.copyBatch(ctx, base, now, keyID, batch); err != nil {
		return err
	} else if !copied {
		if err := l.insertBatch(ctx, tx, base, now, keyID, batch); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if l.mem != nil {
		return l.mem.add(base, now, batch)
	}
	return nil
}

// copyBatch writes the batch's records and staged keys through COPY
// (PostgreSQL: at a million records the multi-row inserts were most of the
// writer's time) inside the transaction the loader's connection has open;
// it reports false on SQLite, where insertBatch writes them.
func (l *Loader) copyBatch(ctx context.Context, base, now int64, keyID string, batch []sealed) (bool, error) {
	if l.mem != nil {
		return false, nil // SQLite (building the rows for nothing was 1 % of an ingest's CPU)
	}
	rows := make([][]any, len(batch))
	for i, p := range batch {
		rows[i] = []any{base + int64(i) + 1, p.id, keyID, p.blob, p.breach, p.breachDate, p.source, now}
	}
	dl := l.d.s.Dialect()
	copied, err := dl.CopyFrom(ctx, l.conn, "darkweb_records", []string{"seq", "id", "key_id", "blob", "breach", "breach_date", "source", "date_added"}, rows)
	if !copied || err != nil {
		return copied, err
	}
	for i, p := range batch {
		var email any
		if p.email != 0 {
			email = p.email
		}
		rows[i] = []any{base + int64(i) + 1, now, email, packKeys(p.keys), packKeys(p.keys[p.nlist:])}
	}
	return dl.CopyFrom(ctx, l.conn, "darkweb_stage", []string{"seq", "d", "email", "keys", "lkeys"}, rows)
}

// insertBatch writes the batch's records and staged keys in multi-row
// inserts, prepared once per size.
func (l *Loader) insertBatch(ctx context.Context, tx *sql.Tx, base, now int64, keyID string, batch []sealed) error {
	stmts := map[string]*sql.Stmt{}
	defer func() {
		for _, st := range stmts {
			st.Close()
		}
	}()
	args := make([]any, 0, 8*recordsPerInsert)
	for start := 0; start < len(batch); start += recordsPerInsert {
		chunk := batch[start:min(start+recordsPerInsert, len(batch))]
		args = args[:0]
		if l.mem != nil && sameMeta(chunk) {
			// SQLite: the columns a chunk's records share are bound once
			// (the first five parameters), three a record instead of eight.
			p := chunk[0]
			args = append(args, keyID, p.breach, p.breachDate, p.source, now)
			for i, p := range chunk {
				args = append(args, base+int64(start+i)+1, p.id, p.blob)
			}
			if err := l.execShared(ctx, tx, stmts, len(chunk), args); err != nil {
				return err
			}
			continue
		}
		for i, p := range chunk {
			args = append(args, base+int64(start+i)+1, p.id, keyID, p.blob, p.breach, p.breachDate, p.source, now)
		}
		if err := l.exec(ctx, tx, stmts, "records", len(chunk), 8, recordColumns, args); err != nil {
			return err
		}
	}
	for start := 0; start < len(batch); start += stagePerInsert {
		chunk := batch[start:min(start+stagePerInsert, len(batch))]
		args = args[:0]
		for i, p := range chunk {
			var email any
			if p.email != 0 {
				email = p.email
			}
			args = append(args, base+int64(start+i)+1, now, email)
			if l.mem == nil {
				args = append(args, packKeys(p.keys), packKeys(p.keys[p.nlist:]))
			}
		}
		var err error
		if l.mem == nil {
			err = l.exec(ctx, tx, stmts, "stage", len(chunk), 5, stageColumns, args)
		} else {
			// The keys stay in memory (they would be written as text
			// here, read back and parsed by the build): the record is
			// staged without them, as an interrupted load leaves it.
			err = l.exec(ctx, tx, stmts, "stage", len(chunk), 3, stageSeqColumns, args)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// analyzeAfter is how many records a build adds before the PostgreSQL
// tables are vacuumed and analysed (autovacuum may come much later).
const analyzeAfter = 50_000

// Flush builds the index of what is staged (see build) and returns how
// many staged records it found already stored (they are removed).
func (l *Loader) Flush(ctx context.Context) (int, error) {
	if err := l.wait(); err != nil {
		l.staged = 0
		if l.mem != nil {
			l.mem.reset()
		}
		return 0, err
	}
	if l.staged == 0 {
		return 0, nil
	}
	start := time.Now()
	defer func() { l.busy += time.Since(start) }()
	b := &buildTx{conn: l.conn}
	var err error
	if b.tx, err = l.conn.BeginTx(ctx, nil); err != nil {
		return 0, fmt.Errorf("begin transaction: %w", err)
	}
	defer func() { b.tx.Rollback() }()
	dups, err := l.d.build(ctx, b, l.mem)
	if l.mem != nil {
		l.mem.reset() // built, or (on an error) left to be built from the blobs
	}
	if err != nil {
		return 0, err
	}
	if err := b.tx.Commit(); err != nil {
		return 0, fmt.Errorf("commit index build: %w", err)
	}
	built := l.staged
	l.staged = 0
	if q := l.d.s.Dialect().VacuumAnalyze("darkweb_records", "darkweb_ids", "darkweb_index", "darkweb_counts"); q != "" && built >= analyzeAfter {
		// PostgreSQL: planner statistics for the grown tables (a listing
		// planned on an empty table's statistics sorts the whole domain)
		// and the visibility map that index-only scans need.
		if _, err := l.conn.ExecContext(ctx, q); err != nil {
			return dups, fmt.Errorf("analyze after index build: %w", err)
		}
	}
	return dups, nil
}

// exec runs a multi-row insert of n rows of cols columns, prepared once
// per transaction and size.
func (l *Loader) exec(ctx context.Context, tx *sql.Tx, stmts map[string]*sql.Stmt, name string, n, cols int, rest string, args []any) error {
	key := fmt.Sprintf("%s/%d", name, n)
	st, ok := stmts[key]
	if !ok {
		row := "(" + marks(cols) + ")"
		q := "INSERT INTO " + rest + strings.TrimSuffix(strings.Repeat(row+",", n), ",")
		var err error
		if st, err = tx.PrepareContext(ctx, l.d.s.Rebind(q)); err != nil {
			return fmt.Errorf("prepare %s insert: %w", name, err)
		}
		stmts[key] = st
	}
	if _, err := st.ExecContext(ctx, args...); err != nil {
		return fmt.Errorf("insert %s: %w", name, err)
	}
	return nil
}

// sameMeta reports whether the records of chunk share their breach, breach
// date and source.
func sameMeta(chunk []sealed) bool {
	for _, p := range chunk[1:] {
		if p.breach != chunk[0].breach || p.breachDate != chunk[0].breachDate || p.source != chunk[0].source {
			return false
		}
	}
	return true
}

// execShared inserts n records whose key id, breach, breach date, source
// and date added are bound once, as the statement's first five
// parameters, followed by each record's seq, id and blob. Every parameter
// is an anonymous ?: the driver looks up the name of each parameter it
// binds, and SQLite finds the name of a numbered one (?NNN) by a linear
// search of the statement's numbered parameters, which made binding 605
// numbered parameters quadratic (VListNumToName: 7 % of an ingest's CPU).
func (l *Loader) execShared(ctx context.Context, tx *sql.Tx, stmts map[string]*sql.Stmt, n int, args []any) error {
	key := fmt.Sprintf("records-shared/%d", n)
	st, ok := stmts[key]
	if !ok {
		q := `INSERT INTO darkweb_records (seq, id, key_id, blob, breach, breach_date, source, date_added)
			SELECT column1, column2, ?, column3, ?, ?, ?, ? FROM (VALUES ` +
			strings.TrimSuffix(strings.Repeat("(?,?,?),", n), ",") + `)`
		var err error
		if st, err = tx.PrepareContext(ctx, q); err != nil {
			return fmt.Errorf("prepare records insert: %w", err)
		}
		stmts[key] = st
	}
	if _, err := st.ExecContext(ctx, args...); err != nil {
		return fmt.Errorf("insert records: %w", err)
	}
	return nil
}

func marks(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }

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
	tx := b.tx // until the index rows, which may step
	pg := d.s.Engine() != "sqlite"
	if pg {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, lockDarkweb); err != nil {
			return 0, fmt.Errorf("dark-web writer lock: %w", err)
		}
		// The build sorts every staged key (12 a record): with the default
		// 4 MB of work memory each sort spills to disk in small runs.
		if _, err := tx.ExecContext(ctx, `SET LOCAL work_mem = '256MB'`); err != nil {
			return 0, fmt.Errorf("index build work memory: %w", err)
		}
	}
	// from and v: the staged keys as rows, one per key.
	from, v := `darkweb_stage s, json_each(s.keys) j`, `j.value`
	ignore := func(rest, conflict string) string { return `INSERT OR IGNORE INTO ` + rest }
	if pg {
		from, v = `darkweb_stage s, LATERAL json_array_elements_text(s.keys::json) j(v)`, `(j.v)::bigint`
		ignore = func(rest, conflict string) string {
			return `INSERT INTO ` + rest + ` ON CONFLICT (` + conflict + `) DO NOTHING`
		}
	}
	var staged int64
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM darkweb_stage`).Scan(&staged); err != nil {
		return 0, fmt.Errorf("count staged records: %w", err)
	}
	if staged == 0 {
		return 0, nil
	}
	exec := func(what, q string) (int64, error) {
		r, err := b.tx.ExecContext(ctx, q)
		if err != nil {
			return 0, fmt.Errorf("index build (%s): %w", what, err)
		}
		return r.RowsAffected()
	}
	var fresh int64
	var err error
	if pg {
		fresh, err = exec("identities", ignore(`darkweb_ids (id, seq) SELECT r.id, r.seq FROM darkweb_stage s JOIN darkweb_records r ON r.seq = s.seq ORDER BY r.id, r.seq`, "id"))
	} else {
		if mem.holds() {
			// Whether every record mem holds is still staged (another
			// build may have indexed some from their blobs).
			var mine int64
			if mine, err = stagedIn(ctx, tx, mem.ranges); err != nil {
				return 0, err
			}
			if mine != mem.records {
				mem = nil
			}
		}
		fresh, err = d.insertIDs(ctx, tx, mem, staged)
	}
	if err != nil {
		return 0, err
	}
	dups := 0
	var skip seqSet // this loader's records found already stored
	if fresh < staged {
		if !pg && mem.holds() {
			if skip, err = dupSeqs(ctx, tx, mem); err != nil {
				return 0, err
			}
		}
		n, err := exec("duplicates", `DELETE FROM darkweb_records WHERE seq IN (SELECT s.seq FROM darkweb_stage s
			JOIN darkweb_records r ON r.seq = s.seq JOIN darkweb_ids i ON i.id = r.id WHERE i.seq <> s.seq)`)
		if err != nil {
			return 0, err
		}
		dups = int(n)
		if _, err := exec("duplicates", `DELETE FROM darkweb_stage WHERE NOT EXISTS (SELECT 1 FROM darkweb_records r WHERE r.seq = darkweb_stage.seq)`); err != nil {
			return 0, err
		}
	}
	lo17, lo18 := codeLo(codeCredDomain), codeLo(codeDomainEmail)
	in := func(lo int64) string { return fmt.Sprintf(`%s >= %d AND %s < %d`, v, lo, v, lo+1<<56) }
	lfrom := strings.Replace(from, "s.keys", "s.lkeys", 1)
	upsert := ` ON CONFLICT (k) DO UPDATE SET n = darkweb_counts.n + excluded.n`
	stepRows := 0
	if !pg {
		// The counts are taken from the sorted index rows as they are
		// inserted (two GROUP BYs through SQLite's sorter over json_each
		// were a third of a 10-million-record build); only the emails
		// already stored are looked up first, before the index rows.
		known, err := storedEmails(ctx, tx)
		if err != nil {
			return 0, err
		}
		readStage, err := d.stageSources(ctx, tx, mem, &skip, staged-int64(dups))
		if err != nil {
			return 0, err
		}
		if !readStage && b.conn != nil {
			stepRows = cmp.Or(d.stepRows, buildStepRows)
		}
		counts, err := d.insertSorted(ctx, b, cmp.Or(d.runRows, buildRunRows), known, mem, &skip, readStage, stepRows)
		if err != nil {
			return 0, err
		}
		if stepRows > 0 {
			// Between the steps another build may have indexed (and
			// counted) these records from their blobs: then they are no
			// longer staged, and there is nothing left to do.
			mine, err := stagedIn(ctx, b.tx, mem.ranges)
			if err != nil {
				return 0, err
			}
			if mine != staged-int64(dups) {
				return dups, nil
			}
		}
		if len(counts) > 0 {
			st, err := b.tx.PrepareContext(ctx, `INSERT INTO darkweb_counts (k, n) VALUES (?, ?)`+upsert)
			if err != nil {
				return 0, fmt.Errorf("index build (counts): %w", err)
			}
			defer st.Close()
			for _, c := range counts {
				if _, err := st.ExecContext(ctx, c.k, c.n); err != nil {
					return 0, fmt.Errorf("index build (counts): %w", err)
				}
			}
		}
	} else {
		if _, err := exec("credential counts", fmt.Sprintf(`INSERT INTO darkweb_counts (k, n)
		SELECT %s, COUNT(*) FROM %s WHERE %s GROUP BY %s`, v, lfrom, in(lo17), v)+upsert); err != nil {
			return 0, err
		}
		// Before the index rows: an email is new when its search key is
		// not stored yet.
		if _, err := exec("email counts", fmt.Sprintf(`INSERT INTO darkweb_counts (k, n)
		SELECT %s, COUNT(DISTINCT s.email) FROM %s WHERE %s
		AND NOT EXISTS (SELECT 1 FROM darkweb_index i WHERE i.k = s.email) GROUP BY %s`, v, lfrom, in(lo18), v)+upsert); err != nil {
			return 0, err
		}
		if _, err := exec("index rows", ignore(fmt.Sprintf(`darkweb_index (k, d, rec, x)
		SELECT %s, s.d, s.seq, CASE WHEN %s THEN s.email END FROM %s ORDER BY 1, 2, 3`, v, in(lo18), from), "k, d, rec")); err != nil {
			return 0, err
		}
	}
	if stepRows > 0 {
		// Only this build's records: others staged while it stepped
		// wait for their own.
		for _, r := range mem.ranges {
			if _, err := b.tx.ExecContext(ctx, `DELETE FROM darkweb_stage WHERE seq BETWEEN ? AND ?`, r.lo, r.hi); err != nil {
				return 0, fmt.Errorf("index build (stage): %w", err)
			}
		}
		return dups, nil
	}
	empty := `DELETE FROM darkweb_stage`
	if pg {
		// Emptied at once, not row by row: a DELETE leaves every staged
		// row dead (10 million after a 10-million-record load) for the
		// vacuum after the build to read and free.
		empty = `TRUNCATE darkweb_stage`
	}
	if _, err := exec("stage", empty); err != nil {
		return 0, err
	}
	return dups, nil
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
func (d *Store) insertSorted(ctx context.Context, b *buildTx, runRows int, known map[int64]bool, mem *memIndex, skip *seqSet, readStage bool, stepRows int) ([]listCount, error) {
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

// listCount is a listing total to add to darkweb_counts.
type listCount struct{ k, n int64 }

// listTally counts the listing totals from index rows in key order:
// credentials (code 17 rows) per email domain, and per email domain (code
// 18 rows) the distinct emails (x) not known to be stored already.
type listTally struct {
	known  map[int64]bool
	counts []listCount
	k, n   int64
	seen   map[int64]struct{}
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
	if r.x == 0 || t.known[r.x] {
		return
	}
	if t.seen == nil {
		t.seen = map[int64]struct{}{}
	}
	if _, ok := t.seen[r.x]; !ok {
		t.seen[r.x] = struct{}{}
		t.n++
	}
}

func (t *listTally) flush() {
	if t.n > 0 {
		t.counts = append(t.counts, listCount{t.k, t.n})
	}
	t.n = 0
}

func (t *listTally) done() []listCount {
	t.flush()
	return t.counts
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
