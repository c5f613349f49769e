package darkwebstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/darkweb"
)

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
	if d.dl.sortsInGo() {
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
	if err := d.dl.lockWriter(ctx, tx); err != nil {
		return err
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
