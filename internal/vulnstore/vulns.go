package vulnstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/vuln"
)

// VulnStats reports what one upsert of vulnerability-intelligence records
// did. Records older than the stored version (by modified / lastModified
// / score date) count as unchanged.
type VulnStats struct {
	Inserted  int
	Updated   int
	Unchanged int
}

// Add adds o's counts to st.
func (st *VulnStats) Add(o VulnStats) {
	st.Inserted += o.Inserted
	st.Updated += o.Updated
	st.Unchanged += o.Unchanged
}

// vulnChunk bounds the ids of one IN (...) list.
const vulnChunk = 500

// nvdDoc is the stored NVD part of a vulnerability: everything but the
// indexed columns and the enrichment kept in other tables.
type nvdDoc struct {
	Title              string           `json:"title,omitempty"`
	CVSSV3Score        float64          `json:"v3s,omitempty"`
	CVSSV3Vector       string           `json:"v3,omitempty"`
	CVSSV2Score        float64          `json:"v2s,omitempty"`
	CVSSV2Vector       string           `json:"v2,omitempty"`
	CVSSV4Score        float64          `json:"v4s,omitempty"`
	CVSSV4Vector       string           `json:"v4,omitempty"`
	CWEs               []string         `json:"cwes,omitempty"`
	CPEIDs             []string         `json:"cpes,omitempty"`
	VulnStatus         string           `json:"status,omitempty"`
	SourceIdentifier   string           `json:"source,omitempty"`
	CISAExploitAdd     int64            `json:"cisa_add,omitempty"`
	CISAActionDue      int64            `json:"cisa_due,omitempty"`
	CISARequiredAction string           `json:"cisa_action,omitempty"`
	References         []vuln.Reference `json:"refs,omitempty"`
}

func newNVDDoc(v vuln.Vulnerability) nvdDoc {
	return nvdDoc{
		Title: v.Title, CVSSV3Score: v.CVSSV3Score, CVSSV3Vector: v.CVSSV3Vector,
		CVSSV2Score: v.CVSSV2Score, CVSSV2Vector: v.CVSSV2Vector,
		CVSSV4Score: v.CVSSV4Score, CVSSV4Vector: v.CVSSV4Vector,
		CWEs: v.CWEs, CPEIDs: v.CPEIDs, VulnStatus: v.VulnStatus, SourceIdentifier: v.SourceIdentifier,
		CISAExploitAdd: store.Unix(v.CISAExploitAdd), CISAActionDue: store.Unix(v.CISAActionDue),
		CISARequiredAction: v.CISARequiredAction, References: v.References,
	}
}

// CPEKey returns the part:vendor:product key of a CPE 2.3 formatted string
// ("cpe:2.3:a:apache:log4j:2.14.1:*:...") or a CPE 2.2 URI
// ("cpe:/a:apache:log4j:2.14.1"), lower-cased; ok is false when s is not a
// CPE naming at least a part, a vendor and a product.
func CPEKey(s string) (key string, ok bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	var rest string
	switch {
	case strings.HasPrefix(s, "cpe:2.3:"):
		rest = s[len("cpe:2.3:"):]
	case strings.HasPrefix(s, "cpe:/"):
		rest = s[len("cpe:/"):]
	default:
		return "", false
	}
	f := strings.SplitN(rest, ":", 4)
	if len(f) < 3 || len(f[0]) != 1 || !strings.Contains("aoh", f[0]) {
		return "", false
	}
	for _, x := range f[1:3] {
		if x == "" || x == "*" || x == "-" {
			return "", false
		}
	}
	return f[0] + ":" + f[1] + ":" + f[2], true
}

type storedVuln struct {
	id        int64
	hasNVD    bool
	published int64
	lastMod   int64
	doc       []byte
}

