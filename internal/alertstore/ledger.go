package alertstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/ledger"
	"github.com/periscope-oss/periscope/internal/store"
)

// ledgerChunk bounds one multi-row insert (12 parameters a row, well under
// both engines' parameter limits).
const ledgerChunk = 400

const ledgerColumns = `host, domain, tld, subdomain, host_type, ip_address, category, change, value, old_value, source, ts`

// ledgerInsert is what follows INSERT INTO in the insert of n ledger rows.
func ledgerInsert(n int) string {
	var q strings.Builder
	q.WriteString(`ledger (` + ledgerColumns + `) VALUES `)
	row := placeholders(12)
	for i := 0; i < n; i++ {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString(row)
	}
	return q.String()
}

// ledgerInsertFull is the insert of a full chunk, built once: the
// transaction prepares it once and runs it for every full chunk.
var ledgerInsertFull = ledgerInsert(ledgerChunk)

// RecordChanges writes the ledger rows of changes (Missed changes are not
// rows and are skipped) in the caller's transaction, so a host update and
// its ledger rows commit together.
func (s *Store) RecordChanges(ctx context.Context, tx *store.Tx, changes []ledger.Change) error {
	rows := ledger.Rows(changes)
	values, byRow := ledgerValues(rows)
	// A batch's rows go through COPY where the engine has it (a bulk load
	// writes a row for every new host).
	if copied, err := tx.CopyFrom(ctx, "ledger", ledgerCopyCols, byRow); err != nil {
		return fmt.Errorf("record %d ledger rows: %w", len(rows), err)
	} else if copied {
		return nil
	}
	for lo := 0; lo < len(rows); lo += ledgerChunk {
		c := rows[lo:min(lo+ledgerChunk, len(rows))]
		q := ledgerInsertFull
		if len(c) < ledgerChunk {
			q = ledgerInsert(len(c))
		}
		// Ignoring conflicts keeps SQLite from journalling the statement
		// (one that cannot abort needs no statement journal); the ids are
		// the table's own, so nothing conflicts, and the count proves it.
		st, err := tx.Prepared(ctx, tx.Dialect().InsertIgnoring(q, "id"))
		if err != nil {
			return fmt.Errorf("record ledger rows: %w", err)
		}
		args := values[lo*len(ledgerCopyCols) : (lo+len(c))*len(ledgerCopyCols)]
		res, err := st.ExecContext(ctx, args...)
		if err != nil {
			return fmt.Errorf("record %d ledger rows: %w", len(c), err)
		}
		if n, err := res.RowsAffected(); err != nil || n != int64(len(c)) {
			return fmt.Errorf("record ledger rows: %d of %d stored (%v)", n, len(c), err)
		}
	}
	return nil
}

// ledgerCopyCols are ledgerColumns one by one.
var ledgerCopyCols = strings.Split(ledgerColumns, ", ")

// ledgerValues returns the values of rows in the order of ledgerColumns:
// all of them one after the other (an INSERT's arguments), and the same
// cut into one slice a row (COPY's).
func ledgerValues(rows []ledger.Change) (all []any, byRow [][]any) {
	all = make([]any, 0, len(ledgerCopyCols)*len(rows))
	byRow = make([][]any, len(rows))
	for i, r := range rows {
		all = append(all, r.Host, r.Domain, r.TLD, r.Subdomain, r.HostType, r.IPAddress,
			string(r.Category), string(r.Change), r.Value, r.OldValue, r.Source, r.Time)
		byRow[i] = all[i*len(ledgerCopyCols) : len(all) : len(all)]
	}
	return all, byRow
}

// Tracker computes the ledger of one batch of host merges by one source and
// keeps that source's miss state. Use it inside the host write transaction:
//
//	tr, err := alerts.Track(ctx, tx, src, names)   // names: the batch's stored hosts
//	changes := tr.Diff(&stored, &merged, &observed) // per stored host, before encoding merged
//	tr.New(&inserted)                                // per new host
//	err = tr.Flush(ctx, tx)                          // once, before commit
type Tracker struct {
	s       *Store
	src     ledger.Source
	misses  map[string][]ledger.Miss // host → what src missed there last time
	diffed  []string                 // hosts whose miss state is replaced
	changes []ledger.Change
}

const (
	selectMisses  = `SELECT host, category, value FROM ledger_misses WHERE source = ? AND host IN `
	selectAnyMiss = `SELECT 1 FROM ledger_misses WHERE source = ? LIMIT 1`
)

