package darkwebstore

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"strconv"
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

// open decrypts rows, on every core for large pages.
func (d *Store) open(rows []row) ([]Result, error) {
	out := make([]Result, len(rows))
	parts := min(runtime.GOMAXPROCS(0), len(rows)/(openParallelMin/2))
	if parts <= 1 {
		if err := d.openRange(rows, out); err != nil {
			return nil, err
		}
		return out, nil
	}
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*len(rows)/parts, (p+1)*len(rows)/parts
		wg.Go(func() { errs[p] = d.openRange(rows[lo:hi], out[lo:hi]) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// openRange decrypts rows into out (as long as rows), through one
// plaintext buffer.
func (d *Store) openRange(rows []row, out []Result) error {
	var buf []byte
	for i := range rows {
		r, res := &rows[i], &out[i]
		res.ID, res.DateAdded = r.id, r.dateAdded
		var err error
		if buf, err = d.openRowBuf(*r, &res.Record, buf); err != nil {
			return err
		}
		res.Record.Breach, res.Record.BreachDate, res.Record.Source = r.breach, r.breachDate, r.source
	}
	return nil
}

// openRow decrypts a row with the key it was sealed with, reading the key
// file again once when that key is unknown.
func (d *Store) openRow(r row, rec *darkweb.Record) error {
	_, err := d.openRowBuf(r, rec, nil)
	return err
}

// openRowBuf is openRow decrypting into buf (darkweb.Keyring.OpenBuf); it
// returns buf, grown as needed.
func (d *Store) openRowBuf(r row, rec *darkweb.Record, buf []byte) ([]byte, error) {
	buf, err := d.keys.OpenKeyBuf(r.keyID, r.id, r.blob, rec, buf)
	if errors.Is(err, darkweb.ErrUnknownKey) {
		if kr := d.reload; kr != nil {
			kr.mu.Lock()
			if !d.keys.Has(r.keyID) && time.Since(kr.last) >= time.Second {
				kr.last = time.Now()
				if k, lerr := kr.load(); lerr != nil {
					err = fmt.Errorf("%w (reading the key file again: %v)", err, lerr)
				} else if merr := d.keys.Merge(k); merr != nil {
					err = fmt.Errorf("%w (reading the key file again: %v)", err, merr)
				}
			}
			kr.mu.Unlock()
			if d.keys.Has(r.keyID) {
				buf, err = d.keys.OpenKeyBuf(r.keyID, r.id, r.blob, rec, buf)
			}
		}
		if errors.Is(err, darkweb.ErrUnknownKey) {
			return buf, fmt.Errorf("%w: record %s: %v", ErrWrongKey, r.id, err)
		}
	}
	if err != nil {
		return buf, fmt.Errorf("record %s: %w", r.id, err)
	}
	return buf, nil
}
