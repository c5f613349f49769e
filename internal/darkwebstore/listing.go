package darkwebstore

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/periscope-oss/periscope/internal/darkweb"
)

// ListQuery selects records under a set of email domains (each with its
// subdomains): an enterprise listing. Email, when set, narrows to one
// address.
type ListQuery struct {
	Domains       []string
	Email         string
	From, To      int64
	Limit, Offset int
}

// scope returns the listing keys of q's domains for code, the normalised
// domains and the date bounds.
func (d *Store) scope(q ListQuery, code int) (ks []any, doms []string, from, to int64) {
	for _, dom := range q.Domains {
		v, err := d.norm.Normalize(darkweb.EmailDomain, dom)
		if err != nil {
			continue
		}
		ks = append(ks, packKey(code, d.keys.Index(darkweb.EmailDomain, v)))
		doms = append(doms, v)
	}
	to = q.To
	if to <= 0 {
		to = 1<<62 - 1
	}
	return ks, doms, q.From, to
}

// underDomains reports whether an email's domain is one of doms or a
// subdomain of one: every listed record is checked after decrypting, so a
// key another domain shares (56 bits of HMAC) never lists a record
// outside the caller's domains.
func underDomains(email string, doms []string) bool {
	_, host, ok := strings.Cut(email, "@")
	if !ok {
		return false
	}
	host = strings.ToLower(host)
	for _, d := range doms {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}

// A listing page deep in a domain would scan every row before it
// (OFFSET). Clients walk pages in order, so the position where each page
// ends is kept: the next page starts there, a seek instead of a scan. A
// kept position is used only while the listing's total is what it was
// (index rows are only ever added, so an unchanged total means no row
// moved in or before the page).
type pageAt struct {
	total  int
	d, rec int64
}

// pagesMax bounds the kept page positions (all are dropped when full).
const pagesMax = 20000

func pageKey(kind string, ks []any, q ListQuery, from, to int64, email string, offset int) string {
	return fmt.Sprintf("%s|%v|%d|%d|%s|%d|%d", kind, ks, from, to, email, q.Limit, offset)
}

// window is a listing's WHERE clause over the rows of keys ks dated from
// from to to, and its arguments; filter (with its arguments) is ANDed to
// it. From a kept position at (nil: none) the rows start after it, and the
// upper date bound gives way to the position: at lies in the window, so
// every row before it is under the bound, and with both bounds SQLite
// bounds its backward scan of the primary key by the date alone and tests
// the position row by row (on a page deep in a domain ingested on one day,
// every row of the pages before it).
func window(ks []any, from, to int64, at *pageAt, filter string, fargs ...any) (string, []any) {
	w := ` i.k IN (` + marks(len(ks)) + `) AND i.d >= ?`
	args := append(append(make([]any, 0, len(ks)+3+len(fargs)), ks...), from)
	if at == nil {
		w += ` AND i.d <= ?`
		args = append(args, to)
	} else {
		w += ` AND (i.d, i.rec) < (?, ?)`
		args = append(args, at.d, at.rec)
	}
	return w + filter, append(args, fargs...)
}

func (d *Store) pageStart(key string, total int) (pageAt, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p, ok := d.pages[key]
	return p, ok && p.total == total
}

func (d *Store) keepPage(key string, p pageAt) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pages == nil || len(d.pages) >= pagesMax {
		d.pages = map[string]pageAt{}
	}
	d.pages[key] = p
}

// count reads a listing total kept by the build.
func (d *Store) count(ctx context.Context, k any) (int, error) {
	var n int
	row, err := d.s.QueryRowPrepared(ctx, `SELECT n FROM darkweb_counts WHERE k = ?`, k)
	if err != nil {
		return 0, err
	}
	err = row.Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, err
}