// UpsertVulns stores a batch of NVD CVE records in one transaction. A
// record older than the stored one (lastModified) is ignored; the same
// record again changes nothing. KEV and exploit flags already known for a
// CVE are kept. On error nothing of the batch is stored.
func (s *Store) UpsertVulns(ctx context.Context, vs []vuln.Vulnerability) (VulnStats, error) {
	batch, folded := newestByKey(vs, func(v vuln.Vulnerability) string { return v.CVEID },
		func(a, b vuln.Vulnerability) bool { return a.LastModified.After(b.LastModified) })
	return runUpsert(ctx, s, upsert[string, vuln.Vulnerability, storedVuln]{
		what: "vulnerabilities",
		key:  func(v vuln.Vulnerability) string { return v.CVEID },
		load: `SELECT cve_id, id, has_nvd, published, last_modified, doc FROM vulns WHERE cve_id IN (%s)`,
		scan: func(rows *sql.Rows) (string, storedVuln, error) {
			var id string
			var sv storedVuln
			var hasNVD int
			err := rows.Scan(&id, &sv.id, &hasNVD, &sv.published, &sv.lastMod, &sv.doc)
			sv.hasNVD = hasNVD == 1
			return id, sv, err
		},
		encode:  encodeVuln,
		text:    s.vulnTextSync,
		prepare: prepareVulnWrite,
	}, batch, folded)
}

// encodeVuln returns the stored document of v, nil when v is older than
// the stored NVD record or the same.
func encodeVuln(v vuln.Vulnerability, old storedVuln, ok bool) ([]byte, error) {
	doc, err := json.Marshal(newNVDDoc(v))
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", v.CVEID, err)
	}
	pub, mod := store.Unix(v.Published), store.Unix(v.LastModified)
	if ok && old.hasNVD && (mod < old.lastMod || mod == old.lastMod && pub == old.published && bytes.Equal(doc, old.doc)) {
		return nil, nil
	}
	return doc, nil
}

// SQL of prepareVulnWrite. The title falls back to the KEV catalogue's
// name; the KEV and exploit flags already known for the CVE are kept.
const (
	sqlInsertVuln = `INSERT INTO vulns (cve_id, has_nvd, published, last_modified, severity, title, description, doc, is_kev, is_exploit)
			VALUES (?, 1, ?, ?, ?, COALESCE(NULLIF(?, ''), (SELECT name FROM vuln_kev WHERE cve_id = ?), ''), ?, ?,
				CASE WHEN ? = 1 OR EXISTS (SELECT 1 FROM vuln_kev WHERE cve_id = ?) THEN 1 ELSE 0 END,
				CASE WHEN ? = 1 OR EXISTS (SELECT 1 FROM vuln_kev WHERE cve_id = ?) OR EXISTS (SELECT 1 FROM vuln_exploit_cves WHERE cve_id = ?) THEN 1 ELSE 0 END)
			RETURNING id`
	sqlUpdateVuln = `UPDATE vulns SET has_nvd = 1, published = ?, last_modified = ?, severity = ?,
				title = COALESCE(NULLIF(?, ''), (SELECT name FROM vuln_kev WHERE cve_id = ?), ''), description = ?, doc = ?,
				is_kev = CASE WHEN ? = 1 OR EXISTS (SELECT 1 FROM vuln_kev WHERE cve_id = ?) THEN 1 ELSE 0 END,
				is_exploit = CASE WHEN ? = 1 OR EXISTS (SELECT 1 FROM vuln_kev WHERE cve_id = ?) OR EXISTS (SELECT 1 FROM vuln_exploit_cves WHERE cve_id = ?) THEN 1 ELSE 0 END
			WHERE id = ?`
	sqlDeleteVulnCPEs = `DELETE FROM vuln_cpes WHERE vuln_id = ?`
	sqlInsertVulnCPE  = `INSERT INTO vuln_cpes (cpe_key, published, vuln_id) VALUES (?, ?, ?)`
)