// Track loads the miss state of src (its Name, coverage and Time; Observed
// and Missed are set per host) for the stored hosts named.
func (s *Store) Track(ctx context.Context, tx *store.Tx, src ledger.Source, names []string) (*Tracker, error) {
	t := &Tracker{s: s, src: src, misses: map[string][]ledger.Miss{}}
	if len(names) > 0 {
		// A source with no pending miss anywhere (an index probe) needs
		// no look-up per host.
		var one int
		err := tx.QueryRow(ctx, selectAnyMiss, src.Name).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return t, nil
		}
		if err != nil {
			return nil, fmt.Errorf("load ledger misses: %w", err)
		}
	}
	for lo := 0; lo < len(names); lo += 500 {
		c := names[lo:min(lo+500, len(names))]
		args := []any{src.Name}
		for _, n := range c {
			args = append(args, n)
		}
		rows, err := tx.Query(ctx, selectMisses+placeholders(len(c)), args...)
		if err != nil {
			return nil, fmt.Errorf("load ledger misses: %w", err)
		}
		for rows.Next() {
			var h, cat, v string
			if err := rows.Scan(&h, &cat, &v); err != nil {
				rows.Close()
				return nil, fmt.Errorf("load ledger misses: %w", err)
			}
			t.misses[h] = append(t.misses[h], ledger.Miss{Category: ledger.Category(cat), Value: v})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("load ledger misses: %w", err)
		}
	}
	return t, nil
}

// Diff returns the changes of merging observed into stored as merged, and
// prunes what they remove from merged (so encode merged after calling it).
func (t *Tracker) Diff(stored, merged, observed *host.Host) []ledger.Change {
	src := t.src
	src.Observed, src.Missed = observed, t.misses[stored.Host]
	cs := ledger.Diff(stored, merged, src)
	ledger.Prune(merged, cs)
	if len(src.Missed) > 0 {
		// Only a host with stored misses (Track loaded them all) has
		// rows to replace; its new misses are inserted either way.
		t.diffed = append(t.diffed, stored.Host)
	}
	t.changes = append(t.changes, cs...)
	return cs
}

// New records the one row of a host stored for the first time.
func (t *Tracker) New(h *host.Host) []ledger.Change {
	cs := ledger.Diff(nil, h, t.src)
	t.changes = append(t.changes, cs...)
	return cs
}

// Changes returns every change tracked so far.
func (t *Tracker) Changes() []ledger.Change { return t.changes }

const deleteMisses = `DELETE FROM ledger_misses WHERE source = ? AND host IN `
const insertMiss = `INSERT INTO ledger_misses (host, source, category, value) VALUES (?, ?, ?, ?)`

// Flush writes the tracked ledger rows and replaces the miss state of every
// diffed host with its new misses.
func (t *Tracker) Flush(ctx context.Context, tx *store.Tx) error {
	if err := t.s.RecordChanges(ctx, tx, t.changes); err != nil {
		return err
	}
	for lo := 0; lo < len(t.diffed); lo += 500 {
		c := t.diffed[lo:min(lo+500, len(t.diffed))]
		args := []any{t.src.Name}
		for _, n := range c {
			args = append(args, n)
		}
		if _, err := tx.Exec(ctx, deleteMisses+placeholders(len(c)), args...); err != nil {
			return fmt.Errorf("clear ledger misses: %w", err)
		}
	}
	for _, c := range t.changes {
		if c.Change != ledger.Missed {
			continue
		}
		if _, err := tx.Exec(ctx, insertMiss, c.Host, t.src.Name, string(c.Category), c.Value); err != nil {
			return fmt.Errorf("keep ledger miss: %w", err)
		}
	}
	t.changes, t.diffed = nil, nil
	return nil
}

// Row is a stored ledger row.
type Row struct {
	ID int64
	ledger.Change
}

// LedgerQuery selects the ledger of one host or of every host of a
// registrable domain, newest first.
type LedgerQuery struct {
	Host     string // exactly one of Host and Domain
	Domain   string
	From, To int64 // Unix seconds, inclusive; 0 = open
	Limit    int
	Offset   int
	// BeforeTS and BeforeID, when BeforeID is set, keep only rows older
	// than that row in the ledger's order (ts, then id): a cursor.
	BeforeTS, BeforeID int64
	// NoCount skips counting the rows matching (total 0, exact false).
	NoCount bool
}

// maxCounted bounds the total a search counts exactly: counting every row
// of a busy domain would cost more than the page itself.
const maxCounted = 10000

