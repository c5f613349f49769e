// Package whoisstore keeps WHOIS/RDAP records and the RDAP bootstrap
// registries, in SQLite or PostgreSQL.
package whoisstore

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/store"
)

//go:embed migrations
var migrations embed.FS

// Migrations returns the whois schema (version 10).
func Migrations() store.MigrationSet {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return store.MigrationSet{Name: "whois", FS: sub}
}

// ErrNotFound means no record is stored for the domain.
var ErrNotFound = errors.New("whois record not found")

// Store reads and writes whois records.
type Store struct {
	s       *store.Store
	changed ChangeFunc
}

// ChangeFunc is told, in Put's transaction, the record stored before (nil
// when none) and the one replacing it: the change ledger's WHOIS rows
// commit with the record.
type ChangeFunc func(ctx context.Context, tx *store.Tx, old *Record, nw Record) error

// OnChange makes Put call f and returns st.
func (st *Store) OnChange(f ChangeFunc) *Store {
	st.changed = f
	return st
}

// New returns a Store on s (migrated with Migrations).
func New(s *store.Store) *Store { return &Store{s: s} }

// Record is one domain's registration data as stored.
type Record struct {
	Domain            string
	TLD               string
	Registrar         string
	RegistrarIANAID   string
	CreatedAt         time.Time // zero when unknown
	UpdatedAt         time.Time
	ExpiresAt         time.Time
	Status            []string
	NameServers       []string
	DNSSEC            string
	RegistrantOrg     string
	RegistrantEmail   string
	RegistrantCountry string
	WhoisServer       string
	WhoisRaw          string
	RDAPSource        string
	RDAPJSON          string // the RDAP summary the API shows, as JSON; "" when none
	Source            string // "lookup" or "ingest"
	NotFound          bool
	QueriedAt         time.Time
	CacheExpires      time.Time
}

func unix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

func fromUnix(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(n, 0).UTC()
}

// FoldStatus makes EPP ("clientTransferProhibited") and RDAP ("client
// transfer prohibited") spellings of a status one search key.
func FoldStatus(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), ""))
}

const upsertRecord = `INSERT INTO whois_records (domain, tld, registrar, registrar_lc, registrar_iana_id,
    created_at, updated_at, expires_at, statuses, nameservers, dnssec, registrant_org, registrant_org_lc,
    registrant_email, registrant_country, whois_server, whois_raw, rdap_source, rdap_json, source,
    not_found, queried_at, cache_expires)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (domain) DO UPDATE SET tld = excluded.tld, registrar = excluded.registrar,
    registrar_lc = excluded.registrar_lc, registrar_iana_id = excluded.registrar_iana_id,
    created_at = excluded.created_at, updated_at = excluded.updated_at, expires_at = excluded.expires_at,
    statuses = excluded.statuses, nameservers = excluded.nameservers, dnssec = excluded.dnssec,
    registrant_org = excluded.registrant_org, registrant_org_lc = excluded.registrant_org_lc,
    registrant_email = excluded.registrant_email, registrant_country = excluded.registrant_country,
    whois_server = excluded.whois_server, whois_raw = excluded.whois_raw, rdap_source = excluded.rdap_source,
    rdap_json = excluded.rdap_json, source = excluded.source, not_found = excluded.not_found,
    queried_at = excluded.queried_at, cache_expires = excluded.cache_expires`

const (
	deleteTerms = `DELETE FROM whois_terms WHERE domain = ?`
	insertTerm  = `INSERT INTO whois_terms (kind, value, domain) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`
)

// Put stores r, replacing what was stored for its domain, in one
// transaction (the row and its search terms together).
func (st *Store) Put(ctx context.Context, r Record) error {
	if r.Domain == "" || r.TLD == "" {
		return fmt.Errorf("put whois record: domain and tld required")
	}
	if r.Source == "" {
		r.Source = "lookup"
	}
	statuses, _ := json.Marshal(nonNil(r.Status))
	ns, _ := json.Marshal(nonNil(r.NameServers))
	return st.s.Tx(ctx, func(tx *store.Tx) error {
		if st.changed != nil {
			var old *Record
			o, err := scanRecord(tx.QueryRow(ctx, selectRecord, r.Domain).Scan)
			switch {
			case err == nil:
				old = &o
			case !errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("put whois record %s: %w", r.Domain, err)
			}
			if err := st.changed(ctx, tx, old, r); err != nil {
				return fmt.Errorf("put whois record %s: %w", r.Domain, err)
			}
		}
		if _, err := tx.Exec(ctx, upsertRecord, r.Domain, r.TLD, r.Registrar, strings.ToLower(r.Registrar), r.RegistrarIANAID,
			unix(r.CreatedAt), unix(r.UpdatedAt), unix(r.ExpiresAt), string(statuses), string(ns), r.DNSSEC,
			r.RegistrantOrg, strings.ToLower(r.RegistrantOrg), strings.ToLower(r.RegistrantEmail), strings.ToUpper(r.RegistrantCountry),
			r.WhoisServer, r.WhoisRaw, r.RDAPSource, r.RDAPJSON, r.Source, r.NotFound, r.QueriedAt.Unix(), r.CacheExpires.Unix()); err != nil {
			return fmt.Errorf("put whois record %s: %w", r.Domain, err)
		}
		return putTerms(ctx, tx, r)
	})
}

