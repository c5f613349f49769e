package brandstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/cert"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/store"
)

// Certificate is a stored certificate summary.
type Certificate struct {
	ID                 int64
	SHA256, SHA1       string
	SubjectCN          string
	SubjectOrg         string
	IssuerCN           string
	IssuerOrg          string
	Serial             string
	NotBefore          int64
	NotAfter           int64
	DNSNames           []string
	IPAddresses        []string
	IsPrecert          bool
	SignatureAlgorithm string
	Source             string
	FirstSeen          int64
	LastSeen           int64
}

// CertStats reports what UpsertCertificates did with a batch.
type CertStats struct {
	Inserted  int // certificates new to the store
	Updated   int // known certificates seen later than before (last_seen moved)
	Unchanged int // known certificates, nothing changed
	// IDs maps the SHA-256 of every stored certificate of the batch to its id.
	IDs map[string]int64
}

// SeenCert is one certificate observation: the certificate, when it was seen
// (0 means the store's clock) and where.
type SeenCert struct {
	Cert   cert.Certificate
	Seen   int64
	Source string
}

// maxCertNames bounds the names indexed per certificate (some CDN
// certificates carry thousands); the summary keeps them all.
const maxCertNames = 1000

// UpsertCertificates stores a batch of certificates in one transaction, each
// once by the SHA-256 of its DER, and indexes the host names each covers. A
// known certificate only has its last_seen moved forward. On error nothing of
// the batch is stored.
func (s *Store) UpsertCertificates(ctx context.Context, batch []SeenCert) (CertStats, error) {
	st := CertStats{IDs: make(map[string]int64, len(batch))}
	now := s.st.Now().Unix()
	for _, sc := range batch {
		if sc.Cert.SHA256 == "" {
			return st, fmt.Errorf("store certificate: no SHA-256 fingerprint")
		}
	}
	err := s.st.Tx(ctx, func(tx *store.Tx) error {
		if err := tx.Dialect().TakeTurns(ctx, tx, store.LockBrand); err != nil {
			return err
		}
		st.Inserted, st.Updated, st.Unchanged = 0, 0, 0
		clear(st.IDs)
		known, err := knownCertificates(ctx, tx, batch)
		if err != nil {
			return err
		}
		var names []any // rname, certificate_id pairs of the new certificates
		for _, sc := range batch {
			c := sc.Cert
			seen := sc.Seen
			if seen == 0 {
				seen = now
			}
			if _, dup := st.IDs[c.SHA256]; dup {
				st.Unchanged++
				continue
			}
			k, ok := known[c.SHA256]
			switch {
			case !ok:
				id, err := insertCertificate(ctx, tx, c, sc.Source, seen)
				if err != nil {
					return err
				}
				k.id = id
				st.Inserted++
				hosts := c.Hosts()
				if len(hosts) > maxCertNames {
					hosts = hosts[:maxCertNames]
				}
				for _, h := range hosts {
					// Only valid host names are indexed (a lenient parse can
					// yield any bytes); the summary keeps them all.
					if n, err := host.Normalize(h); err == nil && !n.IP {
						names = append(names, host.ReverseKey(n.Host), id)
					}
				}
			case seen > k.last:
				if _, err := tx.Exec(ctx, `UPDATE certificates SET last_seen = ? WHERE id = ? AND last_seen < ?`, seen, k.id, seen); err != nil {
					return fmt.Errorf("update certificate %s: %w", c.SHA256, err)
				}
				st.Updated++
			default:
				st.Unchanged++
			}
			st.IDs[c.SHA256] = k.id
		}
		// The names of all new certificates, a few hundred rows a statement.
		const perStmt = 400
		for len(names) > 0 {
			n := min(len(names), 2*perStmt)
			part := names[:n]
			names = names[n:]
			q := `INSERT INTO certificate_names (rname, certificate_id) VALUES (?, ?)` +
				strings.Repeat(`, (?, ?)`, len(part)/2-1) + ` ON CONFLICT DO NOTHING`
			if _, err := tx.Exec(ctx, q, part...); err != nil {
				return fmt.Errorf("index certificate names: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return CertStats{}, err
	}
	return st, nil
}

type knownCert struct{ id, last int64 }

// knownCertificates returns the stored certificates among the batch, by
// SHA-256, with one query per few hundred.
func knownCertificates(ctx context.Context, tx *store.Tx, batch []SeenCert) (map[string]knownCert, error) {
	out := make(map[string]knownCert, len(batch))
	const perQuery = 500
	for i := 0; i < len(batch); i += perQuery {
		part := batch[i:min(i+perQuery, len(batch))]
		args := make([]any, len(part))
		for j, sc := range part {
			args[j] = sc.Cert.SHA256
		}
		rows, err := tx.Query(ctx, `SELECT sha256, id, last_seen FROM certificates WHERE sha256 IN (?`+strings.Repeat(`, ?`, len(part)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("find certificates: %w", err)
		}
		for rows.Next() {
			var sha string
			var k knownCert
			if err := rows.Scan(&sha, &k.id, &k.last); err != nil {
				rows.Close()
				return nil, fmt.Errorf("find certificates: %w", err)
			}
			out[sha] = k
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("find certificates: %w", err)
		}
	}
	return out, nil
}

func insertCertificate(ctx context.Context, tx *store.Tx, c cert.Certificate, source string, seen int64) (int64, error) {
	names := c.DNSNames
	if names == nil {
		names = []string{}
	}
	ips := make([]string, len(c.IPAddresses))
	for i, a := range c.IPAddresses {
		ips[i] = a.String()
	}
	dnsJSON, _ := json.Marshal(names)
	ipJSON, _ := json.Marshal(ips)
	var id int64
	err := tx.QueryRow(ctx, `INSERT INTO certificates (sha256, sha1, subject_cn, subject_org, issuer_cn, issuer_org,
		serial, not_before, not_after, dns_names, ip_addresses, is_precert, signature_algorithm, source, first_seen, last_seen)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		c.SHA256, c.SHA1, clean(c.SubjectCN), clean(c.SubjectOrg), clean(c.IssuerCN), clean(c.IssuerOrg),
		c.Serial, c.NotBefore.Unix(), c.NotAfter.Unix(), clean(string(dnsJSON)), string(ipJSON), c.IsPrecert,
		c.SignatureAlgorithm, clean(source), seen, seen).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("insert certificate %s: %w", c.SHA256, err)
	}
	return id, nil
}

// clean drops bytes PostgreSQL refuses in text (NUL) and invalid UTF-8,
// which real certificates do carry.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "")
}

// CertLink links a stored certificate to an organization whose domain it
// covers.
type CertLink struct {
	OrganizationID, AccountID string
	CertificateID             int64
	Domain                    string // the name of the certificate under the organization's domain
	Seen                      int64
}

// LinkCertificates records certificate links, returning how many are new.
// A known link only has its last_seen moved forward.
func (s *Store) LinkCertificates(ctx context.Context, links []CertLink) (int, error) {
	if len(links) == 0 {
		return 0, nil
	}
	now := s.st.Now().Unix()
	added := 0
	err := s.st.Tx(ctx, func(tx *store.Tx) error {
		added = 0
		for _, l := range links {
			seen := l.Seen
			if seen == 0 {
				seen = now
			}
			res, err := tx.Exec(ctx, `INSERT INTO org_certificates (organization_id, account_id, certificate_id, domain, date_added, last_seen)
				SELECT ?, ?, CAST(? AS BIGINT), ?, CAST(? AS BIGINT), CAST(? AS BIGINT)
				WHERE EXISTS (SELECT 1 FROM organizations WHERE id = ? AND account_id = ?)
				ON CONFLICT (organization_id, certificate_id) DO NOTHING`,
				l.OrganizationID, l.AccountID, l.CertificateID, l.Domain, now, seen, l.OrganizationID, l.AccountID)
			if err != nil {
				return fmt.Errorf("link certificate %d: %w", l.CertificateID, err)
			}
			if n, _ := res.RowsAffected(); n == 1 {
				added++
				continue
			}
			if _, err := tx.Exec(ctx, `UPDATE org_certificates SET last_seen = ?
				WHERE organization_id = ? AND account_id = ? AND certificate_id = ? AND last_seen < ?`,
				seen, l.OrganizationID, l.AccountID, l.CertificateID, seen); err != nil {
				return fmt.Errorf("update certificate link %d: %w", l.CertificateID, err)
			}
		}
		return nil
	})
	return added, err
}

// LinkCertificatesUnder links every stored certificate covering domain or a
// name below it to the organization (when a domain is added to it), listed
// under its subject name when that is under domain, and returns how many
// links are new.
func (s *Store) LinkCertificatesUnder(ctx context.Context, orgID, accountID, domain string) (int, error) {
	k := host.ReverseKey(strings.ToLower(domain))
	res, err := s.exec(ctx, `INSERT INTO org_certificates (organization_id, account_id, certificate_id, domain, date_added, last_seen)
		SELECT ?, ?, c.id, CASE WHEN LOWER(c.subject_cn) = ? OR LOWER(c.subject_cn) LIKE ? ESCAPE '\' THEN LOWER(c.subject_cn) ELSE ? END,
		CAST(? AS BIGINT), c.last_seen FROM certificates c
		WHERE c.id IN (SELECT certificate_id FROM certificate_names WHERE rname = ? OR (rname > ? AND rname < ?))
		AND EXISTS (SELECT 1 FROM organizations WHERE id = ? AND account_id = ?)
		ON CONFLICT (organization_id, certificate_id) DO NOTHING`,
		orgID, accountID, domain, "%."+store.LikeEscape(domain), domain, s.st.Now().Unix(), k, k+".", k+"/", orgID, accountID)
	if err != nil {
		return 0, fmt.Errorf("link certificates under %q: %w", domain, err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// ListQuery selects a page of an enterprise listing.
type ListQuery struct {
	AccountID string
	Kind      string // findings only: TypoSquatting or PotentialPhishing
	Q         string // substring filter; empty means all
	From, To  int64  // inclusive bounds on date_added (epoch seconds); 0 means open
	Limit     int    // 0: count only
	Offset    int
	// RawJSON, for findings, leaves DNS and DNSHistory empty and sets
	// RawDNS and RawDNSHistory instead (the stored JSON, for callers that
	// only re-encode it).
	RawJSON bool
}

func (q ListQuery) where(dateCol string, args []any) (string, []any) {
	var w strings.Builder
	if q.From > 0 {
		w.WriteString(" AND " + dateCol + " >= ?")
		args = append(args, q.From)
	}
	if q.To > 0 {
		w.WriteString(" AND " + dateCol + " <= ?")
		args = append(args, q.To)
	}
	return w.String(), args
}

// DNSRecord is one entry of a finding's DNS history.
type DNSRecord struct {
	Date      string   `json:"date"` // DD-MM-YYYY
	DNS       host.DNS `json:"dns"`
	Timestamp int64    `json:"timestamp"`
}

// Finding is a typosquatting or potential-phishing domain of an
// organization's monitored base domain.
type Finding struct {
	ID             int64
	OrganizationID string
	AccountID      string
	Kind           string
	Domain         string
	BaseDomain     string
	Fuzzer         string
	Score          int
	Reason         string
	DNS            host.DNS
	DNSHistory     []DNSRecord
	DateAdded      int64
	LastSeen       int64
	// RawDNS and RawDNSHistory are the stored JSON of DNS and DNSHistory
	// when listed with ListQuery.RawJSON: every list an array, the history
	// oldest first.
	RawDNS, RawDNSHistory json.RawMessage
}

// FindingStats reports what UpsertFindings did.
type FindingStats struct {
	Inserted, Updated, Unchanged int
}

// maxDNSHistory bounds the DNS history kept per finding (the newest win).
const maxDNSHistory = 100

// UpsertFindings stores findings in one transaction. A new finding gets
// date_added = its DateAdded, or its first sighting in the batch; a known one has its score and reason
// refreshed, its last_seen moved forward, and, when the DNS answers differ
// from the last ones recorded, the new answers appended to its history.
// Findings of organizations deleted meanwhile are dropped.
func (s *Store) UpsertFindings(ctx context.Context, fs []Finding) (FindingStats, error) {
	var st FindingStats
	now := s.st.Now().Unix()
	err := s.st.Tx(ctx, func(tx *store.Tx) error {
		if err := tx.Dialect().TakeTurns(ctx, tx, store.LockBrand); err != nil {
			return err
		}
		st = FindingStats{}
		known, err := knownFindings(ctx, tx, fs)
		if err != nil {
			return err
		}
		var fresh []Finding
		for _, f := range fs {
			if f.LastSeen == 0 {
				f.LastSeen = now
			}
			k := findingKey(f)
			cur, ok := known[k]
			if !ok {
				fresh = append(fresh, f)
				// A later duplicate in the batch updates this one.
				known[k] = &storedFinding{pending: true, f: f}
				continue
			}
			if cur.pending {
				cur.f = mergePending(cur.f, f)
				continue
			}
			if err := updateFinding(ctx, tx, cur, f, &st); err != nil {
				return err
			}
		}
		for i, f := range fresh {
			fresh[i] = known[findingKey(f)].f
		}
		return insertFindings(ctx, tx, fresh, &st)
	})
	return st, err
}

func findingKey(f Finding) string { return f.OrganizationID + "|" + f.BaseDomain + "|" + f.Domain }

// storedFinding is a finding's stored state, or a new one of the batch.
type storedFinding struct {
	id                 int64
	last               int64
	dns, hist          string
	score              int
	reason, kind, fuzz string
	pending            bool
	f                  Finding
}

// mergePending folds another observation of a new finding into it: the
// latest answers win, date_added is the earliest sighting.
func mergePending(a, b Finding) Finding {
	first := min(firstSeen(a), firstSeen(b))
	if b.LastSeen >= a.LastSeen {
		if b.DNS.Empty() {
			b.DNS = a.DNS
		}
		a = b
	}
	a.DateAdded = first
	return a
}

func firstSeen(f Finding) int64 {
	if f.DateAdded > 0 {
		return f.DateAdded
	}
	return f.LastSeen
}

// knownFindings loads the stored findings among fs, by key.
func knownFindings(ctx context.Context, tx *store.Tx, fs []Finding) (map[string]*storedFinding, error) {
	out := make(map[string]*storedFinding, len(fs))
	domains := make([]string, 0, len(fs))
	seen := map[string]bool{}
	for _, f := range fs {
		if !seen[f.Domain] {
			seen[f.Domain] = true
			domains = append(domains, f.Domain)
		}
	}
	const perQuery = 500
	for i := 0; i < len(domains); i += perQuery {
		part := domains[i:min(i+perQuery, len(domains))]
		args := make([]any, len(part))
		for j, d := range part {
			args[j] = d
		}
		rows, err := tx.Query(ctx, `SELECT id, organization_id, base_domain, domain, last_seen, dns, dns_history, score, reason, kind, fuzzer
			FROM brand_findings WHERE domain IN (?`+strings.Repeat(`, ?`, len(part)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("find findings: %w", err)
		}
		for rows.Next() {
			var sf storedFinding
			var org, base, domain string
			if err := rows.Scan(&sf.id, &org, &base, &domain, &sf.last, &sf.dns, &sf.hist, &sf.score, &sf.reason, &sf.kind, &sf.fuzz); err != nil {
				rows.Close()
				return nil, fmt.Errorf("find findings: %w", err)
			}
			out[org+"|"+base+"|"+domain] = &sf
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("find findings: %w", err)
		}
	}
	return out, nil
}

// insertFindings inserts new findings, a hundred rows a statement, skipping
// those whose organization was deleted meanwhile.
func insertFindings(ctx context.Context, tx *store.Tx, fs []Finding, st *FindingStats) error {
	const perStmt = 100
	for len(fs) > 0 {
		n := min(len(fs), perStmt)
		part := fs[:n]
		fs = fs[n:]
		var q strings.Builder
		q.WriteString(`INSERT INTO brand_findings (organization_id, account_id, kind, domain, base_domain, fuzzer,
			score, reason, dns, dns_history, date_added, last_seen) SELECT v.* FROM (VALUES `)
		args := make([]any, 0, 12*n)
		for i, f := range part {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString(`(?, ?, ?, ?, ?, ?, CAST(? AS BIGINT), ?, ?, ?, CAST(? AS BIGINT), CAST(? AS BIGINT))`)
			hist := []DNSRecord{}
			if !f.DNS.Empty() {
				hist = append(hist, dnsRecord(f.DNS, f.LastSeen))
			}
			d, _ := json.Marshal(f.DNS.NonNil())
			h, _ := json.Marshal(hist)
			args = append(args, f.OrganizationID, f.AccountID, f.Kind, f.Domain, f.BaseDomain, f.Fuzzer, f.Score,
				clean(f.Reason), string(d), string(h), firstSeen(f), f.LastSeen)
		}
		// A row is stored only for an organization of the account it
		// names: a caller's wrong account id never files a finding under
		// another account. (Both engines name a VALUES list's columns
		// column1, column2, ….)
		// Nor is one whose name is another account's domain or below it:
		// such a name is that account's own, not a look-alike (issue 29).
		q.WriteString(`) AS v WHERE EXISTS (SELECT 1 FROM organizations o WHERE o.id = v.column1 AND o.account_id = v.column2) AND `)
		q.WriteString(store.NotClaimedByOther(tx.Dialect(), "v.column4", "v.column2"))
		res, err := tx.Exec(ctx, q.String(), args...)
		if err != nil {
			return fmt.Errorf("insert findings: %w", err)
		}
		rows, _ := res.RowsAffected()
		st.Inserted += int(rows)
	}
	return nil
}

func updateFinding(ctx context.Context, tx *store.Tx, cur *storedFinding, f Finding, st *FindingStats) error {
	changed := false
	dnsDoc, histDoc, last := cur.dns, cur.hist, cur.last
	var stored host.DNS
	json.Unmarshal([]byte(dnsDoc), &stored)
	if !f.DNS.Empty() && !reflect.DeepEqual(stored.NonNil(), f.DNS.NonNil()) {
		var hist []DNSRecord
		json.Unmarshal([]byte(histDoc), &hist)
		hist = append(hist, dnsRecord(f.DNS, f.LastSeen))
		if len(hist) > maxDNSHistory {
			hist = hist[len(hist)-maxDNSHistory:]
		}
		d, _ := json.Marshal(f.DNS.NonNil())
		h, _ := json.Marshal(hist)
		dnsDoc, histDoc, changed = string(d), string(h), true
	}
	if f.LastSeen > last {
		last, changed = f.LastSeen, true
	}
	if cur.score != f.Score || cur.reason != clean(f.Reason) || cur.kind != f.Kind || cur.fuzz != f.Fuzzer {
		changed = true
	}
	if !changed {
		st.Unchanged++
		return nil
	}
	if _, err := tx.Exec(ctx, `UPDATE brand_findings SET last_seen = ?, dns = ?, dns_history = ?, score = ?, reason = ?, kind = ?, fuzzer = ?
		WHERE id = ?`, last, dnsDoc, histDoc, f.Score, clean(f.Reason), f.Kind, f.Fuzzer, cur.id); err != nil {
		return fmt.Errorf("update finding %q: %w", f.Domain, err)
	}
	cur.dns, cur.hist, cur.last, cur.score, cur.reason, cur.kind, cur.fuzz = dnsDoc, histDoc, last, f.Score, clean(f.Reason), f.Kind, f.Fuzzer
	st.Updated++
	return nil
}

func dnsRecord(d host.DNS, ts int64) DNSRecord {
	return DNSRecord{Date: time.Unix(ts, 0).UTC().Format("02-01-2006"), DNS: d.NonNil(), Timestamp: ts}
}

const findingCols = `id, organization_id, account_id, kind, domain, base_domain, fuzzer, score, reason, dns, dns_history, date_added, last_seen`

func scanFinding(rows *sql.Rows, raw bool) (Finding, error) {
	var f Finding
	var d, h string
	if err := rows.Scan(&f.ID, &f.OrganizationID, &f.AccountID, &f.Kind, &f.Domain, &f.BaseDomain, &f.Fuzzer,
		&f.Score, &f.Reason, &d, &h, &f.DateAdded, &f.LastSeen); err != nil {
		return f, err
	}
	if raw {
		f.RawDNS, f.RawDNSHistory = json.RawMessage(d), json.RawMessage(h)
		return f, nil
	}
	if err := json.Unmarshal([]byte(d), &f.DNS); err != nil {
		return f, fmt.Errorf("decode dns of %q: %w", f.Domain, err)
	}
	if err := json.Unmarshal([]byte(h), &f.DNSHistory); err != nil {
		return f, fmt.Errorf("decode dns history of %q: %w", f.Domain, err)
	}
	f.DNS = f.DNS.NonNil()
	if f.DNSHistory == nil {
		f.DNSHistory = []DNSRecord{}
	}
	for i := range f.DNSHistory {
		f.DNSHistory[i].DNS = f.DNSHistory[i].DNS.NonNil()
	}
	return f, nil
}

// Findings returns a page of the account's findings of one kind, the most
// convincing (highest score) first, newest first among equals, and the
// number of findings the query matches.
func (s *Store) Findings(ctx context.Context, q ListQuery) ([]Finding, int, error) {
	from, args := ` FROM brand_findings`, []any(nil)
	// Neither the look-alike nor the base domain under another account's
	// domain claim (internal/store/orgs.go).
	d := s.st.Dialect()
	where := ` WHERE account_id = ? AND kind = ? AND ` + store.NotClaimedByOther(d, "brand_findings.base_domain", "?") +
		` AND ` + store.NotClaimedByOther(d, "brand_findings.domain", "?")
	wargs := append(append([]any{q.AccountID, q.Kind}, store.NotClaimedByOtherArgs(q.AccountID)...), store.NotClaimedByOtherArgs(q.AccountID)...)
	if q.Q != "" {
		sub := strings.ToLower(q.Q)
		if f, fargs, ok := s.dl.substringFrom(sub); ok && !s.noGrams {
			from, args = f, fargs // the LIKE below still decides
		}
		where += ` AND (domain LIKE ? ESCAPE '\' OR base_domain LIKE ? ESCAPE '\')`
		p := "%" + store.LikeEscape(sub) + "%"
		wargs = append(wargs, p, p)
	}
	where = from + where
	args = append(args, wargs...)
	w, args := q.where("date_added", args)
	where += w
	var total int
	count, cargs := `SELECT COUNT(*)`+where, args
	if q.Q == "" && q.From == 0 && q.To == 0 && !s.noCounts {
		// Unfiltered: the per-base-domain counts (migration 15), under the
		// same base-domain filter, instead of a walk of every finding. No
		// stored finding's look-alike lies under another account's claim
		// (insertFindings, DropFindingsUnder) once the brand monitor has
		// seen the claim.
		count = `SELECT COALESCE(SUM(n), 0) FROM brand_finding_counts WHERE account_id = ? AND kind = ? AND ` +
			store.NotClaimedByOther(d, "brand_finding_counts.base_domain", "?")
		cargs = append([]any{q.AccountID, q.Kind}, store.NotClaimedByOtherArgs(q.AccountID)...)
	}
	if err := s.queryRow(ctx, count, cargs...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count findings: %w", err)
	}
	out := []Finding{}
	if total == 0 || q.Limit <= 0 || q.Offset >= total {
		return out, total, nil
	}
	rows, err := s.query(ctx, `SELECT `+findingCols+where+` ORDER BY score DESC, date_added DESC, id LIMIT ? OFFSET ?`,
		append(args, q.Limit, q.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list findings: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		f, err := scanFinding(rows, q.RawJSON)
		if err != nil {
			return nil, 0, fmt.Errorf("list findings: %w", err)
		}
		out = append(out, f)
	}
	return out, total, rows.Err()
}

// FindingsByBase returns up to limit findings of one kind for a base domain
// across all organizations, one per domain (the highest score), for the OEM
// searches of account: none whose look-alike lies under another account's
// domain claim.
func (s *Store) FindingsByBase(ctx context.Context, account, base, kind string, limit int) ([]Finding, error) {
	// One finding a domain (several organizations may monitor the same
	// brand), the most convincing; then the page.
	args := append([]any{base, kind}, store.NotClaimedByOtherArgs(account)...)
	rows, err := s.query(ctx, `SELECT `+findingCols+` FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY domain
		ORDER BY score DESC, date_added DESC, id) AS rn FROM brand_findings WHERE base_domain = ? AND kind = ? AND `+
		store.NotClaimedByOther(s.st.Dialect(), "brand_findings.domain", "?")+`) f
		WHERE rn = 1 ORDER BY score DESC, date_added DESC, id LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("find findings of %q: %w", base, err)
	}
	defer rows.Close()
	out := []Finding{}
	for rows.Next() {
		f, err := scanFinding(rows, false)
		if err != nil {
			return nil, fmt.Errorf("find findings of %q: %w", base, err)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// OrgCertificate is a certificate linked to an organization.
type OrgCertificate struct {
	Certificate
	OrganizationID string
	Domain         string
	DateAdded      int64
	LinkLastSeen   int64
}

// OrgCertificates returns a page of the certificates covering the account's
// organizations' domains, newest first, and the number the query matches.
// q matches the covered name, subject or issuer (substring), a SAN name, or
// a SHA-256 fingerprint or serial number (exactly).
func (s *Store) OrgCertificates(ctx context.Context, q ListQuery) ([]OrgCertificate, int, error) {
	// Not what another account's domain claim covers (internal/store/orgs.go).
	where := ` FROM org_certificates oc JOIN certificates c ON c.id = oc.certificate_id WHERE oc.account_id = ? AND ` +
		store.NotClaimedByOther(s.st.Dialect(), "oc.domain", "?")
	args := append([]any{q.AccountID}, store.NotClaimedByOtherArgs(q.AccountID)...)
	if q.Q != "" {
		low := strings.ToLower(q.Q)
		p := "%" + store.LikeEscape(low) + "%"
		where += ` AND (oc.domain LIKE ? ESCAPE '\' OR LOWER(c.subject_cn) LIKE ? ESCAPE '\' OR LOWER(c.issuer_cn) LIKE ? ESCAPE '\'
			OR LOWER(c.issuer_org) LIKE ? ESCAPE '\' OR LOWER(c.dns_names) LIKE ? ESCAPE '\' OR c.sha256 = ? OR c.serial = ?)`
		// Fingerprints and serials are stored as hex without colons.
		hex := strings.ReplaceAll(low, ":", "")
		args = append(args, p, p, p, p, p, hex, hex)
	}
	w, args := q.where("oc.date_added", args)
	where += w
	var total int
	if err := s.queryRow(ctx, `SELECT COUNT(*)`+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count certificates: %w", err)
	}
	out := []OrgCertificate{}
	if total == 0 || q.Limit <= 0 || q.Offset >= total {
		return out, total, nil
	}
	rows, err := s.query(ctx, `SELECT c.id, c.sha256, c.sha1, c.subject_cn, c.subject_org, c.issuer_cn, c.issuer_org, c.serial,
		c.not_before, c.not_after, c.dns_names, c.ip_addresses, c.is_precert, c.signature_algorithm, c.source, c.first_seen, c.last_seen,
		oc.organization_id, oc.domain, oc.date_added, oc.last_seen`+where+` ORDER BY oc.date_added DESC, oc.certificate_id DESC LIMIT ? OFFSET ?`,
		append(args, q.Limit, q.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list certificates: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var oc OrgCertificate
		var names, ips string
		c := &oc.Certificate
		if err := rows.Scan(&c.ID, &c.SHA256, &c.SHA1, &c.SubjectCN, &c.SubjectOrg, &c.IssuerCN, &c.IssuerOrg, &c.Serial,
			&c.NotBefore, &c.NotAfter, &names, &ips, &c.IsPrecert, &c.SignatureAlgorithm, &c.Source, &c.FirstSeen, &c.LastSeen,
			&oc.OrganizationID, &oc.Domain, &oc.DateAdded, &oc.LinkLastSeen); err != nil {
			return nil, 0, fmt.Errorf("list certificates: %w", err)
		}
		if err := json.Unmarshal([]byte(names), &c.DNSNames); err != nil {
			return nil, 0, fmt.Errorf("decode names of certificate %s: %w", c.SHA256, err)
		}
		if err := json.Unmarshal([]byte(ips), &c.IPAddresses); err != nil {
			return nil, 0, fmt.Errorf("decode addresses of certificate %s: %w", c.SHA256, err)
		}
		out = append(out, oc)
	}
	return out, total, rows.Err()
}

// CTCheckpoint returns the index of the next entry to read from a CT log, 0
// for a log never read.
func (s *Store) CTCheckpoint(ctx context.Context, log string) (int64, error) {
	var next int64
	err := s.queryRow(ctx, `SELECT next_index FROM ct_checkpoints WHERE log = ?`, log).Scan(&next)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read checkpoint of %s: %w", log, err)
	}
	return next, nil
}

// SaveCTCheckpoint records the index of the next entry to read from a log.
func (s *Store) SaveCTCheckpoint(ctx context.Context, log string, next int64) error {
	_, err := s.exec(ctx, `INSERT INTO ct_checkpoints (log, next_index, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (log) DO UPDATE SET next_index = excluded.next_index, updated_at = excluded.updated_at`,
		log, next, s.st.Now().Unix())
	if err != nil {
		return fmt.Errorf("save checkpoint of %s: %w", log, err)
	}
	return nil
}

// MonitoredPairs returns the (organization id, domain) pairs already
// backfilled, as "org|domain" keys.
func (s *Store) MonitoredPairs(ctx context.Context) (map[string]bool, error) {
	rows, err := s.query(ctx, `SELECT organization_id, domain FROM brand_monitored`)
	if err != nil {
		return nil, fmt.Errorf("list monitored domains: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var o, d string
		if err := rows.Scan(&o, &d); err != nil {
			return nil, fmt.Errorf("list monitored domains: %w", err)
		}
		out[o+"|"+d] = true
	}
	return out, rows.Err()
}

// SetMonitored records that an organization's domain was backfilled (done)
// or forgets it (!done), so that adding it again backfills again.
func (s *Store) SetMonitored(ctx context.Context, orgID, domain string, done bool) error {
	var err error
	if done {
		_, err = s.exec(ctx, `INSERT INTO brand_monitored (organization_id, domain, backfilled_at)
			SELECT ?, ?, CAST(? AS BIGINT) WHERE EXISTS (SELECT 1 FROM organizations WHERE id = ?) ON CONFLICT DO NOTHING`,
			orgID, domain, s.st.Now().Unix(), orgID)
	} else {
		_, err = s.exec(ctx, `DELETE FROM brand_monitored WHERE organization_id = ? AND domain = ?`, orgID, domain)
	}
	if err != nil {
		return fmt.Errorf("record monitored domain %q: %w", domain, err)
	}
	return nil
}

// OrgCertificateNames returns the host names covered by the certificates
// linked to an organization.
func (s *Store) OrgCertificateNames(ctx context.Context, orgID string) ([]string, error) {
	rows, err := s.query(ctx, `SELECT DISTINCT cn.rname FROM org_certificates oc
		JOIN certificate_names cn ON cn.certificate_id = oc.certificate_id WHERE oc.organization_id = ?`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list certificate names of organization %s: %w", orgID, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var rk string
		if err := rows.Scan(&rk); err != nil {
			return nil, fmt.Errorf("list certificate names of organization %s: %w", orgID, err)
		}
		out = append(out, host.ReverseKey(rk))
	}
	return out, rows.Err()
}
