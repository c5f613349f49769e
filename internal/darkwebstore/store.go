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
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/store"
)

//go:embed migrations
var migrations embed.FS

// Migrations returns the dark-web schema (migrations 12, 17 and 20). On
// SQLite its tables live in a file of their own, attached as "darkweb":
// open the store with store.Files(Migrations()).
func Migrations() store.MigrationSet {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return store.MigrationSet{Name: "darkweb", FS: sub, File: "darkweb", FileCacheKiB: readCacheKiB,
		After: map[int]func(context.Context, *store.Store) error{20: moveToFile}}
}

// readCacheKiB is the dark-web file's page cache per connection (unless
// the store is opened with store.PageCacheMiB, as an ingest is). A search
// or listing page reads up to 1,000 records at random over gigabytes, one
// page each: a cache of 64 MiB held almost none of them, and the cgo-free
// SQLite's page cache, one lock and one LRU list for every connection's,
// got slower as it grew. At 10M records two connections read 1,000 random
// records in 3.8–4.0 ms with 1–2 MiB against 8.9 ms with 64 MiB, and one
// in 5.9 against 7.0 ms (BENCHMARKS.md's git history, 2026-11-26); later
// runs saw no size from 2 to 64 MiB stand out (5.4–7.3 ms), and answer heads read the pages
// of a frequent value's large answers together.
const readCacheKiB = 2048

// moveToFile moves the dark-web rows an earlier release stored in the main
// SQLite file into the dark-web file (migration 20).
func moveToFile(ctx context.Context, s *store.Store) error {
	create, err := fs.ReadFile(migrations, "migrations/sqlite/0020_darkweb_file.sql")
	if err != nil {
		return err
	}
	// darkweb_reveal, which names accounts, stays in the main file.
	return s.MoveToFile(ctx, "darkweb", string(create), "darkweb_keys", "darkweb_breaches", "darkweb_records",
		"darkweb_ids", "darkweb_index", "darkweb_counts", "darkweb_stage")
}

// Store is the dark-web storage. It must be unlocked with the key the data
// was written with before records are added or read.
type Store struct {
	s    *store.Store
	dl   dialect
	keys *darkweb.Keyring
	norm darkweb.Normalizer
	// reload reads the key file again (SetKeyReload; nil: never).
	reload *keyReload

	mu    sync.Mutex
	cache map[string]cacheEntry
	// cacheBytes is the cached answers' size (cacheEntry.size).
	cacheBytes int
	pages      map[string]pageAt       // where listing pages end (listing.go)
	dates      map[string]breachDateAt // breach dates from the catalogue (breachDates)
	stmts      sync.Map                // query text → *sql.Stmt (see query)
	// headHits counts the records searches took from heads (Status; tests).
	headHits atomic.Int64
	// stagedMax: Status's bound on the stage count (0: stagedCountMax;
	// tests make it small).
	stagedMax int
	// runRows: index rows a build sorts in memory at once (0: buildRunRows;
	// tests make it small to exercise the spilled runs).
	runRows int
	// stepRows: index rows a build commits at once when it steps (0:
	// buildStepRows); stepped, when set, runs between two steps (tests
	// stop a build there, or run another).
	stepRows int
	stepped  func() error
	// listBatch: rows a listing head's copy writes a transaction (0:
	// listHeadBatch; tests make it small).
	listBatch int
}

// query runs a read through a statement prepared once (parsing the SQL
// was a fifth of a search's CPU in the cgo-free driver); database/sql
// prepares it again on each pooled connection as needed.
func (d *Store) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, ok := d.stmts.Load(q)
	if !ok {
		p, err := d.s.DB().PrepareContext(ctx, d.s.Rebind(q))
		if err != nil {
			return nil, err
		}
		if prev, loaded := d.stmts.LoadOrStore(q, p); loaded {
			p.Close()
			st = prev
		} else {
			st = p
		}
	}
	return st.(*sql.Stmt).QueryContext(ctx, args...)
}

// CacheTTL is how long a search answer is reused (24 hours, docs/api.md "Dark-web breach data").
const CacheTTL = 24 * time.Hour

// cacheMax bounds the cached answers, cacheMaxBytes their sealed rows'
// bytes (a page of 1,000 records is about 700 KB): when either is reached,
// the expired answers go, then others until half of both is left.
const (
	cacheMax      = 10000
	cacheMaxBytes = 64 << 20
)

// cacheEntry is a cached search: the sealed rows, keyed by blind index,
// so clear text never sits in the cache; size is their bytes (cacheSize).
type cacheEntry struct {
	rows []row
	at   time.Time
	size int
}