const selectLedger = `SELECT id, ` + ledgerColumns + ` FROM ledger WHERE `

// SearchLedger returns a page of the ledger and the number of rows matching
// (exact up to 10,000; Exact false beyond).
func (s *Store) SearchLedger(ctx context.Context, q LedgerQuery) (rows []Row, total int, exact bool, err error) {
	where, args := `host = ?`, []any{q.Host}
	if q.Host == "" {
		where, args = `domain = ?`, []any{q.Domain}
	}
	if q.From > 0 {
		where += ` AND ts >= ?`
		args = append(args, q.From)
	}
	if q.To > 0 {
		where += ` AND ts <= ?`
		args = append(args, q.To)
	}
	if q.BeforeID > 0 {
		where += ` AND (ts < ? OR (ts = ? AND id < ?))`
		args = append(args, q.BeforeTS, q.BeforeTS, q.BeforeID)
	}
	db := s.db.DB()
	r, err := db.QueryContext(ctx, s.db.Rebind(selectLedger+where+` ORDER BY ts DESC, id DESC LIMIT ? OFFSET ?`), append(args, q.Limit, q.Offset)...)
	if err != nil {
		return nil, 0, false, fmt.Errorf("search ledger: %w", err)
	}
	defer r.Close()
	rows = []Row{}
	for r.Next() {
		var x Row
		if err := scanRow(r, &x); err != nil {
			return nil, 0, false, fmt.Errorf("search ledger: %w", err)
		}
		rows = append(rows, x)
	}
	if err := r.Err(); err != nil {
		return nil, 0, false, fmt.Errorf("search ledger: %w", err)
	}
	if q.NoCount {
		return rows, 0, false, nil
	}
	count := `SELECT COUNT(*) FROM (SELECT 1 FROM ledger WHERE ` + where + ` LIMIT ?) AS page`
	if err := db.QueryRowContext(ctx, s.db.Rebind(count), append(args, maxCounted+1)...).Scan(&total); err != nil {
		return nil, 0, false, fmt.Errorf("count ledger: %w", err)
	}
	if total > maxCounted {
		return rows, maxCounted, false, nil
	}
	return rows, total, true, nil
}

const selectLedgerHosts = `SELECT host FROM ledger WHERE domain = ? GROUP BY host ORDER BY MAX(ts) DESC, host LIMIT ?`

// LedgerHosts returns the hosts of a registrable domain that have ledger
// rows, most recently changed first, at most limit.
func (s *Store) LedgerHosts(ctx context.Context, domain string, limit int) ([]string, error) {
	r, err := s.db.DB().QueryContext(ctx, s.db.Rebind(selectLedgerHosts), domain, limit)
	if err != nil {
		return nil, fmt.Errorf("list ledger hosts of %q: %w", domain, err)
	}
	defer r.Close()
	out := []string{}
	for r.Next() {
		var h string
		if err := r.Scan(&h); err != nil {
			return nil, fmt.Errorf("list ledger hosts of %q: %w", domain, err)
		}
		out = append(out, h)
	}
	return out, r.Err()
}

func scanRow(r interface{ Scan(...any) error }, x *Row) error {
	var cat, kind string
	err := r.Scan(&x.ID, &x.Host, &x.Domain, &x.TLD, &x.Subdomain, &x.HostType, &x.IPAddress,
		&cat, &kind, &x.Value, &x.OldValue, &x.Source, &x.Time)
	x.Category, x.Change.Change = ledger.Category(cat), ledger.Kind(kind)
	return err
}

const selectLedgerAfter = selectLedger + `id > ? ORDER BY id LIMIT ?`

// LedgerAfter returns up to limit rows with ids above after, in id order:
// the rules worker's feed.
func (s *Store) LedgerAfter(ctx context.Context, after int64, limit int) ([]Row, error) {
	r, err := s.db.DB().QueryContext(ctx, s.db.Rebind(selectLedgerAfter), after, limit)
	if err != nil {
		return nil, fmt.Errorf("read ledger after %d: %w", after, err)
	}
	defer r.Close()
	var rows []Row
	for r.Next() {
		var x Row
		if err := scanRow(r, &x); err != nil {
			return nil, fmt.Errorf("read ledger: %w", err)
		}
		rows = append(rows, x)
	}
	return rows, r.Err()
}

// BulkDeferredIndexes are the ledger's indexes a first load into an empty
// host index builds at its end (store.DeferIndexes): the load writes a row
// for every new host and reads none.
var BulkDeferredIndexes = []string{"ledger_host_ts", "ledger_domain_ts"}