// prepareVulnWrite returns the writer of one changed CVE in tx: its row,
// then its CPE index rows.
func prepareVulnWrite(ctx context.Context, tx *store.Tx) (func(v vuln.Vulnerability, doc []byte, old storedVuln, ok bool) error, error) {
	var stmts [4]*sql.Stmt
	for i, q := range []string{sqlInsertVuln, sqlUpdateVuln, sqlDeleteVulnCPEs, sqlInsertVulnCPE} {
		st, err := tx.Prepared(ctx, q)
		if err != nil {
			return nil, err
		}
		stmts[i] = st
	}
	ins, upd, delCPE, addCPE := stmts[0], stmts[1], stmts[2], stmts[3]
	return func(v vuln.Vulnerability, doc []byte, old storedVuln, ok bool) error {
		pub, mod := store.Unix(v.Published), store.Unix(v.LastModified)
		kev := store.BoolInt(v.IsKEV)
		var id int64
		if ok {
			id = old.id
			if _, err := upd.ExecContext(ctx, pub, mod, v.Severity, v.Title, v.CVEID, v.Description, string(doc),
				kev, v.CVEID, kev, v.CVEID, v.CVEID, id); err != nil {
				return fmt.Errorf("update %s: %w", v.CVEID, err)
			}
			if _, err := delCPE.ExecContext(ctx, id); err != nil {
				return fmt.Errorf("update %s: %w", v.CVEID, err)
			}
		} else if err := ins.QueryRowContext(ctx, v.CVEID, pub, mod, v.Severity, v.Title, v.CVEID, v.Description, string(doc),
			kev, v.CVEID, kev, v.CVEID, v.CVEID).Scan(&id); err != nil {
			return fmt.Errorf("insert %s: %w", v.CVEID, err)
		}
		keys := make([]string, 0, len(v.CPEIDs))
		for _, c := range v.CPEIDs {
			if k, ok := CPEKey(c); ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range slices.Compact(keys) {
			if _, err := addCPE.ExecContext(ctx, k, pub, id); err != nil {
				return fmt.Errorf("index cpe of %s: %w", v.CVEID, err)
			}
		}
		return nil
	}, nil
}

// UpsertKEV stores a batch of CISA KEV entries and flags their CVEs as
// known exploited (creating the CVE's record, titled and described from
// the catalog, when no NVD record is stored yet).
func (s *Store) UpsertKEV(ctx context.Context, es []vuln.KEVEntry) (VulnStats, error) {
	var st VulnStats
	batch, folded := store.FirstBy(es, func(e vuln.KEVEntry) string { return e.CVEID })
	err := s.st.Tx(ctx, func(tx *store.Tx) error {
		if err := tx.Dialect().TakeTurns(ctx, tx, store.LockVulns); err != nil {
			return err
		}
		st = VulnStats{Unchanged: folded}
		existing := map[string][]byte{}
		ids := make([]string, len(batch))
		for i, e := range batch {
			ids[i] = e.CVEID
		}
		err := store.QueryIn(ctx, tx, `SELECT cve_id, doc FROM vuln_kev WHERE cve_id IN (%s)`, ids, func(rows *sql.Rows) error {
			var id string
			var doc []byte
			if err := rows.Scan(&id, &doc); err != nil {
				return err
			}
			existing[id] = doc
			return nil
		})
		if err != nil {
			return fmt.Errorf("load kev: %w", err)
		}
		docs := make([][]byte, len(batch))
		var touched []any
		for i, e := range batch {
			doc, err := json.Marshal(e)
			if err != nil {
				return fmt.Errorf("encode kev %s: %w", e.CVEID, err)
			}
			if old, ok := existing[e.CVEID]; !ok || !bytes.Equal(old, doc) {
				docs[i] = doc
				touched = append(touched, e.CVEID)
			}
		}
		// The catalog may title and describe the CVE's record: only where
		// the record has no title or no description yet, so the others'
		// text index entries stay as they are.
		reindex, err := s.untitledCVEs(ctx, tx, touched)
		if err != nil {
			return err
		}
		if err := s.vulnTextSync(ctx, tx, reindex, true); err != nil {
			return err
		}
		putKEV, err := tx.Prepared(ctx, `INSERT INTO vuln_kev (cve_id, date_added, due_date, required_action, name, doc) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (cve_id) DO UPDATE SET date_added = excluded.date_added, due_date = excluded.due_date,
			required_action = excluded.required_action, name = excluded.name, doc = excluded.doc`)
		if err != nil {
			return fmt.Errorf("store kev: %w", err)
		}
		flag, err := tx.Prepared(ctx, `INSERT INTO vulns (cve_id, title, description, is_kev, is_exploit) VALUES (?, ?, ?, 1, 1)
			ON CONFLICT (cve_id) DO UPDATE SET is_kev = 1, is_exploit = 1,
			title = CASE WHEN vulns.title = '' THEN excluded.title ELSE vulns.title END,
			description = CASE WHEN vulns.description = '' THEN excluded.description ELSE vulns.description END`)
		if err != nil {
			return fmt.Errorf("flag known exploited: %w", err)
		}
		for i, e := range batch {
			doc := docs[i]
			_, ok := existing[e.CVEID]
			if doc == nil {
				st.Unchanged++
				continue
			}
			if ok {
				st.Updated++
			} else {
				st.Inserted++
			}
			if _, err := putKEV.ExecContext(ctx, e.CVEID, store.Unix(e.DateAdded), store.Unix(e.DueDate), e.RequiredAction, e.VulnerabilityName, string(doc)); err != nil {
				return fmt.Errorf("store kev %s: %w", e.CVEID, err)
			}
			if _, err := flag.ExecContext(ctx, e.CVEID, e.VulnerabilityName, e.ShortDescription); err != nil {
				return fmt.Errorf("flag %s as known exploited: %w", e.CVEID, err)
			}
		}
		return s.vulnTextSync(ctx, tx, reindex, false)
	})
	if err != nil {
		return VulnStats{}, err
	}
	return st, nil
}

// untitledCVEs returns those of cves (CVE ids) whose text a KEV entry may
// set: not stored yet, or stored without a title or a description. Only
// SQLite, whose writers keep the text index, needs to know (nil
// otherwise).
func (s *Store) untitledCVEs(ctx context.Context, tx *store.Tx, cves []any) ([]any, error) {
	if !s.d.syncsTextIndex() || len(cves) == 0 {
		return nil, nil
	}
	ids, err := json.Marshal(cves)
	if err != nil {
		return nil, err
	}
	settled := map[string]bool{}
	rows, err := tx.Query(ctx, `SELECT cve_id FROM vulns WHERE cve_id IN (SELECT value FROM json_each(?)) AND title <> '' AND description <> ''`, string(ids))
	if err != nil {
		return nil, fmt.Errorf("load titled vulnerabilities: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		settled[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load titled vulnerabilities: %w", err)
	}
	var out []any
	for _, c := range cves {
		if !settled[c.(string)] {
			out = append(out, c)
		}
	}
	return out, nil
}

// UpsertEPSS stores a batch of EPSS scores; a score dated before the
// stored one is ignored.
func (s *Store) UpsertEPSS(ctx context.Context, es []vuln.EPSSScore) (VulnStats, error) {
	var st VulnStats
	batch, folded := store.FirstBy(es, func(e vuln.EPSSScore) string { return e.CVEID })
	type score struct {
		epss, pct float64
		date      int64
	}
	err := s.st.Tx(ctx, func(tx *store.Tx) error {
		if err := tx.Dialect().TakeTurns(ctx, tx, store.LockVulns); err != nil {
			return err
		}
		st = VulnStats{Unchanged: folded}
		existing := map[string]score{}
		ids := make([]string, len(batch))
		for i, e := range batch {
			ids[i] = e.CVEID
		}
		err := store.QueryIn(ctx, tx, `SELECT cve_id, epss, percentile, score_date FROM vuln_epss WHERE cve_id IN (%s)`, ids, func(rows *sql.Rows) error {
			var id string
			var sc score
			if err := rows.Scan(&id, &sc.epss, &sc.pct, &sc.date); err != nil {
				return err
			}
			existing[id] = sc
			return nil
		})
		if err != nil {
			return fmt.Errorf("load epss: %w", err)
		}
		put, err := tx.Prepared(ctx, `INSERT INTO vuln_epss (cve_id, epss, percentile, score_date) VALUES (?, ?, ?, ?)
			ON CONFLICT (cve_id) DO UPDATE SET epss = excluded.epss, percentile = excluded.percentile, score_date = excluded.score_date`)
		if err != nil {
			return err
		}
		for _, e := range batch {
			d := store.Unix(e.ScoreDate)
			old, ok := existing[e.CVEID]
			if ok && (d < old.date || old == score{e.EPSS, e.Percentile, d}) {
				st.Unchanged++
				continue
			}
			if ok {
				st.Updated++
			} else {
				st.Inserted++
			}
			if _, err := put.ExecContext(ctx, e.CVEID, e.EPSS, e.Percentile, d); err != nil {
				return fmt.Errorf("store epss %s: %w", e.CVEID, err)
			}
		}
		return nil
	})
	if err != nil {
		return VulnStats{}, err
	}
	return st, nil
}

// exploitDoc is the stored form of an exploit.
type exploitDoc struct {
	vuln.Exploit
	CVEs []string `json:"cves,omitempty"`
}

// UpsertExploits stores a batch of Exploit-DB records and flags their CVEs
// as having a public exploit.
func (s *Store) UpsertExploits(ctx context.Context, xs []vuln.Exploit) (VulnStats, error) {
	batch, folded := store.FirstBy(xs, func(x vuln.Exploit) int { return x.EDBID })
	return runUpsert(ctx, s, upsert[int, vuln.Exploit, storedExploit]{
		what: "exploits",
		key:  func(x vuln.Exploit) int { return x.EDBID },
		load: `SELECT edb_id, id, doc FROM vuln_exploits WHERE edb_id IN (%s)`,
		scan: func(rows *sql.Rows) (int, storedExploit, error) {
			var edb int
			var sx storedExploit
			err := rows.Scan(&edb, &sx.id, &sx.doc)
			return edb, sx, err
		},
		encode: encodeExploit,
		text: func(ctx context.Context, tx *store.Tx, keys []any, remove bool) error {
			return s.ftsSync(ctx, tx, "vuln_exploits", "title", "edb_id", keys, remove)
		},
		prepare: func(ctx context.Context, tx *store.Tx) (func(vuln.Exploit, []byte, storedExploit, bool) error, error) {
			return func(x vuln.Exploit, doc []byte, old storedExploit, ok bool) error {
				return writeExploit(ctx, tx, x, doc, old, ok)
			}, nil
		},
	}, batch, folded)
}

// storedExploit is what UpsertExploits reads of a stored exploit.
type storedExploit struct {
	id  int64
	doc []byte
}

// encodeExploit returns the stored document of x, nil when it is the
// same or a copy of the index older than the stored record (by
// date_updated).
func encodeExploit(x vuln.Exploit, old storedExploit, ok bool) ([]byte, error) {
	cves := slices.Clone(x.CVEIDs)
	slices.Sort(cves)
	doc, err := json.Marshal(exploitDoc{Exploit: x, CVEs: slices.Compact(cves)})
	if err != nil {
		return nil, fmt.Errorf("encode exploit %d: %w", x.EDBID, err)
	}
	if ok && bytes.Equal(old.doc, doc) {
		return nil, nil
	}
	if ok {
		var prev exploitDoc
		if json.Unmarshal(old.doc, &prev) == nil && x.DateUpdated.Before(prev.DateUpdated) {
			return nil, nil
		}
	}
	return doc, nil
}

// sqlUpsertExploit stores an exploit's row.
const sqlUpsertExploit = `INSERT INTO vuln_exploits (edb_id, cve_id, date_added, title, doc) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (edb_id) DO UPDATE SET cve_id = excluded.cve_id, date_added = excluded.date_added,
				title = excluded.title, doc = excluded.doc RETURNING id`

// writeExploit stores a changed exploit (stored: it replaces old) with its
// CVE links, and sets the exploit flag of every CVE it names or named.
func writeExploit(ctx context.Context, tx *store.Tx, x vuln.Exploit, doc []byte, old storedExploit, stored bool) error {
	cves := slices.Clone(x.CVEIDs)
	slices.Sort(cves)
	cves = slices.Compact(cves)
	added := x.DateAdded
	if added.IsZero() {
		added = x.DatePublished
	}
	var id int64
	if err := tx.QueryRow(ctx, sqlUpsertExploit, x.EDBID, x.CVEID, store.Unix(added), x.Title, string(doc)).Scan(&id); err != nil {
		return fmt.Errorf("store exploit %d: %w", x.EDBID, err)
	}
	touched := cves
	if stored {
		var prev exploitDoc
		if err := json.Unmarshal(old.doc, &prev); err == nil {
			touched = append(slices.Clone(cves), prev.CVEs...)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM vuln_exploit_cves WHERE exploit_id = ?`, id); err != nil {
			return fmt.Errorf("store exploit %d: %w", x.EDBID, err)
		}
	}
	for _, c := range cves {
		if _, err := tx.Exec(ctx, `INSERT INTO vuln_exploit_cves (cve_id, exploit_id) VALUES (?, ?)`, c, id); err != nil {
			return fmt.Errorf("link exploit %d to %s: %w", x.EDBID, c, err)
		}
	}
	for _, c := range touched {
		if _, err := tx.Exec(ctx, `UPDATE vulns SET is_exploit = CASE WHEN is_kev = 1
					OR EXISTS (SELECT 1 FROM vuln_exploit_cves WHERE cve_id = ?) THEN 1 ELSE 0 END WHERE cve_id = ?`, c, c); err != nil {
			return fmt.Errorf("flag %s: %w", c, err)
		}
	}
	return nil
}

// advisoryDoc is the stored form of an advisory.
type advisoryDoc struct {
	Advisory   json.RawMessage `json:"a"`
	CVSSVector string          `json:"cvss,omitempty"`
	CVSSScore  float64         `json:"score,omitempty"`
	Withdrawn  int64           `json:"withdrawn,omitempty"`
}

// UpsertAdvisories stores a batch of OSV advisories with their aliases
// and affected packages. An advisory modified before the stored version
// is ignored; the same advisory again changes nothing.
func (s *Store) UpsertAdvisories(ctx context.Context, as []vuln.Advisory) (VulnStats, error) {
	batch, folded := newestByKey(as, func(a vuln.Advisory) string { return a.ID },
		func(a, b vuln.Advisory) bool { return a.Modified.After(b.Modified) })
	return runUpsert(ctx, s, upsert[string, vuln.Advisory, storedAdvisory]{
		what: "advisories",
		key:  func(a vuln.Advisory) string { return a.ID },
		load: `SELECT adv_id, id, modified, doc FROM vuln_advisories WHERE adv_id IN (%s)`,
		scan: func(rows *sql.Rows) (string, storedAdvisory, error) {
			var id string
			var sa storedAdvisory
			err := rows.Scan(&id, &sa.id, &sa.modified, &sa.doc)
			return id, sa, err
		},
		encode: encodeAdvisory,
		text: func(ctx context.Context, tx *store.Tx, keys []any, remove bool) error {
			return s.ftsSync(ctx, tx, "vuln_advisories", "summary, details", "adv_id", keys, remove)
		},
		prepare: func(ctx context.Context, tx *store.Tx) (func(vuln.Advisory, []byte, storedAdvisory, bool) error, error) {
			return func(a vuln.Advisory, doc []byte, _ storedAdvisory, ok bool) error {
				return writeAdvisory(ctx, tx, a, doc, ok)
			}, nil
		},
	}, batch, folded)
}

// storedAdvisory is what UpsertAdvisories reads of a stored advisory.
type storedAdvisory struct {
	id       int64
	modified int64
	doc      []byte
}

// encodeAdvisory returns the stored document of a, nil when a was modified
// before the stored version or is the same.
func encodeAdvisory(a vuln.Advisory, old storedAdvisory, ok bool) ([]byte, error) {
	raw, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("encode advisory %s: %w", a.ID, err)
	}
	doc, err := json.Marshal(advisoryDoc{Advisory: raw, CVSSVector: a.CVSSVector, CVSSScore: a.CVSSScore, Withdrawn: store.Unix(a.Withdrawn)})
	if err != nil {
		return nil, fmt.Errorf("encode advisory %s: %w", a.ID, err)
	}
	if ok && (store.Unix(a.Modified) < old.modified || bytes.Equal(doc, old.doc)) {
		return nil, nil
	}
	return doc, nil
}

// sqlUpsertAdvisory stores an advisory's row.
const sqlUpsertAdvisory = `INSERT INTO vuln_advisories (adv_id, source, published, modified, severity, summary, details, doc)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (adv_id) DO UPDATE SET source = excluded.source, published = excluded.published, modified = excluded.modified,
				severity = excluded.severity, summary = excluded.summary, details = excluded.details, doc = excluded.doc RETURNING id`

// writeAdvisory stores a changed advisory (stored: it replaces one) with
// its aliases and affected packages.
func writeAdvisory(ctx context.Context, tx *store.Tx, a vuln.Advisory, doc []byte, stored bool) error {
	var id int64
	if err := tx.QueryRow(ctx, sqlUpsertAdvisory,
		a.ID, strings.ToLower(a.Source), store.Unix(a.Published), store.Unix(a.Modified), a.Severity, a.Summary, a.Details, string(doc)).Scan(&id); err != nil {
		return fmt.Errorf("store advisory %s: %w", a.ID, err)
	}
	if stored {
		for _, q := range []string{`DELETE FROM vuln_advisory_aliases WHERE advisory_id = ?`, `DELETE FROM vuln_advisory_packages WHERE advisory_id = ?`} {
			if _, err := tx.Exec(ctx, q, id); err != nil {
				return fmt.Errorf("store advisory %s: %w", a.ID, err)
			}
		}
	}
	aliases := slices.Clone(a.Aliases)
	slices.Sort(aliases)
	for _, al := range slices.Compact(aliases) {
		if al == "" || al == a.ID {
			continue
		}
		if _, err := tx.Exec(ctx, `INSERT INTO vuln_advisory_aliases (alias, advisory_id) VALUES (?, ?)`, al, id); err != nil {
			return fmt.Errorf("store alias %s of %s: %w", al, a.ID, err)
		}
	}
	type pkg struct{ eco, name string }
	pkgs := map[pkg]bool{}
	for _, af := range a.Affected {
		p := pkg{strings.ToLower(af.Ecosystem), strings.ToLower(af.Name)}
		if p.eco == "" || p.name == "" || pkgs[p] {
			continue
		}
		pkgs[p] = true
		base, _, _ := strings.Cut(p.eco, ":")
		if _, err := tx.Exec(ctx, `INSERT INTO vuln_advisory_packages (ecosystem, ecosystem_base, name, advisory_id) VALUES (?, ?, ?, ?)`,
			p.eco, base, p.name, id); err != nil {
			return fmt.Errorf("store package %s/%s of %s: %w", p.eco, p.name, a.ID, err)
		}
	}
	return nil
}

// vulnTextSync keeps SQLite's vulns_search_fts (migration 19) in step with
// vulns for the CVEs cves: remove (before the rows change) takes their
// current text out with FTS5's 'delete' command, add (after) indexes their
// text. Each is one statement for the whole batch (the ids in one JSON
// array), in rowid order: FTS5 writes its pending terms out as a new
// segment at every statement, and whenever a rowid is lower than the last,
// and each segment costs merging later.
func (s *Store) vulnTextSync(ctx context.Context, tx *store.Tx, cves []any, remove bool) error {
	if !s.d.syncsTextIndex() || len(cves) == 0 {
		return nil
	}
	ids, err := json.Marshal(cves)
	if err != nil {
		return err
	}
	q := `INSERT INTO vulns_search_fts (rowid, title, description) SELECT ` + vulnKey + ` AS k, title, description FROM vulns
		WHERE cve_id IN (SELECT value FROM json_each(?)) ORDER BY k`
	if remove {
		q = `INSERT INTO vulns_search_fts (vulns_search_fts, rowid, title, description) SELECT 'delete', ` + vulnKey + ` AS k, title, description FROM vulns
		WHERE cve_id IN (SELECT value FROM json_each(?)) ORDER BY k`
	}
	if _, err := tx.Exec(ctx, q, string(ids)); err != nil {
		return fmt.Errorf("update vulns text index: %w", err)
	}
	return nil
}

// ftsSync keeps a SQLite external-content FTS5 index in step with its
// table, one statement per chunk of rows: remove (before the rows change)
// takes the rows' current text out, add (after) indexes their new text.
// PostgreSQL maintains its generated tsvector columns itself.
func (s *Store) ftsSync(ctx context.Context, tx *store.Tx, table, cols, key string, keys []any, remove bool) error {
	if !s.d.syncsTextIndex() {
		return nil
	}
	for c := range slices.Chunk(keys, vulnChunk) {
		q := `INSERT INTO ` + table + `_fts (rowid, ` + cols + `) SELECT id, ` + cols + ` FROM ` + table + ` WHERE ` + key + ` IN (` + store.Placeholders(len(c)) + `)`
		if remove {
			q = `INSERT INTO ` + table + `_fts (` + table + `_fts, rowid, ` + cols + `) SELECT 'delete', id, ` + cols + ` FROM ` + table + ` WHERE ` + key + ` IN (` + store.Placeholders(len(c)) + `)`
		}
		if _, err := tx.Exec(ctx, q, c...); err != nil {
			return fmt.Errorf("update %s text index: %w", table, err)
		}
	}
	return nil
}