func putTerms(ctx context.Context, tx *store.Tx, r Record) error {
	if _, err := tx.Exec(ctx, deleteTerms, r.Domain); err != nil {
		return fmt.Errorf("put whois terms %s: %w", r.Domain, err)
	}
	for _, n := range r.NameServers {
		if _, err := tx.Exec(ctx, insertTerm, "ns", strings.ToLower(n), r.Domain); err != nil {
			return fmt.Errorf("put whois terms %s: %w", r.Domain, err)
		}
	}
	for _, s := range r.Status {
		if _, err := tx.Exec(ctx, insertTerm, "status", FoldStatus(s), r.Domain); err != nil {
			return fmt.Errorf("put whois terms %s: %w", r.Domain, err)
		}
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

const recordColumns = `domain, tld, registrar, registrar_iana_id, created_at, updated_at, expires_at,
    statuses, nameservers, dnssec, registrant_org, registrant_email, registrant_country, whois_server,
    whois_raw, rdap_source, rdap_json, source, not_found, queried_at, cache_expires`

const selectRecord = `SELECT ` + recordColumns + ` FROM whois_records WHERE domain = ?`

// Get returns the stored record of domain, or ErrNotFound.
func (st *Store) Get(ctx context.Context, domain string) (Record, error) {
	row, err := st.s.QueryRowPrepared(ctx, selectRecord, domain)
	if err != nil {
		return Record{}, fmt.Errorf("get whois record %s: %w", domain, err)
	}
	r, err := scanRecord(row.Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return Record{}, ErrNotFound
	}
	if err != nil {
		return Record{}, fmt.Errorf("get whois record %s: %w", domain, err)
	}
	return r, nil
}

func scanRecord(scan func(...any) error) (Record, error) {
	var r Record
	var created, updated, expires, queried, cacheExp int64
	var statuses, ns string
	if err := scan(&r.Domain, &r.TLD, &r.Registrar, &r.RegistrarIANAID, &created, &updated, &expires,
		&statuses, &ns, &r.DNSSEC, &r.RegistrantOrg, &r.RegistrantEmail, &r.RegistrantCountry, &r.WhoisServer,
		&r.WhoisRaw, &r.RDAPSource, &r.RDAPJSON, &r.Source, &r.NotFound, &queried, &cacheExp); err != nil {
		return Record{}, err
	}
	r.CreatedAt, r.UpdatedAt, r.ExpiresAt = fromUnix(created), fromUnix(updated), fromUnix(expires)
	r.QueriedAt, r.CacheExpires = time.Unix(queried, 0).UTC(), time.Unix(cacheExp, 0).UTC()
	if err := json.Unmarshal([]byte(statuses), &r.Status); err != nil {
		return Record{}, fmt.Errorf("statuses of %s: %w", r.Domain, err)
	}
	if err := json.Unmarshal([]byte(ns), &r.NameServers); err != nil {
		return Record{}, fmt.Errorf("nameservers of %s: %w", r.Domain, err)
	}
	return r, nil
}

// Filter selects records for /oem/whois/search; set fields are ANDed.
type Filter struct {
	Registrar     string    // case-insensitive prefix of the registrar name
	IANAID        string    // exact registrar IANA id
	NameServer    string    // exact name server host
	TLD           string    // exact TLD
	Status        string    // a status, EPP or RDAP spelling
	RegistrantOrg string    // case-insensitive prefix
	Email         string    // exact registrant email
	Country       string    // exact registrant country code
	ExpiresBefore time.Time // expiry known and before this
	Limit         int
	// Any ORs the registrar, name server, status and expiry conditions
	// (FullHunt Nexus's semantics); the others stay ANDed with them.
	Any bool
}

// Search returns registered (not "not found") records matching f, ordered
// by domain, at most f.Limit, and how many match in all.
func (st *Store) Search(ctx context.Context, f Filter) ([]Record, int, error) {
	where, args := f.where()
	var total int
	if err := st.s.DB().QueryRowContext(ctx, st.s.Rebind(`SELECT COUNT(*) FROM whois_records r WHERE `+where), args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count whois records: %w", err)
	}
	q := `SELECT ` + prefixed(recordColumns) + ` FROM whois_records r WHERE ` + where + ` ORDER BY r.domain LIMIT ?`
	rows, err := st.s.DB().QueryContext(ctx, st.s.Rebind(q), append(args, f.Limit)...)
	if err != nil {
		return nil, 0, fmt.Errorf("search whois records: %w", err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		r, err := scanRecord(rows.Scan)
		if err != nil {
			return nil, 0, fmt.Errorf("search whois records: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("search whois records: %w", err)
	}
	return out, total, nil
}

func prefixed(cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = "r." + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

// prefixEnd is the smallest string after every string starting with p, so
// a prefix match is an index range on both engines.
func prefixEnd(p string) string { return p + "\U0010FFFF" }

// where builds the parameterised WHERE clause of f.
func (f Filter) where() (string, []any) {
	conds := []string{"r.not_found = ?"}
	args := []any{false}
	var anyConds []string // ORed when f.Any
	var anyArgs []any
	either := func(cond string, a ...any) {
		if f.Any {
			anyConds, anyArgs = append(anyConds, "("+cond+")"), append(anyArgs, a...)
			return
		}
		conds, args = append(conds, cond), append(args, a...)
	}
	if f.Registrar != "" {
		p := strings.ToLower(f.Registrar)
		either("r.registrar_lc >= ? AND r.registrar_lc < ?", p, prefixEnd(p))
	}
	if f.IANAID != "" {
		conds = append(conds, "r.registrar_iana_id = ?")
		args = append(args, f.IANAID)
	}
	if f.TLD != "" {
		conds = append(conds, "r.tld = ?")
		args = append(args, strings.ToLower(f.TLD))
	}
	if f.RegistrantOrg != "" {
		p := strings.ToLower(f.RegistrantOrg)
		conds = append(conds, "r.registrant_org_lc >= ? AND r.registrant_org_lc < ?")
		args = append(args, p, prefixEnd(p))
	}
	if f.Email != "" {
		conds = append(conds, "r.registrant_email = ?")
		args = append(args, strings.ToLower(f.Email))
	}
	if f.Country != "" {
		conds = append(conds, "r.registrant_country = ?")
		args = append(args, strings.ToUpper(f.Country))
	}
	if !f.ExpiresBefore.IsZero() {
		either("r.expires_at > 0 AND r.expires_at < ?", f.ExpiresBefore.Unix())
	}
	if f.NameServer != "" {
		either("r.domain IN (SELECT t.domain FROM whois_terms t WHERE t.kind = 'ns' AND t.value = ?)", strings.ToLower(strings.TrimSuffix(f.NameServer, ".")))
	}
	if f.Status != "" {
		either("r.domain IN (SELECT t.domain FROM whois_terms t WHERE t.kind = 'status' AND t.value = ?)", FoldStatus(f.Status))
	}
	if len(anyConds) > 0 {
		conds, args = append(conds, "("+strings.Join(anyConds, " OR ")+")"), append(args, anyArgs...)
	}
	return strings.Join(conds, " AND "), args
}

// Bootstrap is one stored RDAP bootstrap registry.
type Bootstrap struct {
	Kind        string
	Body        []byte
	Publication string
	FetchedAt   time.Time
}

const (
	upsertBootstrap = `INSERT INTO rdap_bootstrap (kind, body, publication, fetched_at) VALUES (?, ?, ?, ?)
ON CONFLICT (kind) DO UPDATE SET body = excluded.body, publication = excluded.publication, fetched_at = excluded.fetched_at`
	selectBootstraps = `SELECT kind, body, publication, fetched_at FROM rdap_bootstrap ORDER BY kind`
)

// PutBootstrap stores a fetched registry.
func (st *Store) PutBootstrap(ctx context.Context, b Bootstrap) error {
	if _, err := st.s.Exec(ctx, upsertBootstrap, b.Kind, string(b.Body), b.Publication, b.FetchedAt.Unix()); err != nil {
		return fmt.Errorf("put rdap bootstrap %s: %w", b.Kind, err)
	}
	return nil
}

// Bootstraps returns every stored registry.
func (st *Store) Bootstraps(ctx context.Context) ([]Bootstrap, error) {
	rows, err := st.s.DB().QueryContext(ctx, selectBootstraps)
	if err != nil {
		return nil, fmt.Errorf("read rdap bootstraps: %w", err)
	}
	defer rows.Close()
	var out []Bootstrap
	for rows.Next() {
		var b Bootstrap
		var body string
		var fetched int64
		if err := rows.Scan(&b.Kind, &body, &b.Publication, &fetched); err != nil {
			return nil, fmt.Errorf("read rdap bootstraps: %w", err)
		}
		b.Body, b.FetchedAt = []byte(body), time.Unix(fetched, 0).UTC()
		out = append(out, b)
	}
	return out, rows.Err()
}
