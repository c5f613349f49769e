// Package darkwebstore keeps dark-web breach records: sealed blobs, the
// blind indexes they are searched through, the breach catalogue, the key
// check value and the accounts allowed to see secrets in clear.
package darkwebstore

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/periscope-oss/periscope/internal/breach"
	"github.com/periscope-oss/periscope/internal/store"
)

//go:embed migrations
var migrations embed.FS

// Migrations returns the dark-web schema (migration 12).
func Migrations() store.MigrationSet {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return store.MigrationSet{Name: "darkweb", FS: sub}
}

// Store is the dark-web storage. It must be unlocked with the key the data
// was written with before records are added or read.
type Store struct {
	s    *store.Store
	keys *breach.Keyring
	norm breach.Normalizer
	// reload reads the key file again (SetKeyReload; nil: never).
	reload *keyReload

	mu    sync.Mutex
	cache map[string]cacheEntry
}

// CacheTTL is how long a search answer is reused (24 hours, README "Dark-web breach intelligence").
const CacheTTL = 24 * time.Hour

// cacheMax bounds the cached answers; the oldest half goes when full.
const cacheMax = 10000

// cacheEntry is a cached search: the sealed rows, keyed by blind index,
// so clear text never sits in the cache.
type cacheEntry struct {
	rows []row
	at   time.Time
}

// New returns the dark-web store on s.
func New(s *store.Store) *Store { return &Store{s: s, cache: map[string]cacheEntry{}} }

// SetRegion sets the region assumed for phone numbers without a country
// code (default US).
func (d *Store) SetRegion(region string) { d.norm.Region = region }

// Normalizer returns the normaliser records must be cleaned with.
func (d *Store) Normalizer() breach.Normalizer { return d.norm }

// ErrWrongKey is returned by Unlock when the data was written with another key.
var ErrWrongKey = errors.New("darkweb: wrong key")

// ErrLocked is returned by reads and writes before Unlock.
var ErrLocked = errors.New("darkweb: store not unlocked (no dark-web key configured)")

const (
	sqlActiveKeys = `SELECT key_id, check_value, active FROM darkweb_keys`
	sqlAddKey     = `INSERT INTO darkweb_keys (key_id, check_value, active, created_at) VALUES (?, ?, ?, ?)`
)

