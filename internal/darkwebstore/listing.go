package darkwebstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/periscope-oss/periscope/internal/breach"
	"github.com/periscope-oss/periscope/internal/store"
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

// scope returns the email-domain blind indexes of q's domains and the
// date bounds.
func (d *Store) scope(q ListQuery) (hs []any, from, to int64) {
	for _, dom := range q.Domains {
		v, err := d.norm.Normalize(breach.EmailDomain, dom)
		if err != nil {
			continue
		}
		hs = append(hs, d.index(breach.EmailDomain, v))
	}
	to = q.To
	if to <= 0 {
		to = 1<<62 - 1
	}
	return hs, q.From, to
}

// Credentials lists the records with a password or hash under q's
// domains, newest first, with the total. Without an email filter both the
// page and the count are range scans of the listing index.
func (d *Store) Credentials(ctx context.Context, q ListQuery) ([]Result, int, error) {
	if d.keys == nil {
		return nil, 0, ErrLocked
	}
	hs, from, to := d.scope(q)
	if len(hs) == 0 {
		return []Result{}, 0, nil
	}
	db := d.s.DB()
	w := ` i.type = ? AND i.hmac IN (` + marks(len(hs)) + `) AND i.date_added >= ? AND i.date_added <= ?`
	args := append(append([]any{codeCredDomain}, hs...), from, to)
	if q.Email != "" {
		e, err := d.norm.Normalize(breach.Email, q.Email)
		if err != nil {
			return nil, 0, fmt.Errorf("email: %w", err)
		}
		w += ` AND i.record_id IN (SELECT id FROM darkweb_records WHERE email_idx = ?)`
		args = append(args, d.index(breach.Email, e))
	}
	var total int
	if len(hs) == 1 && q.Email == "" && q.From <= 0 && q.To <= 0 {
		// One domain, no filter: the total kept at ingest.
		err := db.QueryRowContext(ctx, d.s.Rebind(`SELECT n FROM darkweb_counts WHERE code = ? AND hmac = ?`), codeCredDomain, hs[0]).Scan(&total)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, 0, fmt.Errorf("count credentials: %w", err)
		}
	} else if err := db.QueryRowContext(ctx, d.s.Rebind(`SELECT COUNT(DISTINCT i.record_id) FROM darkweb_index i WHERE`+w), args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count credentials: %w", err)
	}
	// The page comes from the index alone, newest first (ties by record id
	// descending: the primary key's backward order, so for one domain the
	// scan stops at the page); only the page's records are read. Several
	// domains can index one record (a domain and its subdomain): GROUP BY
	// keeps one row each.
	group := ""
	if len(hs) > 1 {
		group = ` GROUP BY i.record_id, i.date_added`
	}
	rows, err := db.QueryContext(ctx, d.s.Rebind(`SELECT r.id, r.key_id, r.blob, r.breach, r.breach_date, r.source, r.date_added
		FROM (SELECT i.record_id, i.date_added FROM darkweb_index i WHERE`+w+group+`
			ORDER BY i.date_added DESC, i.record_id DESC LIMIT ? OFFSET ?) p JOIN darkweb_records r ON r.id = p.record_id
		ORDER BY p.date_added DESC, p.record_id DESC`), append(args, q.Limit, q.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list credentials: %w", err)
	}
	got, err := scanRows(rows)
	if err != nil {
		return nil, 0, err
	}
	res, err := d.open(got)
	if err != nil {
		return nil, 0, err
	}
	return res, total, d.breachDates(ctx, res)
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
	hs, from, to := d.scope(q)
	if len(hs) == 0 {
		return []EmailRow{}, 0, nil
	}
	w := ` i.type = ? AND i.hmac IN (` + marks(len(hs)) + `) AND i.date_added >= ? AND i.date_added <= ?`
	args := append(append([]any{codeDomainEmail}, hs...), from, to)
	if q.Email != "" {
		e, err := d.norm.Normalize(breach.Email, q.Email)
		if err != nil {
			return nil, 0, fmt.Errorf("email: %w", err)
		}
		w += ` AND i.record_id = ?`
		args = append(args, d.index(breach.Email, e))
	}
	db := d.s.DB()
	var total int
	if len(hs) == 1 && q.Email == "" && q.From <= 0 && q.To <= 0 {
		// One domain, no filter: the count of distinct emails kept at ingest.
		err := db.QueryRowContext(ctx, d.s.Rebind(`SELECT n FROM darkweb_counts WHERE code = ? AND hmac = ?`), codeDomainEmail, hs[0]).Scan(&total)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, 0, fmt.Errorf("count emails: %w", err)
		}
	} else if err := db.QueryRowContext(ctx, d.s.Rebind(`SELECT COUNT(DISTINCT i.record_id) FROM darkweb_index i WHERE`+w), args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count emails: %w", err)
	}
	// The page: the listing rows newest first (for one domain the primary
	// key's backward order), each email kept at its first (latest) row,
	// read until the page is full. No aggregate over the whole domain. The
	// scan is bounded (a PostgreSQL client would otherwise receive every
	// row of the domain) and widened when repeats of emails exhaust it.
	var out []EmailRow
	var idxs [][]byte
	for bound := 2*(q.Offset+q.Limit) + 100; ; bound *= 4 {
		out, idxs = out[:0], idxs[:0]
		rows, err := db.QueryContext(ctx, d.s.Rebind(`SELECT i.record_id, i.date_added FROM darkweb_index i WHERE`+w+`
			ORDER BY i.date_added DESC, i.record_id DESC LIMIT ?`), append(args, bound)...)
		if err != nil {
			return nil, 0, fmt.Errorf("list emails: %w", err)
		}
		distinct := map[string]bool{}
		read := 0
		for len(out) < q.Limit && rows.Next() {
			read++
			var idx []byte
			var at int64
			if err := rows.Scan(&idx, &at); err != nil {
				rows.Close()
				return nil, 0, err
			}
			if distinct[string(idx)] {
				continue
			}
			distinct[string(idx)] = true
			if len(distinct) <= q.Offset {
				continue
			}
			out = append(out, EmailRow{ID: hexID(idx), LastSeen: at})
			idxs = append(idxs, idx)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, 0, err
		}
		if len(out) == q.Limit || read < bound {
			break // the page is full, or the rows ran out before the bound
		}
	}
	// The records of the page's emails, a chunk of emails per query.
	byEmail := map[string][]row{}
	for start := 0; start < len(idxs); start += 500 {
		chunk := idxs[start:min(start+500, len(idxs))]
		args := make([]any, len(chunk))
		for i, c := range chunk {
			args[i] = c
		}
		rs, err := db.QueryContext(ctx, d.s.Rebind(`SELECT r.id, r.key_id, r.blob, r.breach, r.breach_date, r.source, r.date_added, r.email_idx
			FROM darkweb_records r WHERE r.email_idx IN (`+marks(len(args))+`)`), args...)
		if err != nil {
			return nil, 0, err
		}
		for rs.Next() {
			var r row
			var id, idx []byte
			if err := rs.Scan(&id, &r.keyID, &r.blob, &r.breach, &r.breachDate, &r.source, &r.dateAdded, &idx); err != nil {
				rs.Close()
				return nil, 0, err
			}
			r.id = hex.EncodeToString(id)
			byEmail[string(idx)] = append(byEmail[string(idx)], r)
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return nil, 0, err
		}
	}
	for i, idx := range idxs {
		got := byEmail[string(idx)]
		out[i].Breaches = []string{}
		if len(got) == 0 {
			continue
		}
		slices.SortFunc(got, func(a, b row) int {
			if c := cmp.Compare(b.dateAdded, a.dateAdded); c != 0 {
				return c
			}
			return strings.Compare(a.id, b.id)
		})
		first, err := d.open(got[:1])
		if err != nil {
			return nil, 0, err
		}
		out[i].Email = first[0].Record.Email
		_, out[i].Domain, _ = strings.Cut(out[i].Email, "@")
		out[i].FirstSeen = out[i].LastSeen
		for _, g := range got {
			if g.dateAdded >= from && g.dateAdded <= to {
				out[i].FirstSeen = min(out[i].FirstSeen, g.dateAdded)
			}
			if g.breach != "" && !slices.Contains(out[i].Breaches, g.breach) {
				out[i].Breaches = append(out[i].Breaches, g.breach)
			}
			if g.breachDate > out[i].BreachDate {
				out[i].BreachDate = g.breachDate
			}
		}
	}
	if out == nil {
		out = []EmailRow{}
	}
	return out, total, nil
}