// cacheRows returns rows to cache and their size in bytes: a small answer
// is copied into one buffer of its exact size (rows read share 64 KiB
// chunks: a cached answer of one record would keep a whole chunk); a
// large one fills its chunks but the last, and is kept as it is.
func cacheRows(rows []row) ([]row, int) {
	n := 0
	for _, r := range rows {
		n += len(r.blob)
	}
	if n >= 4*scanChunk {
		return rows, n + scanChunk + len(rows)*int(unsafe.Sizeof(row{}))
	}
	buf := make([]byte, 0, n)
	out := make([]row, len(rows))
	for i, r := range rows {
		at := len(buf)
		buf = append(buf, r.blob...)
		r.blob = buf[at:len(buf):len(buf)]
		out[i] = r
	}
	return out, n + len(rows)*int(unsafe.Sizeof(row{}))
}

// keepAnswer caches a search's rows under key, first making room.
func (d *Store) keepAnswer(key string, rows []row, now time.Time) {
	rows, size := cacheRows(rows)
	if size > cacheMaxBytes/2 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if old, ok := d.cache[key]; ok {
		d.cacheBytes -= old.size
		delete(d.cache, key)
	}
	if len(d.cache) >= cacheMax || d.cacheBytes+size > cacheMaxBytes {
		for k, e := range d.cache {
			if now.Sub(e.at) >= CacheTTL {
				d.cacheBytes -= e.size
				delete(d.cache, k)
			}
		}
		for k, e := range d.cache {
			if len(d.cache) <= cacheMax/2 && d.cacheBytes+size <= cacheMaxBytes/2 {
				break
			}
			d.cacheBytes -= e.size
			delete(d.cache, k)
		}
	}
	d.cache[key] = cacheEntry{rows: rows, at: now, size: size}
	d.cacheBytes += size
}

// New returns the dark-web store on s.
func New(s *store.Store) *Store {
	return &Store{s: s, dl: dialectOf(s.Dialect()), cache: map[string]cacheEntry{}, dates: map[string]breachDateAt{}}
}

// SetRegion sets the region assumed for phone numbers without a country
// code (default US).
func (d *Store) SetRegion(region string) { d.norm.Region = region }

// Normalizer returns the normaliser records must be cleaned with.
func (d *Store) Normalizer() darkweb.Normalizer { return d.norm }

// ErrWrongKey is returned by Unlock when the data was written with another key.
var ErrWrongKey = errors.New("darkweb: wrong key")

// ErrLocked is returned by reads and writes before Unlock.
var ErrLocked = errors.New("darkweb: store not unlocked (no dark-web key configured)")

const (
	sqlActiveKeys = `SELECT key_id, check_value, active FROM darkweb_keys`
	sqlAddKey     = `INSERT INTO darkweb_keys (key_id, check_value, active, created_at) VALUES (?, ?, ?, ?)`
)

// KeyID returns the id of the key the dark-web data is sealed with, "" when
// no key was ever recorded (a database no dark-web command has unlocked):
// a command that would create a new key file asks first, so it never
// writes one it must then refuse.
func (d *Store) KeyID(ctx context.Context) (string, error) {
	var id string
	err := d.s.QueryRow(ctx, `SELECT key_id FROM darkweb_keys ORDER BY CASE WHEN active = 1 THEN 0 ELSE 1 END, key_id LIMIT 1`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read dark-web key id: %w", err)
	}
	return id, nil
}

// Unlock checks k against the key check value stored with the data (a
// first key is recorded) and makes the store use it. A different key is
// refused with ErrWrongKey, never mixed in.
func (d *Store) Unlock(ctx context.Context, k *darkweb.Keyring) error {
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
	// Records staged but not indexed (an interrupted load, a database
	// migrated through 0017, a rotation) are indexed now.
	return d.finishPending(ctx)
}

// typeCodes are the stored codes of the index types (a small integer per
// row instead of the name).
var typeCodes = map[darkweb.Type]int{
	darkweb.Username: 1, darkweb.Name: 2, darkweb.Email: 3, darkweb.Hostname: 4, darkweb.MAC: 5, darkweb.IP: 6,
	darkweb.OrgAlias: 7, darkweb.BIN: 8, darkweb.CVE: 9, darkweb.Domain: 10, darkweb.Password: 11,
	darkweb.HashedPassword: 12, darkweb.VIN: 13, darkweb.Address: 14, darkweb.Phone: 15, darkweb.EmailDomain: 16,
}