// Unlock checks k against the key check value stored with the data (a
// first key is recorded) and makes the store use it. A different key is
// refused with ErrWrongKey, never mixed in.
func (d *Store) Unlock(ctx context.Context, k *breach.Keyring) error {
	err := d.s.Tx(ctx, func(tx *store.Tx) error {
		rows, err := tx.Query(ctx, sqlActiveKeys)
		if err != nil {
			return fmt.Errorf("read dark-web key check: %w", err)
		}
		defer rows.Close()
		var active, pending, missing string
		var activeCheck []byte
		for rows.Next() {
			var id string
			var check []byte
			var act int
			if err := rows.Scan(&id, &check, &act); err != nil {
				return err
			}
			switch act {
			case 1:
				active, activeCheck = id, check
			case sealOnly:
				if !k.Has(id) {
					missing = id
				}
			default:
				pending = id
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		switch {
		case pending != "":
			return fmt.Errorf("%w: a key rotation to key %s is unfinished; run `periscope darkweb rotate-key --reindex` again to finish it", ErrWrongKey, pending)
		case active == "":
			var n int
			if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM darkweb_records`).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return fmt.Errorf("%w: records exist but no key check value", ErrWrongKey)
			}
			_, err := tx.Exec(ctx, sqlAddKey, k.IndexID(), k.Check(), 1, d.s.Now().Unix())
			return err
		case active != k.IndexID() || !bytes.Equal(activeCheck, k.Check()):
			return fmt.Errorf("%w: the dark-web data was written with key %s but the key file holds key %s; restore the right key file (or its backup)", ErrWrongKey, active, k.IndexID())
		case missing != "":
			return fmt.Errorf("%w: records are sealed with key %s, which the key file lacks (an older copy of a rotated keyring?); restore the current key file", ErrWrongKey, missing)
		}
		return registerSealingKey(ctx, tx, k, d.s.Now().Unix())
	})
	if err != nil {
		return err
	}
	d.keys = k
	return nil
}

// typeCodes are the stored codes of the index types (a small integer per
// row instead of the name).
var typeCodes = map[breach.Type]int{
	breach.Username: 1, breach.Name: 2, breach.Email: 3, breach.Hostname: 4, breach.MAC: 5, breach.IP: 6,
	breach.OrgAlias: 7, breach.BIN: 8, breach.CVE: 9, breach.Domain: 10, breach.Password: 11,
	breach.HashedPassword: 12, breach.VIN: 13, breach.Address: 14, breach.Phone: 15, breach.EmailDomain: 16,
}

// Listing index codes: internal rows that make the enterprise listings
// index-only range scans. codeCredDomain rows (email-domain blind index →
// record id) exist only for records with a password or hash;
// codeDomainEmail rows point from an email-domain blind index to the
// email's blind index instead of a record, so a page of distinct emails,
// most recently seen first, is a range scan. codeEmailSeen rows hold the
// same pairs undated (date_added 0), once per pair: inserting one that is
// new is how ingest counts an email domain's distinct emails.
const (
	codeCredDomain  = 17
	codeDomainEmail = 18
	codeEmailSeen   = 19
)

// indexRow is one darkweb_index row of a record (without its date).
type indexRow struct {
	code int
	hmac []byte
	ref  []byte
}

// indexRows returns every index row of a cleaned record with id.
func (d *Store) indexRows(r *breach.Record, id []byte) []indexRow {
	out := make([]indexRow, 0, 12)
	var email []byte
	if r.Email != "" {
		email = d.index(breach.Email, r.Email)
	}
	for _, t := range d.norm.Terms(r) {
		h := d.index(t.Type, t.Value)
		if t.Type != breach.EmailDomain {
			out = append(out, indexRow{typeCodes[t.Type], h, id})
			continue
		}
		// An email domain is not a search type (domain is): only the
		// listing rows are kept for it.
		if r.HasSecret() {
			out = append(out, indexRow{codeCredDomain, h, id})
		}
		if email != nil {
			out = append(out, indexRow{codeDomainEmail, h, email}, indexRow{codeEmailSeen, h, email})
		}
	}
	return out
}

// idxLen is the stored length of a blind index: HMAC-SHA256 truncated to
// 128 bits, ample against collisions at billions of rows.
const idxLen = 16

func (d *Store) index(t breach.Type, v string) []byte { return d.keys.Index(t, v)[:idxLen] }

// Multi-row inserts: rows per statement (well under SQLite's 32,766 and
// PostgreSQL's 65,535 parameters).
const (
	recordsPerInsert = 100
	indexPerInsert   = 250
)

const (
	recordColumns = `darkweb_records (id, key_id, blob, breach, breach_date, source, has_secret, email_idx, date_added) VALUES `
	indexColumns  = `darkweb_index (type, hmac, date_added, record_id) VALUES `
)

const sqlBumpCount = `INSERT INTO darkweb_counts (code, hmac, n) VALUES (?, ?, ?)
	ON CONFLICT (code, hmac) DO UPDATE SET n = darkweb_counts.n + excluded.n`

// AddResult counts what Add did.
type AddResult struct {
	Added, Duplicates int
}

// row is a stored record as read back.
type row struct {
	id, keyID, breach, breachDate, source string
	blob                                  []byte
	dateAdded                             int64
}

// Result is a record found by a search or listing.
type Result struct {
	ID        string
	Record    breach.Record
	DateAdded int64
}

// sealed is a record ready to store: its id, blob and index rows.
type sealed struct {
	id     []byte
	blob   []byte
	email  []byte
	secret int
	rec    *breach.Record
	rows   []indexRow
}

// seal computes ids, blobs and index rows of recs on every core (AES-GCM
// and a dozen HMACs a record are most of ingest's own CPU).
func (d *Store) seal(recs []breach.Record) ([]sealed, error) {
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
				p := sealed{id: id, blob: blob, rec: r, rows: d.indexRows(r, id)}
				if r.Email != "" {
					p.email = d.index(breach.Email, r.Email)
				}
				if r.HasSecret() {
					p.secret = 1
				}
				out[i] = p
			}
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// Loader adds batches of records through one connection held for its
// life: SQLite keeps that connection's page cache warm from batch to batch
// (a pooled connection that another has written behind drops its cache).
// Close it when done.
type Loader struct {
	d    *Store
	conn *sql.Conn
}

// Loader returns a loader on a connection of its own.
func (d *Store) Loader(ctx context.Context) (*Loader, error) {
	if d.keys == nil {
		return nil, ErrLocked
	}
	c, err := d.s.DB().Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("dark-web loader: %w", err)
	}
	return &Loader{d: d, conn: c}, nil
}

// Close releases the loader's connection.
func (l *Loader) Close() error {
	return l.conn.Close()
}

// Add stores cleaned records (breach.Normalizer.Clean) in one transaction:
// all or none. A record already stored (same identity) is counted as a
// duplicate and left as it is.
func (d *Store) Add(ctx context.Context, recs []breach.Record) (AddResult, error) {
	l, err := d.Loader(ctx)
	if err != nil {
		return AddResult{}, err
	}
	defer l.Close()
	return l.Add(ctx, recs)
}

// Add stores a batch like Store.Add. Idempotency costs no lookup: records
// go in with multi-row insert-ignoring statements that return the ids
// actually inserted, and only those records get index rows.
func (l *Loader) Add(ctx context.Context, recs []breach.Record) (AddResult, error) {
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
	now := d.s.Now().Unix()
	keyID := d.keys.ID()
	tx, err := l.conn.BeginTx(ctx, nil)
	if err != nil {
		return AddResult{}, fmt.Errorf("begin transaction: %w", err)
	}
	defer tx.Rollback()
	stmts := map[string]*sql.Stmt{}
	defer func() {
		for _, st := range stmts {
			st.Close()
		}
	}()
	added := make(map[string]bool, len(batch))
	args := make([]any, 0, 9*recordsPerInsert)
	for start := 0; start < len(batch); start += recordsPerInsert {
		chunk := batch[start:min(start+recordsPerInsert, len(batch))]
		args = args[:0]
		for _, p := range chunk {
			var email any
			if p.email != nil {
				email = p.email
			}
			args = append(args, p.id, keyID, p.blob, p.rec.Breach, p.rec.BreachDate, p.rec.Source, p.secret, email, now)
		}
		st, err := l.prepare(ctx, tx, stmts, "records", len(chunk), 9, recordColumns, "id", " RETURNING id")
		if err != nil {
			return AddResult{}, err
		}
		rows, err := st.QueryContext(ctx, args...)
		if err != nil {
			return AddResult{}, fmt.Errorf("insert records: %w", err)
		}
		for rows.Next() {
			var id []byte
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return AddResult{}, err
			}
			added[string(id)] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return AddResult{}, fmt.Errorf("insert records: %w", err)
		}
	}
	args = make([]any, 0, 4*indexPerInsert)
	n := 0
	flush := func() error {
		if n == 0 {
			return nil
		}
		st, err := l.prepare(ctx, tx, stmts, "index", n, 4, indexColumns, "type, hmac, date_added, record_id", "")
		if err != nil {
			return err
		}
		if _, err := st.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("insert index: %w", err)
		}
		args, n = args[:0], 0
		return nil
	}
	counts := map[string]int{}
	var seenRows, idxRows []indexRow
	seenPairs := map[string]bool{}
	for _, p := range batch {
		if !added[string(p.id)] {
			res.Duplicates++
			continue
		}
		res.Added++
		for _, r := range p.rows {
			switch r.code {
			case codeCredDomain:
				counts[string(r.hmac)]++
			case codeEmailSeen:
				if k := string(r.hmac) + string(r.ref); !seenPairs[k] {
					seenPairs[k] = true
					seenRows = append(seenRows, r)
				}
				continue
			}
			idxRows = append(idxRows, r)
		}
	}
	// In key order: consecutive inserts land on the same b-tree pages
	// instead of one random page each.
	byKey := func(a, b indexRow) int {
		if c := cmp.Compare(a.code, b.code); c != 0 {
			return c
		}
		if c := bytes.Compare(a.hmac, b.hmac); c != 0 {
			return c
		}
		return bytes.Compare(a.ref, b.ref)
	}
	slices.SortFunc(idxRows, byKey)
	slices.SortFunc(seenRows, byKey)
	for _, r := range idxRows {
		args = append(args, r.code, r.hmac, now, r.ref)
		if n++; n == indexPerInsert {
			if err := flush(); err != nil {
				return AddResult{}, err
			}
		}
	}
	if err := flush(); err != nil {
		return AddResult{}, err
	}
	// The email-domain pairs: those the statement returns are new.
	emails := map[string]int{}
	for start := 0; start < len(seenRows); start += indexPerInsert {
		chunk := seenRows[start:min(start+indexPerInsert, len(seenRows))]
		args = args[:0]
		for _, r := range chunk {
			args = append(args, r.code, r.hmac, 0, r.ref)
		}
		st, err := l.prepare(ctx, tx, stmts, "seen", len(chunk), 4, indexColumns, "type, hmac, date_added, record_id", " RETURNING hmac")
		if err != nil {
			return AddResult{}, err
		}
		rows, err := st.QueryContext(ctx, args...)
		if err != nil {
			return AddResult{}, fmt.Errorf("insert index: %w", err)
		}
		for rows.Next() {
			var h []byte
			if err := rows.Scan(&h); err != nil {
				rows.Close()
				return AddResult{}, err
			}
			emails[string(h)]++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return AddResult{}, fmt.Errorf("insert index: %w", err)
		}
	}
	for code, m := range map[int]map[string]int{codeCredDomain: counts, codeDomainEmail: emails} {
		for h, n := range m {
			if _, err := tx.ExecContext(ctx, d.s.Rebind(sqlBumpCount), code, []byte(h), n); err != nil {
				return AddResult{}, fmt.Errorf("listing counts: %w", err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return AddResult{}, fmt.Errorf("commit: %w", err)
	}
	return res, nil
}

// prepare returns a multi-row insert of n rows of cols columns prepared
// in tx, from stmts when the batch already prepared it (the full-size
// statements are parsed once a batch).
func (l *Loader) prepare(ctx context.Context, tx *sql.Tx, stmts map[string]*sql.Stmt, name string, n, cols int, rest, conflict, suffix string) (*sql.Stmt, error) {
	key := fmt.Sprintf("%s/%d", name, n)
	if st, ok := stmts[key]; ok {
		return st, nil
	}
	row := "(" + marks(cols) + ")"
	q := l.d.s.Dialect().InsertIgnoring(rest+strings.TrimSuffix(strings.Repeat(row+",", n), ","), conflict) + suffix
	st, err := tx.PrepareContext(ctx, l.d.s.Rebind(q))
	if err != nil {
		return nil, fmt.Errorf("prepare %s insert: %w", name, err)
	}
	stmts[key] = st
	return st, nil
}

func marks(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }

// PutBreach stores (or replaces) a breach's metadata.
func (d *Store) PutBreach(ctx context.Context, b breach.BreachInfo) error {
	classes, _ := json.Marshal(b.DataClasses)
	const q = `INSERT INTO darkweb_breaches (name, title, domain, breach_date, added_date, pwn_count, data_classes, description, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET title = excluded.title, domain = excluded.domain, breach_date = excluded.breach_date,
		added_date = excluded.added_date, pwn_count = excluded.pwn_count, data_classes = excluded.data_classes,
		description = excluded.description, updated_at = excluded.updated_at`
	_, err := d.s.DB().ExecContext(ctx, d.s.Rebind(q), b.Name, b.Title, b.Domain, b.BreachDate, b.AddedDate, b.PwnCount, string(classes), b.Description, d.s.Now().Unix())
	if err != nil {
		return fmt.Errorf("store breach %s: %w", b.Name, err)
	}
	return nil
}

// Breach returns a breach's metadata; ok is false when it is unknown.
func (d *Store) Breach(ctx context.Context, name string) (b breach.BreachInfo, ok bool, err error) {
	var classes string
	err = d.s.DB().QueryRowContext(ctx, d.s.Rebind(`SELECT name, title, domain, breach_date, added_date, pwn_count, data_classes, description
		FROM darkweb_breaches WHERE name = ?`), name).Scan(&b.Name, &b.Title, &b.Domain, &b.BreachDate, &b.AddedDate, &b.PwnCount, &classes, &b.Description)
	if errors.Is(err, sql.ErrNoRows) {
		return b, false, nil
	}
	if err != nil {
		return b, false, err
	}
	json.Unmarshal([]byte(classes), &b.DataClasses)
	return b, true, nil
}

// Query is a search: an exact match of a normalised value of one type,
// newest first, optionally bounded on date_added (epoch seconds,
// inclusive; 0 means open).
type Query struct {
	Type     breach.Type
	Value    string
	From, To int64
	Limit    int
	// NoCache bypasses the cached answer and refreshes it.
	NoCache bool
}

// sqlSearch reads the page from the index alone (a backward range scan of
// its primary key: newest first, ties by record id descending, so the
// LIMIT stops the scan) and only then reads the page's records. Ordering
// ties ascending would make the engine sort every match, reading every
// matching record, before the LIMIT.
const sqlSearch = `SELECT r.id, r.key_id, r.blob, r.breach, r.breach_date, r.source, r.date_added
	FROM (SELECT record_id, date_added FROM darkweb_index
		WHERE type = ? AND hmac = ? AND date_added >= ? AND date_added <= ?
		ORDER BY date_added DESC, record_id DESC LIMIT ?) p
	JOIN darkweb_records r ON r.id = p.record_id
	ORDER BY p.date_added DESC, p.record_id DESC`

// Search finds the records whose normalised value of q.Type equals q.Value's.
// A value that does not normalise (an invalid email, say) is an error
// wrapping breach's reason.
func (d *Store) Search(ctx context.Context, q Query) ([]Result, error) {
	if d.keys == nil {
		return nil, ErrLocked
	}
	v, err := d.norm.Normalize(q.Type, q.Value)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", q.Type, err)
	}
	if q.Type == breach.Domain {
		// A subdomain searches its registrable domain (where emails index).
		v, _ = d.norm.Normalize(breach.Domain, v)
	}
	to := q.To
	if to <= 0 {
		to = 1<<62 - 1
	}
	h := d.index(q.Type, v)
	key := fmt.Sprintf("%s|%x|%d|%d|%d", q.Type, h, q.From, to, q.Limit)
	now := d.s.Now()
	if !q.NoCache {
		d.mu.Lock()
		e, ok := d.cache[key]
		d.mu.Unlock()
		if ok && now.Sub(e.at) < CacheTTL {
			res, err := d.open(e.rows)
			if err != nil {
				return nil, err
			}
			return res, d.breachDates(ctx, res)
		}
	}
	rows, err := d.s.DB().QueryContext(ctx, d.s.Rebind(sqlSearch), typeCodes[q.Type], h, q.From, to, q.Limit)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", q.Type, err)
	}
	got, err := scanRows(rows)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	if len(d.cache) >= cacheMax {
		for k, e := range d.cache {
			if now.Sub(e.at) >= CacheTTL || len(d.cache) >= cacheMax/2 {
				delete(d.cache, k)
			}
		}
	}
	d.cache[key] = cacheEntry{rows: got, at: now}
	d.mu.Unlock()
	res, err := d.open(got)
	if err != nil {
		return nil, err
	}
	return res, d.breachDates(ctx, res)
}

// breachDates fills the breach date of records that have none from the
// breach catalogue (ingest breaches).
func (d *Store) breachDates(ctx context.Context, res []Result) error {
	var names []any
	seen := map[string]bool{}
	for _, r := range res {
		if r.Record.BreachDate == "" && r.Record.Breach != "" && !seen[r.Record.Breach] {
			seen[r.Record.Breach] = true
			names = append(names, r.Record.Breach)
		}
	}
	if len(names) == 0 {
		return nil
	}
	rows, err := d.s.DB().QueryContext(ctx, d.s.Rebind(`SELECT name, breach_date FROM darkweb_breaches WHERE name IN (`+marks(len(names))+`)`), names...)
	if err != nil {
		return fmt.Errorf("breach catalogue: %w", err)
	}
	defer rows.Close()
	dates := map[string]string{}
	for rows.Next() {
		var n, dt string
		if err := rows.Scan(&n, &dt); err != nil {
			return err
		}
		dates[n] = dt
	}
	for i := range res {
		if res[i].Record.BreachDate == "" {
			res[i].Record.BreachDate = dates[res[i].Record.Breach]
		}
	}
	return rows.Err()
}

func scanRows(rows *sql.Rows) ([]row, error) {
	defer rows.Close()
	var out []row
	for rows.Next() {
		var r row
		var id []byte
		if err := rows.Scan(&id, &r.keyID, &r.blob, &r.breach, &r.breachDate, &r.source, &r.dateAdded); err != nil {
			return nil, err
		}
		r.id = hex.EncodeToString(id)
		out = append(out, r)
	}
	return out, rows.Err()
}

// open decrypts rows.
func (d *Store) open(rows []row) ([]Result, error) {
	out := make([]Result, 0, len(rows))
	for _, r := range rows {
		res := Result{ID: r.id, DateAdded: r.dateAdded}
		if err := d.openRow(r, &res.Record); err != nil {
			return nil, err
		}
		res.Record.Breach, res.Record.BreachDate, res.Record.Source = r.breach, r.breachDate, r.source
		out = append(out, res)
	}
	return out, nil
}

// SetReveal allows (or stops allowing) an account to see passwords and
// hashes in clear.
func (d *Store) SetReveal(ctx context.Context, accountID string, on bool) error {
	var err error
	if on {
		_, err = d.s.DB().ExecContext(ctx, d.s.Rebind(`INSERT INTO darkweb_reveal (account_id) VALUES (?) ON CONFLICT DO NOTHING`), accountID)
	} else {
		_, err = d.s.DB().ExecContext(ctx, d.s.Rebind(`DELETE FROM darkweb_reveal WHERE account_id = ?`), accountID)
	}
	if err != nil {
		return fmt.Errorf("set reveal-secrets: %w", err)
	}
	return nil
}

// Reveal reports whether an account may see secrets in clear.
func (d *Store) Reveal(ctx context.Context, accountID string) (bool, error) {
	row, err := d.s.QueryRowPrepared(ctx, `SELECT COUNT(*) FROM darkweb_reveal WHERE account_id = ?`, accountID)
	if err != nil {
		return false, err
	}
	var n int
	if err := row.Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}

// Count returns how many records are stored.
func (d *Store) Count(ctx context.Context) (int64, error) {
	var n int64
	err := d.s.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM darkweb_records`).Scan(&n)
	return n, err
}

// hexID is a short public id of a blind index (the discovered-emails id).
func hexID(b []byte) string { return hex.EncodeToString(b[:8]) }