// Credentials lists the records with a password or hash under q's
// domains, newest first, with the total. Without an email filter both the
// page and the count are range scans of the listing index.
func (d *Store) Credentials(ctx context.Context, q ListQuery) ([]Result, int, error) {
	if d.keys == nil {
		return nil, 0, ErrLocked
	}
	ks, doms, from, to := d.scope(q, codeCredDomain)
	if len(ks) == 0 {
		return []Result{}, 0, nil
	}
	db := d.s.DB()
	var filter string
	var fargs []any
	if q.Email != "" {
		e, err := d.norm.Normalize(darkweb.Email, q.Email)
		if err != nil {
			return nil, 0, fmt.Errorf("email: %w", err)
		}
		filter = ` AND i.rec IN (SELECT rec FROM darkweb_index WHERE k = ?)`
		fargs = append(fargs, d.key(darkweb.Email, e))
	}
	w, args := window(ks, from, to, nil, filter, fargs...)
	var total int
	var err error
	if len(ks) == 1 && q.Email == "" && q.From <= 0 && q.To <= 0 {
		// One domain, no filter: the total kept by the build.
		total, err = d.count(ctx, ks[0])
	} else {
		err = db.QueryRowContext(ctx, d.s.Rebind(`SELECT COUNT(DISTINCT i.rec) FROM darkweb_index i WHERE`+w), args...).Scan(&total)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("count credentials: %w", err)
	}
	// The page comes from the index alone, newest first (ties by seq
	// descending: the primary key's backward order, so for one domain the
	// scan stops at the page); only the page's records are read, by seq.
	// Several domains can index one record (a domain and its subdomain):
	// GROUP BY keeps one row each.
	group := ""
	if len(ks) > 1 {
		group = ` GROUP BY i.rec, i.d`
	}
	offset := q.Offset
	pk := pageKey("credentials", ks, q, from, to, q.Email, q.Offset)
	if at, ok := d.pageStart(pk, total); ok && q.Offset > 0 {
		// The previous page ended here: seek instead of skipping.
		w, args = window(ks, from, to, &at, filter, fargs...)
		offset = 0
	}
	page := `SELECT i.rec, i.d FROM darkweb_index i WHERE` + w + group + `
			ORDER BY i.d DESC, i.rec DESC LIMIT ? OFFSET ?`
	var head func(seqs, ds []int64) ([]row, []Result, bool, error)
	if len(ks) == 1 && q.Email == "" {
		// One domain: the page is a run of its listing rows, read from
		// its listing head (listheads.go) as one range scan.
		head = func(seqs, ds []int64) ([]row, []Result, bool, error) {
			return d.listHeadRows(ctx, ks[0].(int64), seqs, ds)
		}
	}
	got, res, err := d.pageRows(ctx, q.Limit, head, `SELECT `+recordCols+`
		FROM (`+page+`) p JOIN darkweb_records r ON r.seq = p.rec`, page, append(args, q.Limit, offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list credentials: %w", err)
	}
	newestFirstBoth(got, res) // sorted here, not by the engine (see sqlSearch)
	if len(got) == q.Limit && q.Limit > 0 {
		last := got[len(got)-1]
		d.keepPage(pageKey("credentials", ks, q, from, to, q.Email, q.Offset+q.Limit), pageAt{total: total, d: last.dateAdded, rec: last.seq})
	}
	out := res[:0]
	for _, r := range res {
		if r.Record.HasSecret() && underDomains(r.Record.Email, doms) {
			out = append(out, r)
		}
	}
	return out, total, d.breachDates(ctx, out)
}

// EmailRow is one discovered email: first and last seen (date_added) and
// the breaches it appears in.
type EmailRow struct {
	ID                  string
	Email, Domain       string
	FirstSeen, LastSeen int64
	BreachDate          string
	Breaches            []string
}

// Emails lists the distinct emails under q's domains, the most recently
// seen first, with the total (from the listing index alone).
func (d *Store) Emails(ctx context.Context, q ListQuery) ([]EmailRow, int, error) {
	if d.keys == nil {
		return nil, 0, ErrLocked
	}
	ks, doms, from, to := d.scope(q, codeDomainEmail)
	if len(ks) == 0 {
		return []EmailRow{}, 0, nil
	}
	var filter string
	var fargs []any
	if q.Email != "" {
		e, err := d.norm.Normalize(darkweb.Email, q.Email)
		if err != nil {
			return nil, 0, fmt.Errorf("email: %w", err)
		}
		filter = ` AND i.x = ?`
		fargs = append(fargs, d.key(darkweb.Email, e))
	}
	w, args := window(ks, from, to, nil, filter, fargs...)
	db := d.s.DB()
	var total int
	var err error
	if len(ks) == 1 && q.Email == "" && q.From <= 0 && q.To <= 0 {
		// One domain, no filter: the count of distinct emails kept by the build.
		total, err = d.count(ctx, ks[0])
	} else {
		err = db.QueryRowContext(ctx, d.s.Rebind(`SELECT COUNT(DISTINCT i.x) FROM darkweb_index i WHERE`+w), args...).Scan(&total)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("count emails: %w", err)
	}
	// The page: the listing rows newest first (for one domain the primary
	// key's backward order), each email kept at its first (latest) row,
	// read until the page is full. No aggregate over the whole domain.
	// From a kept page position (the previous page's end) the scan seeks
	// there instead of skipping the emails before it; an email found
	// there that has a row before the position was on an earlier page,
	// and the page is then read again from the start.
	pk := pageKey("emails", ks, q, from, to, q.Email, q.Offset)
	at, seek := d.pageStart(pk, total)
	seek = seek && q.Offset > 0
	var out []EmailRow
	var xs, recs []int64
	var byEmail map[int64][]row
	var lastD, lastRec int64
	for {
		var err error
		w, args := w, args
		if seek {
			w, args = window(ks, from, to, &at, filter, fargs...)
		}
		out, xs, recs, lastD, lastRec, err = d.emailsPage(ctx, w, args, q, seek)
		if err != nil {
			return nil, 0, err
		}
		if byEmail, err = d.emailRows(ctx, ks, xs, recs, out, lastD, lastRec, q.Email == ""); err != nil {
			return nil, 0, err
		}
		if !seek || !repeats(byEmail, at, from, to) {
			break
		}
		seek = false
	}
	if len(out) == q.Limit && q.Limit > 0 {
		d.keepPage(pageKey("emails", ks, q, from, to, q.Email, q.Offset+q.Limit), pageAt{total: total, d: lastD, rec: lastRec})
	}
	// The email is read from the newest of its records that is under the
	// caller's domains (another email sharing the key is not): the newest
	// record of every email of the page is opened at once (on every
	// core), older ones only when the newest is not under them.
	newest := make([]row, 0, len(xs))
	for _, x := range xs {
		got := byEmail[x]
		newestFirst(got)
		if len(got) > 0 {
			newest = append(newest, got[0])
		}
	}
	opened, err := d.open(newest)
	if err != nil {
		return nil, 0, err
	}
	kept := out[:0]
	for i, x := range xs {
		e := out[i]
		got := byEmail[x]
		e.Breaches = []string{}
		var recs []row
		for j, g := range got {
			if e.Email == "" {
				var email string
				if j == 0 {
					email, opened = opened[0].Record.Email, opened[1:]
				} else {
					one, err := d.open([]row{g})
					if err != nil {
						return nil, 0, err
					}
					email = one[0].Record.Email
				}
				if !underDomains(email, doms) {
					continue
				}
				e.Email = email
			}
			recs = append(recs, g)
		}
		if e.Email == "" {
			continue
		}
		_, e.Domain, _ = strings.Cut(e.Email, "@")
		e.FirstSeen = e.LastSeen
		for _, g := range recs {
			if g.dateAdded >= from && g.dateAdded <= to {
				e.FirstSeen = min(e.FirstSeen, g.dateAdded)
			}
			if g.breach != "" && !slices.Contains(e.Breaches, g.breach) {
				e.Breaches = append(e.Breaches, g.breach)
			}
			if g.breachDate > e.BreachDate {
				e.BreachDate = g.breachDate
			}
		}
		kept = append(kept, e)
	}
	if kept == nil {
		kept = []EmailRow{}
	}
	return kept, total, nil
}

// Rotate re-seals every record sealed with old under next (new ids, new
// blobs, in batches of one transaction each), then rebuilds every blind
// index under the new key and makes it the active one. It is resumable:
// an interrupted rotation is finished by running it again with the same
// two keys. The server must be stopped while it runs (searches would miss
// the records already moved). progress, when set, is told how many
// records are done.
func (d *Store) Rotate(ctx context.Context, old, next *darkweb.Keyring, progress func(done int)) error {
	var active string
	if err := d.s.DB().QueryRowContext(ctx, `SELECT key_id FROM darkweb_keys WHERE active = 1`).Scan(&active); err != nil {
		return fmt.Errorf("read active key: %w", err)
	}
	if active != old.IndexID() && active != next.ID() {
		return fmt.Errorf("%w: the data is sealed with key %s, not %s", ErrWrongKey, active, old.IndexID())
	}
	if active == old.IndexID() {
		_, err := d.s.DB().ExecContext(ctx, d.s.Rebind(`INSERT INTO darkweb_keys (key_id, check_value, active, created_at) VALUES (?, ?, 0, ?)
			ON CONFLICT (key_id) DO NOTHING`), next.ID(), next.Check(), d.s.Now().Unix())
		if err != nil {
			return fmt.Errorf("record new key: %w", err)
		}
	}
	src := &Store{s: d.s, keys: old, norm: d.norm}
	done := 0
	// A keyset walk of the records by seq; a re-sealed record keeps its
	// seq and is skipped by the key_id filter when run again.
	var cursor int64
	for {
		rows, err := d.s.DB().QueryContext(ctx, d.s.Rebind(`SELECT `+recordCols+`
			FROM darkweb_records r WHERE r.seq > ? AND r.key_id = ? ORDER BY r.seq LIMIT 1000`), cursor, old.ID())
		if err != nil {
			return err
		}
		got, err := scanRows(rows, 1000)
		if err != nil {
			return err
		}
		if len(got) == 0 {
			break
		}
		cursor = got[len(got)-1].seq
		recs, err := src.open(got)
		if err != nil {
			return err
		}
		tx, err := d.s.DB().BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		for i, r := range recs {
			rec := r.Record
			hexID := next.RecordID(&rec)
			id, _ := hex.DecodeString(hexID)
			blob, err := next.Seal(hexID, &rec)
			if err == nil {
				_, err = tx.ExecContext(ctx, d.s.Rebind(`UPDATE darkweb_records SET id = ?, key_id = ?, blob = ? WHERE seq = ?`), id, next.ID(), blob, got[i].seq)
			}
			if err != nil {
				tx.Rollback()
				return fmt.Errorf("rotate batch: %w", err)
			}
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("rotate batch: %w", err)
		}
		done += len(recs)
		if progress != nil {
			progress(done)
		}
	}
	// Every blind index changes with the key: drop them all and stage
	// every record without keys, in the transaction that activates the
	// new key; the index is then rebuilt from the decrypted records (by
	// the next unlock, should this process stop first).
	tx, err := d.s.DB().BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, q := range append([]string{`DELETE FROM darkweb_index`, `DELETE FROM darkweb_ids`, `DELETE FROM darkweb_counts`, `DELETE FROM darkweb_repeats`, `DELETE FROM darkweb_stage`,
		`INSERT INTO darkweb_stage (seq, d) SELECT seq, date_added FROM darkweb_records`}, sqlDropHeads...) {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("activate new key: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, d.s.Rebind(`DELETE FROM darkweb_keys WHERE key_id <> ?`), next.ID()); err != nil {
		return fmt.Errorf("activate new key: %w", err)
	}
	if _, err := tx.ExecContext(ctx, d.s.Rebind(`UPDATE darkweb_keys SET active = 1 WHERE key_id = ?`), next.ID()); err != nil {
		return fmt.Errorf("activate new key: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("activate new key: %w", err)
	}
	d.dropCache()
	d.keys = next
	return d.finishPending(ctx)
}

// emailsPage reads the page's distinct emails from the listing rows w
// selects: after the emails of the pages before it (offset), or, when w
// starts at a kept position, from there (seek). It returns the position of
// the last row read, and with each email of the page the record its row
// names (its newest in the window).
func (d *Store) emailsPage(ctx context.Context, w string, args []any, q ListQuery, seek bool) (out []EmailRow, xs, recs []int64, lastD, lastRec int64, err error) {
	offset := q.Offset
	if seek {
		offset = 0
	}
	// The scan is bounded (a PostgreSQL client would otherwise receive
	// every row of the domain) and widened when repeats of emails exhaust
	// it.
	for bound := 2*(offset+q.Limit) + 100; ; bound *= 4 {
		out, xs, recs = out[:0], xs[:0], recs[:0]
		rows, err := d.query(ctx, `SELECT i.x, i.d, i.rec FROM darkweb_index i WHERE`+w+`
			ORDER BY i.d DESC, i.rec DESC LIMIT ?`, append(args, bound)...)
		if err != nil {
			return nil, nil, nil, 0, 0, fmt.Errorf("list emails: %w", err)
		}
		distinct := map[int64]bool{}
		read := 0
		for len(out) < q.Limit && rows.Next() {
			read++
			var x, at, rec int64
			if err := rows.Scan(&x, &at, &rec); err != nil {
				rows.Close()
				return nil, nil, nil, 0, 0, err
			}
			lastD, lastRec = at, rec
			if distinct[x] {
				continue
			}
			distinct[x] = true
			if len(distinct) <= offset {
				continue
			}
			out = append(out, EmailRow{ID: fmt.Sprintf("%016x", uint64(x)), LastSeen: at})
			xs, recs = append(xs, x), append(recs, rec)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, nil, nil, 0, 0, err
		}
		if len(out) == q.Limit || read < bound {
			return out, xs, recs, lastD, lastRec, nil // the page is full, or the rows ran out before the bound
		}
	}
}

// emailRows reads the records of the page's emails xs (ks: the listing's
// keys; recs: the record each email's listing row names). Only the emails
// repeated under the listing's domains (see darkweb_repeats) are read by
// their key, every record they have: any other email has one record,
// the one its row names, and that record is read by number. The index
// descent of every email's key was a third of a page's time. When the
// repeats cannot be trusted (a build in progress), every email is read by
// its key. With one domain and no email filter (useHead), the records read
// by number come from the domain's listing head where it has them
// (listheads.go): the page's rows run from its first email's
// (out[0].LastSeen, recs[0]) down to the last row read (lastD, lastRec).
func (d *Store) emailRows(ctx context.Context, ks []any, xs, recs []int64, out []EmailRow, lastD, lastRec int64, useHead bool) (map[int64][]row, error) {
	many, err := d.repeated(ctx, ks, xs)
	if err != nil {
		return nil, fmt.Errorf("list emails: %w", err)
	}
	var byKey, one, oneX []int64
	for i, x := range xs {
		if many == nil || many[x] {
			byKey = append(byKey, x)
		} else {
			one, oneX = append(one, recs[i]), append(oneX, x)
		}
	}
	byEmail, err := d.emailRecords(ctx, byKey)
	if err != nil {
		return nil, err
	}
	email := make(map[int64]int64, len(one))
	for i, seq := range one {
		email[seq] = oneX[i]
	}
	var got []row
	if useHead && len(ks) == 1 && len(one) >= headMin {
		span, err := d.listHeadSpan(ctx, ks[0].(int64), out[0].LastSeen, recs[0], lastD, lastRec, 2*len(xs))
		if err != nil {
			return nil, fmt.Errorf("list emails: %w", err)
		}
		var rest []int64
		for _, seq := range one {
			if r, ok := span[seq]; ok {
				got = append(got, r)
			} else {
				rest = append(rest, seq)
			}
		}
		d.headHits.Add(int64(len(got)))
		one = rest
	}
	more, err := d.rowsBySeq(ctx, one)
	if err != nil {
		return nil, fmt.Errorf("list emails: %w", err)
	}
	got = append(got, more...)
	for _, r := range got {
		byEmail[email[r.seq]] = []row{r}
	}
	return byEmail, nil
}

// repeated returns which of the emails xs have more than one record under
// one of the keys ks, or nil when that is not known: records are staged.
// A build writes the repeats it meets in its last step, with the listing
// totals, after its index rows, and empties the stage in that step; read
// after the page's rows, an empty stage means every row the page read has
// its repeats written.
func (d *Store) repeated(ctx context.Context, ks []any, xs []int64) (map[int64]bool, error) {
	var staged bool
	row, err := d.s.QueryRowPrepared(ctx, `SELECT EXISTS (SELECT 1 FROM darkweb_stage)`)
	if err == nil {
		err = row.Scan(&staged)
	}
	if err != nil || staged {
		return nil, err
	}
	many := map[int64]bool{}
	for _, k := range ks {
		for start := 0; start < len(xs); start += emailChunkKeys {
			q, args := d.dl.repeatsIn(k.(int64), xs[start:min(start+emailChunkKeys, len(xs))])
			rows, err := d.query(ctx, q, args...)
			if err != nil {
				return nil, err
			}
			for rows.Next() {
				var x int64
				if err := rows.Scan(&x); err != nil {
					rows.Close()
					return nil, err
				}
				many[x] = true
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return nil, err
			}
		}
	}
	return many, nil
}

// rowsBySeq reads the records numbered seqs, in chunks of seqChunk, as
// many at once as there are cores (recordsBySeq without decrypting them),
// in no set order.
func (d *Store) rowsBySeq(ctx context.Context, seqs []int64) ([]row, error) {
	q := d.dl.seqsIn(recordCols)
	n := (len(seqs) + seqChunk - 1) / seqChunk
	parts := make([][]row, n)
	err := inParallel(n, func(i int) error {
		rows, err := d.query(ctx, q, d.dl.seqArgs(seqs[i*seqChunk:min((i+1)*seqChunk, len(seqs))])...)
		if err == nil {
			parts[i], err = scanRows(rows, seqChunk)
		}
		return err
	})
	return slices.Concat(parts...), err
}

// emailRecords reads the records of emails (their email search rows), a
// chunk of emails per query, as many chunks at once as there are cores
// (each a few hundred random reads of the index and the records).
func (d *Store) emailRecords(ctx context.Context, xs []int64) (map[int64][]row, error) {
	const chunkSize = emailChunkKeys
	n := (len(xs) + chunkSize - 1) / chunkSize
	parts := make([]map[int64][]row, n)
	err := inParallel(n, func(i int) error {
		var err error
		parts[i], err = d.emailChunk(ctx, xs[i*chunkSize:min((i+1)*chunkSize, len(xs))])
		return err
	})
	if err != nil {
		return nil, err
	}
	byEmail := map[int64][]row{}
	for i := range parts {
		for k, rs := range parts[i] {
			byEmail[k] = append(byEmail[k], rs...)
		}
	}
	return byEmail, nil
}

// emailChunkKeys is how many emails one query of emailChunk reads.
const emailChunkKeys = 500

// emailChunk reads the records of one chunk of emails.
func (d *Store) emailChunk(ctx context.Context, chunk []int64) (map[int64][]row, error) {
	byEmail := map[int64][]row{}
	q, args := d.dl.keysIn(recordCols, chunk)
	rs, err := d.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var sc rowScanner
	for rs.Next() {
		var r row
		var k int64
		if err := sc.scan(rs, &r, &k); err != nil {
			return nil, err
		}
		byEmail[k] = append(byEmail[k], r)
	}
	return byEmail, rs.Err()
}

// repeats reports whether an email of the page has a record in the window
// before the position at (the email was listed on an earlier page).
func repeats(byEmail map[int64][]row, at pageAt, from, to int64) bool {
	for _, rs := range byEmail {
		for _, r := range rs {
			if r.dateAdded >= from && r.dateAdded <= to && (r.dateAdded > at.d || (r.dateAdded == at.d && r.seq >= at.rec)) {
				return true
			}
		}
	}
	return false
}