// Rotate re-seals every record sealed with old under next: new ids, new
// blobs, new blind indexes, in batches of one transaction each. It is
// resumable: an interrupted rotation is finished by running it again with
// the same two keys. The server must be stopped while it runs (searches
// would miss the records already moved). progress, when set, is told how
// many records are done.
func (d *Store) Rotate(ctx context.Context, old, next *breach.Keyring, progress func(done int)) error {
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
	dst := &Store{s: d.s, keys: next, norm: d.norm}
	done := 0
	// A keyset walk of the primary key (no index on key_id: it would cost
	// every insert). Re-sealed records get new random ids, some after the
	// cursor, and are skipped by the key_id filter.
	cursor := []byte{}
	for {
		rows, err := d.s.DB().QueryContext(ctx, d.s.Rebind(`SELECT id, key_id, blob, breach, breach_date, source, date_added
			FROM darkweb_records WHERE id > ? AND key_id = ? ORDER BY id LIMIT 1000`), cursor, old.ID())
		if err != nil {
			return err
		}
		got, err := scanRows(rows)
		if err != nil {
			return err
		}
		if len(got) == 0 {
			break
		}
		cursor, _ = hex.DecodeString(got[len(got)-1].id)
		recs, err := src.open(got)
		if err != nil {
			return err
		}
		err = d.s.Tx(ctx, func(tx *store.Tx) error {
			for i, r := range recs {
				oldID, _ := hex.DecodeString(r.ID)
				for _, row := range src.indexRows(&r.Record, oldID) {
					if _, err := tx.Exec(ctx, `DELETE FROM darkweb_index WHERE type = ? AND hmac = ? AND date_added = ? AND record_id = ?`,
						row.code, row.hmac, rowDate(row, got[i].dateAdded), row.ref); err != nil {
						return err
					}
				}
				if _, err := tx.Exec(ctx, `DELETE FROM darkweb_records WHERE id = ?`, oldID); err != nil {
					return err
				}
				rec := r.Record
				hexID := next.RecordID(&rec)
				id, _ := hex.DecodeString(hexID)
				blob, err := next.Seal(hexID, &rec)
				if err != nil {
					return err
				}
				var email any
				if rec.Email != "" {
					email = dst.index(breach.Email, rec.Email)
				}
				secret := 0
				if rec.HasSecret() {
					secret = 1
				}
				if _, err := tx.Exec(ctx, `INSERT INTO darkweb_records (id, key_id, blob, breach, breach_date, source, has_secret, email_idx, date_added)
					VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, id, next.ID(), blob, rec.Breach, rec.BreachDate, rec.Source, secret, email, got[i].dateAdded); err != nil {
					return err
				}
				for _, row := range dst.indexRows(&rec, id) {
					if _, err := tx.Exec(ctx, `INSERT INTO darkweb_index (type, hmac, date_added, record_id) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`,
						row.code, row.hmac, rowDate(row, got[i].dateAdded), row.ref); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("rotate batch: %w", err)
		}
		done += len(recs)
		if progress != nil {
			progress(done)
		}
	}
	err := d.s.Tx(ctx, func(tx *store.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM darkweb_keys WHERE key_id <> ?`, next.ID()); err != nil {
			return err
		}
		// The listing counts are keyed by blind index: recount under the new key.
		if _, err := tx.Exec(ctx, `DELETE FROM darkweb_counts`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO darkweb_counts (code, hmac, n)
			SELECT type, hmac, COUNT(*) FROM darkweb_index WHERE type = ? GROUP BY type, hmac`, codeCredDomain); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO darkweb_counts (code, hmac, n)
			SELECT ?, hmac, COUNT(*) FROM darkweb_index WHERE type = ? GROUP BY hmac`, codeDomainEmail, codeEmailSeen); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE darkweb_keys SET active = 1 WHERE key_id = ?`, next.ID())
		return err
	})
	if err != nil {
		return fmt.Errorf("activate new key: %w", err)
	}
	d.mu.Lock()
	d.cache = map[string]cacheEntry{}
	d.mu.Unlock()
	d.keys = next
	return nil
}

// rowDate is the date an index row is stored with: the record's, but 0
// for the undated email-seen pairs.
func rowDate(r indexRow, dateAdded int64) int64 {
	if r.code == codeEmailSeen {
		return 0
	}
	return dateAdded
}