// PutBreach stores (or replaces) a breach's metadata.
func (d *Store) PutBreach(ctx context.Context, b darkweb.BreachInfo) error {
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
	d.mu.Lock()
	delete(d.dates, b.Name)
	d.mu.Unlock()
	return nil
}

// Breach returns a breach's metadata; ok is false when it is unknown.
func (d *Store) Breach(ctx context.Context, name string) (b darkweb.BreachInfo, ok bool, err error) {
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
	Type     darkweb.Type
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
// matching record, before the LIMIT. The page's records come back in no
// set order: newestFirstBoth sorts them with their results (an outer ORDER BY made SQLite copy
// every record, blob and all, through a sorter: about half of the query
// for a page of 1,000).
const sqlSearch = `SELECT ` + recordCols + `
	FROM (SELECT rec, d FROM darkweb_index
		WHERE k = ? AND d >= ? AND d <= ?
		ORDER BY d DESC, rec DESC LIMIT ?) p
	JOIN darkweb_records r ON r.seq = p.rec`

// sqlSearchRecs is sqlSearch's page of record numbers alone (pageRows).
const sqlSearchRecs = `SELECT rec FROM darkweb_index
	WHERE k = ? AND d >= ? AND d <= ?
	ORDER BY d DESC, rec DESC LIMIT ?`

// newestFirst orders rows as the index orders a page: date_added
// descending, then seq descending (an index row's d is its record's
// date_added and its rec the record's seq).
func newestFirst(rows []row) { slices.SortFunc(rows, func(a, b row) int { return newer(&a, &b) }) }

// newer compares rows in newestFirst's order.
func newer(a, b *row) int {
	if c := cmp.Compare(b.dateAdded, a.dateAdded); c != 0 {
		return c
	}
	return cmp.Compare(b.seq, a.seq)
}

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
	if q.Type == darkweb.Domain {
		// A subdomain searches its registrable domain (where emails index).
		v, _ = d.norm.Normalize(darkweb.Domain, v)
	}
	to := q.To
	if to <= 0 {
		to = 1<<62 - 1
	}
	k := d.key(q.Type, v)
	key := fmt.Sprintf("%s|%x|%d|%d|%d", q.Type, k, q.From, to, q.Limit)
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
			res = d.verified(res, q.Type, v)
			return res, d.breachDates(ctx, res)
		}
	}
	head := func(seqs, _ []int64) ([]row, []Result, bool, error) {
		return d.headRows(ctx, k, q.From, to, q.Limit, seqs)
	}
	got, res, err := d.pageRows(ctx, q.Limit, head, sqlSearch, sqlSearchRecs, k, q.From, to, q.Limit)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", q.Type, err)
	}
	newestFirstBoth(got, res)
	d.keepAnswer(key, got, now)
	res = d.verified(res, q.Type, v)
	return res, d.breachDates(ctx, res)
}

// verified keeps the results whose value of type t normalises to v: a
// record found through a key that another value shares (56 bits of HMAC)
// is dropped here.
func (d *Store) verified(res []Result, t darkweb.Type, v string) []Result {
	out := res[:0]
	var same string // the last value found to normalise to v
	for _, r := range res {
		if d.hasValue(&r.Record, t, v, &same) {
			out = append(out, r)
		}
	}
	return out
}

// hasValue reports whether a record holds v (normalised) as a value of
// type t: only the fields type t is indexed from are normalised.
// same remembers the last value that normalised to v: a page's records
// mostly hold the same raw value (the one searched for), and normalising
// it again for each (NFKC and case folding for names and addresses) was
// about 2 % of the CPU of the HTTP benchmark's searches at 10M.
func (d *Store) hasValue(r *darkweb.Record, t darkweb.Type, v string, same *string) bool {
	var cands []string
	switch t {
	case darkweb.Email:
		cands = []string{r.Email}
	case darkweb.Username:
		cands = []string{r.Username}
	case darkweb.Name:
		cands = []string{r.Name}
	case darkweb.Phone:
		cands = []string{r.Phone}
	case darkweb.IP:
		cands = []string{r.IP}
	case darkweb.VIN:
		cands = []string{r.VIN}
	case darkweb.MAC:
		cands = []string{r.MAC}
	case darkweb.BIN:
		cands = []string{r.BIN}
	case darkweb.Password:
		cands = []string{r.Password}
	case darkweb.Address:
		cands = []string{r.Address}
	case darkweb.OrgAlias:
		cands = []string{r.OrgAlias}
	case darkweb.Hostname:
		cands = []string{r.Hostname}
	case darkweb.HashedPassword:
		cands = r.HashedPassword
	case darkweb.CVE:
		cands = r.CVEs
	case darkweb.Domain:
		_, host, _ := strings.Cut(r.Email, "@")
		cands = []string{host, r.Domain}
	default:
		return false
	}
	for _, c := range cands {
		if c == "" {
			continue
		}
		// A value stored as its normal form needs no normalising (email
		// domains, BINs, IPs as Clean left them): normal forms are fixed
		// points of Normalize.
		if c == v || c == *same {
			return true
		}
		if n, err := d.norm.Normalize(t, c); err == nil && n == v {
			*same = c
			return true
		}
	}
	if t == darkweb.Hostname || t == darkweb.Domain {
		// The URL's host last: parsing it is the dearest check, and most
		// records match before it.
		if h := darkweb.URLHost(r.URL); h != "" {
			if n, err := d.norm.Normalize(t, h); err == nil && n == v {
				return true
			}
		}
	}
	return false
}

// breachDateTTL is how long a breach's date from the catalogue is reused
// by searches and listings: a catalogue changed by another process (an
// ingest of breaches) shows within it; one changed through this store
// (PutBreach) at once.
const breachDateTTL = time.Minute

// breachDateAt is a breach's date as read from the catalogue at a time
// ("" for a breach the catalogue lacks or gives no date).
type breachDateAt struct {
	date string
	at   time.Time
}

// breachDates fills the breach date of records that have none from the
// breach catalogue (ingest breaches), read at most once a breachDateTTL
// for a name (a query a page was a tenth of a 1,000-record search's wall
// time when it ran between the page's reads and its answer).
func (d *Store) breachDates(ctx context.Context, res []Result) error {
	now := d.s.Now()
	dates := map[string]string{}
	var names []any
	d.mu.Lock()
	for _, r := range res {
		n := r.Record.Breach
		if r.Record.BreachDate != "" || n == "" {
			continue
		}
		if _, seen := dates[n]; seen {
			continue
		}
		dates[n] = ""
		if e, ok := d.dates[n]; ok && now.Sub(e.at) < breachDateTTL {
			dates[n] = e.date
			continue
		}
		names = append(names, n)
	}
	d.mu.Unlock()
	if len(names) > 0 {
		rows, err := d.s.DB().QueryContext(ctx, d.s.Rebind(`SELECT name, breach_date FROM darkweb_breaches WHERE name IN (`+marks(len(names))+`)`), names...)
		if err != nil {
			return fmt.Errorf("breach catalogue: %w", err)
		}
		found := map[string]string{}
		for rows.Next() {
			var n, dt string
			if err := rows.Scan(&n, &dt); err != nil {
				rows.Close()
				return err
			}
			found[n] = dt
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		d.mu.Lock()
		if len(d.dates) >= cacheMax {
			clear(d.dates)
		}
		for _, n := range names {
			dt := found[n.(string)]
			dates[n.(string)] = dt
			d.dates[n.(string)] = breachDateAt{date: dt, at: now}
		}
		d.mu.Unlock()
	}
	for i := range res {
		if res[i].Record.BreachDate == "" {
			res[i].Record.BreachDate = dates[res[i].Record.Breach]
		}
	}
	return nil
}

// scanRows reads rows; size is how many are expected at most (the page).
func scanRows(rows *sql.Rows, size int) ([]row, error) {
	defer rows.Close()
	out := make([]row, 0, min(max(size, 0), 16))
	var sc rowScanner
	for rows.Next() {
		out = append(out, row{})
		if err := sc.scan(rows, &out[len(out)-1]); err != nil {
			return nil, err
		}
	}
	return out, rows.Err()
}

// rowScanner reads record rows with few allocations: the blobs are copied
// into shared chunks rather than one allocation each (twice over, through
// database/sql), and the key id, breach, breach date and source reuse the
// previous row's string when they are the same (a page's records mostly
// share them).
type rowScanner struct {
	chunk          []byte
	prev           row
	id, blob, meta sql.RawBytes
	dst            []any
}

// scanChunk is the size of the chunks blobs are copied into.
const scanChunk = 64 << 10

// recordCols are a record row's columns as rowScanner reads them, from
// the records table named r: its seq, date_added, id and blob, then the
// key id, breach, source and breach date in one text column, separated
// by U+001F. Four columns fewer: each column is three calls into SQLite
// in the cgo-free driver, each under the connection's mutex, and an
// allocation (an eighth of reading a page of random records). None of the
// four holds U+001F: key ids are hex, breach names refuse control
// characters (darkweb.CheckText), sources are the ingest kinds and breach
// dates YYYY-MM-DD; a row with another count of them is an error, never
// a record with its fields shifted.
const recordCols = "r.seq, r.date_added, r.id, r.blob, r.key_id || '\x1f' || r.breach || '\x1f' || r.source || '\x1f' || r.breach_date"

// errMeta is a record row whose metadata column does not split in four.
var errMeta = errors.New("darkweb: record metadata malformed")

// scan reads a row of recordCols, after the columns lead points to (as
// many as the query selects before them).
func (s *rowScanner) scan(rows *sql.Rows, r *row, lead ...any) error {
	// One destination slice for the scanner's life (a new one a row was
	// an allocation a record).
	s.dst = append(append(s.dst[:0], lead...), &r.seq, &r.dateAdded, &s.id, &s.blob, &s.meta)
	if err := rows.Scan(s.dst...); err != nil {
		return err
	}
	if bytes.Count(s.meta, []byte{0x1f}) != 3 {
		return fmt.Errorf("%w (record %d)", errMeta, r.seq)
	}
	keyID, rest, _ := bytes.Cut(s.meta, []byte{0x1f})
	breachName, rest, _ := bytes.Cut(rest, []byte{0x1f})
	src, date, _ := bytes.Cut(rest, []byte{0x1f})
	r.id = hex.EncodeToString(s.id)
	if cap(s.chunk)-len(s.chunk) < len(s.blob) {
		s.chunk = make([]byte, 0, max(scanChunk, len(s.blob)))
	}
	at := len(s.chunk)
	s.chunk = append(s.chunk, s.blob...)
	r.blob = s.chunk[at:len(s.chunk):len(s.chunk)]
	r.keyID = reuse(s.prev.keyID, keyID)
	r.breach = reuse(s.prev.breach, breachName)
	r.breachDate = reuse(s.prev.breachDate, date)
	r.source = reuse(s.prev.source, src)
	s.prev = *r
	return nil
}

// reuse returns prev when b holds the same text, else a new string.
func reuse(prev string, b []byte) string {
	if string(b) == prev {
		return prev
	}
	return string(b)
}

// scanOpen reads a page of record rows and decrypts them as they arrive:
// each run of openParallelMin rows is opened on a goroutine of its own
// while the next rows are read (from PostgreSQL, the rows stream in while
// the server still reads the rest; on SQLite, reading and decrypting share
// the cores). The rows and results come back in the order read.
func (d *Store) scanOpen(rows *sql.Rows, size int) ([]row, []Result, error) {
	defer rows.Close()
	size = min(max(size, 0), 1000)
	got := make([]row, 0, size)
	out := make([]Result, 0, size)
	var sc rowScanner
	var wg sync.WaitGroup
	var errs []error
	var mu sync.Mutex
	opened := 0
	flush := func() {
		lo, hi := opened, len(got)
		if lo == hi {
			return
		}
		opened = hi
		rs, res := got[lo:hi], out[lo:hi]
		wg.Go(func() {
			if err := d.openRange(rs, res); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	for rows.Next() {
		if len(got) == cap(got) {
			// A larger page than expected: the runs handed out keep the
			// arrays they were given.
			wg.Wait()
			got = slices.Grow(got, len(got))
			out = slices.Grow(out, len(out))
		}
		got = append(got, row{})
		out = append(out, Result{})
		if err := sc.scan(rows, &got[len(got)-1]); err != nil {
			wg.Wait()
			return nil, nil, err
		}
		if len(got)-opened == openParallelMin {
			flush()
		}
	}
	err := rows.Err()
	flush()
	wg.Wait()
	if err != nil {
		return nil, nil, err
	}
	if len(errs) > 0 {
		return nil, nil, errs[0]
	}
	return got, out, nil
}

// newestFirstBoth orders rows and their results as newestFirst orders
// rows (they are usually in that order already: the index's).
func newestFirstBoth(rows []row, res []Result) {
	if slices.IsSortedFunc(rows, func(a, b row) int { return newer(&a, &b) }) {
		return
	}
	perm := make([]int, len(rows))
	for i := range perm {
		perm[i] = i
	}
	slices.SortFunc(perm, func(a, b int) int { return newer(&rows[a], &rows[b]) })
	r2, s2 := make([]row, len(rows)), make([]Result, len(res))
	for i, p := range perm {
		r2[i], s2[i] = rows[p], res[p]
	}
	copy(rows, r2)
	copy(res, s2)
}

// openParallelMin is the number of rows from which open decrypts on every
// core (a search or listing page of up to 1,000 records).
const openParallelMin = 128

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
