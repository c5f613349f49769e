package vulnstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/vuln"
)

// VulnFilter selects feed items. Conditions are ANDed, except that IDs
// and Terms are alternatives: an item matches when it has one of the IDs
// (whatever its date), or when it is in the window and matches one of the
// Terms. With neither, every item in the window matches.
type VulnFilter struct {
	// Cutoff is the start of the window (Unix seconds): vulnerabilities
	// and advisories published, exploits added, at or after it.
	Cutoff int64
	// IDs are exact CVE, advisory or EDB-… ids, as vuln.CanonicalID gives.
	IDs []string
	// Terms are free-text keywords (full-text, prefix matching). A term
	// that is an advisory id stored in the database (of any database,
	// in any of the spellings idSpellings tries) or has a known
	// database's prefix is taken as an id instead.
	Terms []string
	// Source, Ecosystem and Package (a name within Ecosystem) select items
	// linked to a matching advisory (vulnerabilities and exploits through
	// the CVEs the advisory aliases).
	Source, Ecosystem, Package string
	// Severity, KEV and Exploit select items about a CVE with that
	// severity (advisories: their own severity), in CISA KEV, or with a
	// known exploit.
	Severity     string
	KEV, Exploit bool
	Limit        int
	Offset       int
}

// VulnSearch is a ranked search of one kind of record.
type VulnSearch struct {
	// Query is an id (exact), a CPE string (vulnerabilities and
	// advisories: match on part, vendor and product) or free text.
	Query              string
	Ecosystem, Package string
	Limit              int
}

// ftsTerms splits free text into lower-case words of letters and digits,
// at most 16.
func ftsTerms(s string) []string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	if len(words) > 16 {
		words = words[:16]
	}
	for i, w := range words {
		// 64 characters, not bytes: a cut inside a character is invalid
		// UTF-8, which PostgreSQL refuses.
		if r := []rune(w); len(r) > 64 {
			words[i] = string(r[:64])
		}
	}
	return words
}

// HasSearchableText reports whether s has a word full-text search can use.
func HasSearchableText(s string) bool { return len(ftsTerms(s)) > 0 }

// ftsQuery builds the engine's full-text query: each phrase's words ANDed,
// its last word matched as a prefix, phrases ORed. ok is false when no word is left.
func (s *Store) ftsQuery(phrases []string) (string, bool) {
	var parts []string
	for _, p := range phrases {
		words := ftsTerms(p)
		if len(words) == 0 {
			continue
		}
		// Whole words, the last one also as a prefix (as typed so far):
		// prefixes of every word would rank far larger match sets.
		for i, w := range words {
			star := ""
			if i == len(words)-1 {
				star = "*"
			}
			words[i] = s.d.textWord(w, star)
		}
		parts = append(parts, "("+s.d.textAll(words)+")")
	}
	if len(parts) == 0 {
		return "", false
	}
	return s.d.textAny(parts), true
}

// textMatch returns the condition that row alias t of table (vulns,
// vuln_exploits, vuln_advisories) matches the full-text query q.
func (s *Store) textMatch(table, t string) string { return s.d.textMatch(table, t) }

// where accumulates ANDed conditions and their arguments.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

func (w *where) String() string {
	if len(w.conds) == 0 {
		return "1=1"
	}
	return strings.Join(w.conds, " AND ")
}

// advisoryLink returns the condition that an advisory a matches the
// source, ecosystem and package of f, or "" when f has none of them.
func advisoryLink(f VulnFilter, a string) (string, []any) {
	var conds []string
	var args []any
	if f.Source != "" {
		conds = append(conds, a+".source = ?")
		args = append(args, strings.ToLower(f.Source))
	}
	if f.Ecosystem != "" || f.Package != "" {
		c := "EXISTS (SELECT 1 FROM vuln_advisory_packages p WHERE p.advisory_id = " + a + ".id"
		if f.Ecosystem != "" {
			eco := strings.ToLower(f.Ecosystem)
			c += " AND (p.ecosystem = ? OR p.ecosystem_base = ?)"
			args = append(args, eco, eco)
		}
		if f.Package != "" {
			c += " AND p.name = ?"
			args = append(args, strings.ToLower(f.Package))
		}
		conds = append(conds, c+")")
	}
	return strings.Join(conds, " AND "), args
}

func splitIDs(ids []string) (cves, advs []string, edbs []any) {
	for _, id := range ids {
		switch {
		case vuln.IsCVE(id):
			cves = append(cves, id)
		case strings.HasPrefix(id, "EDB-"):
			if n, err := strconv.Atoi(id[4:]); err == nil {
				edbs = append(edbs, n)
			}
		default:
			advs = append(advs, id)
		}
	}
	return cves, advs, edbs
}

// feedCVEs resolves the ids of a feed to CVE ids, as the searches do: a
// CVE is itself; an advisory id (stored as an advisory or as one's alias)
// gives the CVEs its advisory aliases; with exploits, an EDB id gives the
// CVEs its exploit references.
func (s *Store) feedCVEs(ctx context.Context, ids []string, exploits bool) ([]string, error) {
	cves, advs, edbs := splitIDs(ids)
	var linked []string
	if len(advs) > 0 {
		ph, a := store.Placeholders(len(advs)), strArgs(advs)
		err := s.collect(ctx, &linked, `SELECT aa.alias FROM vuln_advisory_aliases aa JOIN vuln_advisories a ON a.id = aa.advisory_id WHERE a.adv_id IN (`+ph+`)
			UNION SELECT alias FROM vuln_advisory_aliases WHERE advisory_id IN (SELECT advisory_id FROM vuln_advisory_aliases WHERE alias IN (`+ph+`))`,
			append(a, a...)...)
		if err != nil {
			return nil, err
		}
	}
	if exploits && len(edbs) > 0 {
		err := s.collect(ctx, &linked, `SELECT ec.cve_id FROM vuln_exploit_cves ec JOIN vuln_exploits x ON x.id = ec.exploit_id WHERE x.edb_id IN (`+store.Placeholders(len(edbs))+`)`, edbs...)
		if err != nil {
			return nil, err
		}
	}
	for _, id := range linked {
		if vuln.IsCVE(id) {
			cves = append(cves, id)
		}
	}
	slices.Sort(cves)
	return slices.Compact(cves), nil
}

// intArgs passes row ids (collected as text) back as integers.
func intArgs(ss []string) []any {
	out := make([]any, 0, len(ss))
	for _, v := range ss {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			out = append(out, n)
		}
	}
	return out
}

func strArgs(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// matchClause returns the IDs-or-window-and-terms condition of f for a
// table: idCond builds the id alternative (nil when f has no ids).
func (s *Store) matchClause(f VulnFilter, table, t, dateCol string, idCond func() (string, []any)) (string, []any, error) {
	window := t + "." + dateCol + " >= ?"
	wargs := []any{f.Cutoff}
	if len(f.Terms) > 0 {
		q, ok := s.ftsQuery(f.Terms)
		if !ok {
			return "", nil, periscope.Errorf(periscope.EInvalid, "keywords must contain letters or digits.")
		}
		if sq, ok := s.d.(sqliteDialect); ok && table == "vulns" {
			// The window bounds the FTS5 rowids too: only the matches
			// published since the cutoff are read.
			window += " AND " + sq.vulnMatchSince(t)
			wargs = append(wargs, q, vulnKeyFrom(f.Cutoff))
		} else {
			window += " AND " + s.textMatch(table, t)
			wargs = append(wargs, q)
		}
	}
	if len(f.IDs) == 0 {
		return window, wargs, nil
	}
	ic, iargs := idCond()
	if len(f.Terms) == 0 {
		return ic, iargs, nil
	}
	return "((" + ic + ") OR (" + window + "))", append(iargs, wargs...), nil
}

// FeedVulns returns a page of the vulnerabilities f selects, newest first,
// and how many there are.
func (s *Store) FeedVulns(ctx context.Context, f VulnFilter) ([]vuln.Vulnerability, int, error) {
	f, err := s.resolveFeedIDs(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	// Ids are resolved to CVEs first: one IN list keeps the plan an index
	// lookup on both engines (an OR with a subquery is a scan on PostgreSQL).
	cves, err := s.feedCVEs(ctx, f.IDs, true)
	if err != nil {
		return nil, 0, err
	}
	m, margs, err := s.matchClause(f, "vulns", "v", "published", func() (string, []any) {
		return "v.cve_id IN (" + store.Placeholders(len(cves)) + ")", strArgs(cves)
	})
	if err != nil {
		return nil, 0, err
	}
	var w where
	w.add(m, margs...)
	s.vulnFilters(&w, f)
	return pageRows(s, ctx, "vulns v", "v.id", `SELECT `+vulnCols+` FROM vulns v`+vulnJoins, w,
		"v.published DESC, v.id DESC", len(f.Terms) > 0, f.Limit, f.Offset, s.scanVulns)
}

// pageRows is a page of a feed listing and its total: the rows of table
// ("vulns v") that w selects, in order, read by read (a SELECT up to its
// WHERE) and scan. With text terms (text) the full-text match is run once
// and paged by pageText; otherwise the rows are counted, then read with
// LIMIT and OFFSET.
func pageRows[T any](s *Store, ctx context.Context, table, idCol, read string, w where, order string, text bool, limit, offset int,
	scan func(context.Context, string, ...any) ([]T, error)) ([]T, int, error) {
	if text {
		ids, total, err := s.pageText(ctx, table, idCol, w, order, limit, offset)
		if err != nil || len(ids) == 0 {
			return []T{}, total, err
		}
		rows, err := scan(ctx, read+` WHERE `+idCol+` IN (`+store.Placeholders(len(ids))+`) ORDER BY `+order, ids...)
		return rows, total, err
	}
	var total int
	if err := s.queryRow(ctx, `SELECT COUNT(*) FROM `+table+` WHERE `+w.String(), w.args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count %s: %w", strings.Fields(table)[0], err)
	}
	if total == 0 || offset >= total {
		return []T{}, total, nil
	}
	rows, err := scan(ctx, read+` WHERE `+w.String()+` ORDER BY `+order+` LIMIT ? OFFSET ?`, append(slices.Clone(w.args), limit, offset)...)
	return rows, total, err
}

// pageText returns the ids of a page of the rows of from (a table and its
// alias) meeting w, which holds a text match, and their total. The matches
// of a text search are few, so one query finds the page's ids and the total
// (COUNT(*) OVER ()), and the full-text match is evaluated once, not once
// to count and again to page. Past the last page the total is counted.
func (s *Store) pageText(ctx context.Context, from, idCol string, w where, order string, limit, offset int) ([]any, int, error) {
	rows, err := s.query(ctx, `SELECT `+idCol+`, COUNT(*) OVER () FROM `+from+` WHERE `+w.String()+` ORDER BY `+order+` LIMIT ? OFFSET ?`,
		append(slices.Clone(w.args), limit, offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("search %s: %w", from, err)
	}
	var ids []any
	total := 0
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id, &total); err != nil {
			rows.Close()
			return nil, 0, fmt.Errorf("search %s: %w", from, err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("search %s: %w", from, err)
	}
	if len(ids) == 0 && offset > 0 {
		if err := s.queryRow(ctx, `SELECT COUNT(*) FROM `+from+` WHERE `+w.String(), w.args...).Scan(&total); err != nil {
			return nil, 0, fmt.Errorf("count %s: %w", from, err)
		}
	}
	return ids, total, nil
}

// collect appends the first column of every row of q to dst.
func (s *Store) collect(ctx context.Context, dst *[]string, q string, args ...any) error {
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("resolve ids: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return fmt.Errorf("resolve ids: %w", err)
		}
		*dst = append(*dst, v)
	}
	return rows.Err()
}

func (s *Store) vulnFilters(w *where, f VulnFilter) {
	if f.Severity != "" {
		w.add("v.severity = ?", f.Severity)
	}
	if f.KEV {
		w.add("v.is_kev = 1")
	}
	if f.Exploit {
		w.add("v.is_exploit = 1")
	}
	if c, args := advisoryLink(f, "a"); c != "" {
		w.add("EXISTS (SELECT 1 FROM vuln_advisory_aliases aa JOIN vuln_advisories a ON a.id = aa.advisory_id WHERE aa.alias = v.cve_id AND "+c+")", args...)
	}
}

const vulnCols = `v.cve_id, v.published, v.last_modified, v.severity, v.is_kev, v.is_exploit, v.title, v.description, v.doc,
	COALESCE(k.date_added, 0), COALESCE(k.due_date, 0), COALESCE(k.required_action, ''), COALESCE(e.epss, 0), COALESCE(e.percentile, 0)`

const vulnJoins = ` LEFT JOIN vuln_kev k ON k.cve_id = v.cve_id LEFT JOIN vuln_epss e ON e.cve_id = v.cve_id`

func (s *Store) scanVulns(ctx context.Context, q string, args ...any) ([]vuln.Vulnerability, error) {
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list vulnerabilities: %w", err)
	}
	defer rows.Close()
	out := []vuln.Vulnerability{}
	for rows.Next() {
		var v vuln.Vulnerability
		var pub, mod, kevAdd, kevDue int64
		var isKEV, isExploit int
		var doc []byte
		var kevAction string
		if err := rows.Scan(&v.CVEID, &pub, &mod, &v.Severity, &isKEV, &isExploit, &v.Title, &v.Description, &doc,
			&kevAdd, &kevDue, &kevAction, &v.EPSSScore, &v.EPSSPercentile); err != nil {
			return nil, fmt.Errorf("list vulnerabilities: %w", err)
		}
		var d nvdDoc
		if err := json.Unmarshal(doc, &d); err != nil {
			return nil, fmt.Errorf("decode %s: %w", v.CVEID, err)
		}
		v.Published, v.LastModified = store.FromUnix(pub), store.FromUnix(mod)
		v.IsKEV, v.IsExploitAvailable = isKEV == 1, isExploit == 1
		v.CVSSV3Score, v.CVSSV3Vector = d.CVSSV3Score, d.CVSSV3Vector
		v.CVSSV2Score, v.CVSSV2Vector = d.CVSSV2Score, d.CVSSV2Vector
		v.CVSSV4Score, v.CVSSV4Vector = d.CVSSV4Score, d.CVSSV4Vector
		v.CWEs, v.CPEIDs, v.References = d.CWEs, d.CPEIDs, d.References
		v.VulnStatus, v.SourceIdentifier = d.VulnStatus, d.SourceIdentifier
		// The catalog is the authority on KEV dates; NVD copies them.
		v.CISAExploitAdd, v.CISAActionDue, v.CISARequiredAction = store.FromUnix(d.CISAExploitAdd), store.FromUnix(d.CISAActionDue), d.CISARequiredAction
		if kevAdd != 0 {
			v.CISAExploitAdd, v.CISAActionDue, v.CISARequiredAction = store.FromUnix(kevAdd), store.FromUnix(kevDue), kevAction
		}
		if pub == 0 && kevAdd != 0 {
			// Known only from KEV (no NVD record loaded): the catalog's
			// dateAdded is the one date the service has for the CVE, so
			// it is the publication and modification date; the severity
			// stays unknown (KEV has no CVSS), see docs/ingest.md.
			v.Published, v.LastModified = v.CISAExploitAdd, v.CISAExploitAdd
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list vulnerabilities: %w", err)
	}
	return out, s.linkAdvisories(ctx, out)
}

// linkAdvisories fills in the ids of the advisories aliasing each CVE.
func (s *Store) linkAdvisories(ctx context.Context, vs []vuln.Vulnerability) error {
	if len(vs) == 0 {
		return nil
	}
	idx := map[string]int{}
	args := make([]any, len(vs))
	for i, v := range vs {
		idx[v.CVEID] = i
		args[i] = v.CVEID
	}
	rows, err := s.query(ctx, `SELECT aa.alias, a.adv_id FROM vuln_advisory_aliases aa JOIN vuln_advisories a ON a.id = aa.advisory_id
		WHERE aa.alias IN (`+store.Placeholders(len(args))+`) ORDER BY a.adv_id`, args...)
	if err != nil {
		return fmt.Errorf("link advisories: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var alias, id string
		if err := rows.Scan(&alias, &id); err != nil {
			return fmt.Errorf("link advisories: %w", err)
		}
		v := &vs[idx[alias]]
		v.Advisories = append(v.Advisories, id)
	}
	return rows.Err()
}

// FeedExploits returns a page of the exploits f selects, newest first.
func (s *Store) FeedExploits(ctx context.Context, f VulnFilter) ([]vuln.Exploit, int, error) {
	f, err := s.resolveFeedIDs(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	_, _, edbs := splitIDs(f.IDs)
	cves, err := s.feedCVEs(ctx, f.IDs, false)
	if err != nil {
		return nil, 0, err
	}
	var rowIDs []string
	if len(f.IDs) > 0 {
		err := s.collect(ctx, &rowIDs, `SELECT CAST(id AS TEXT) FROM vuln_exploits WHERE edb_id IN (`+store.Placeholders(len(edbs))+`)
			UNION SELECT CAST(exploit_id AS TEXT) FROM vuln_exploit_cves WHERE cve_id IN (`+store.Placeholders(len(cves))+`)`, append(edbs, strArgs(cves)...)...)
		if err != nil {
			return nil, 0, err
		}
	}
	m, margs, err := s.matchClause(f, "vuln_exploits", "x", "date_added", func() (string, []any) {
		return "x.id IN (" + store.Placeholders(len(rowIDs)) + ")", intArgs(rowIDs)
	})
	if err != nil {
		return nil, 0, err
	}
	var w where
	w.add(m, margs...)
	s.exploitFilters(&w, f)
	return pageRows(s, ctx, "vuln_exploits x", "x.id", `SELECT x.doc FROM vuln_exploits x`, w,
		"x.date_added DESC, x.edb_id DESC", len(f.Terms) > 0, f.Limit, f.Offset, s.scanExploits)
}

func (s *Store) exploitFilters(w *where, f VulnFilter) {
	var vc []string
	var vargs []any
	if f.Severity != "" {
		vc = append(vc, "v.severity = ?")
		vargs = append(vargs, f.Severity)
	}
	if f.KEV {
		vc = append(vc, "v.is_kev = 1")
	}
	if len(vc) > 0 {
		w.add("EXISTS (SELECT 1 FROM vuln_exploit_cves ec JOIN vulns v ON v.cve_id = ec.cve_id WHERE ec.exploit_id = x.id AND "+strings.Join(vc, " AND ")+")", vargs...)
	}
	if c, args := advisoryLink(f, "a"); c != "" {
		w.add("EXISTS (SELECT 1 FROM vuln_exploit_cves ec JOIN vuln_advisory_aliases aa ON aa.alias = ec.cve_id JOIN vuln_advisories a ON a.id = aa.advisory_id WHERE ec.exploit_id = x.id AND "+c+")", args...)
	}
}

func (s *Store) scanExploits(ctx context.Context, q string, args ...any) ([]vuln.Exploit, error) {
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list exploits: %w", err)
	}
	defer rows.Close()
	out := []vuln.Exploit{}
	for rows.Next() {
		var doc []byte
		if err := rows.Scan(&doc); err != nil {
			return nil, fmt.Errorf("list exploits: %w", err)
		}
		var d exploitDoc
		if err := json.Unmarshal(doc, &d); err != nil {
			return nil, fmt.Errorf("decode exploit: %w", err)
		}
		d.Exploit.CVEIDs = d.CVEs
		out = append(out, d.Exploit)
	}
	return out, rows.Err()
}

// FeedAdvisories returns a page of the advisories f selects, newest first.
func (s *Store) FeedAdvisories(ctx context.Context, f VulnFilter) ([]vuln.Advisory, int, error) {
	f, err := s.resolveFeedIDs(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	var rowIDs []string
	if len(f.IDs) > 0 {
		ids := strArgs(f.IDs)
		err := s.collect(ctx, &rowIDs, `SELECT CAST(id AS TEXT) FROM vuln_advisories WHERE adv_id IN (`+store.Placeholders(len(ids))+`)
			UNION SELECT CAST(advisory_id AS TEXT) FROM vuln_advisory_aliases WHERE alias IN (`+store.Placeholders(len(ids))+`)`, append(ids, ids...)...)
		if err != nil {
			return nil, 0, err
		}
	}
	m, margs, err := s.matchClause(f, "vuln_advisories", "a", "published", func() (string, []any) {
		return "a.id IN (" + store.Placeholders(len(rowIDs)) + ")", intArgs(rowIDs)
	})
	if err != nil {
		return nil, 0, err
	}
	var w where
	w.add(m, margs...)
	s.advisoryFilters(&w, f)
	return pageRows(s, ctx, "vuln_advisories a", "a.id", `SELECT a.doc FROM vuln_advisories a`, w,
		"a.published DESC, a.id DESC", len(f.Terms) > 0, f.Limit, f.Offset, s.scanAdvisories)
}

func (s *Store) advisoryFilters(w *where, f VulnFilter) {
	if c, args := advisoryLink(f, "a"); c != "" {
		w.add(c, args...)
	}
	if f.Severity != "" {
		w.add("a.severity = ?", f.Severity)
	}
	var vc []string
	if f.KEV {
		vc = append(vc, "v.is_kev = 1")
	}
	if f.Exploit {
		vc = append(vc, "v.is_exploit = 1")
	}
	if len(vc) > 0 {
		w.add("EXISTS (SELECT 1 FROM vuln_advisory_aliases aa JOIN vulns v ON v.cve_id = aa.alias WHERE aa.advisory_id = a.id AND " + strings.Join(vc, " AND ") + ")")
	}
}

func (s *Store) scanAdvisories(ctx context.Context, q string, args ...any) ([]vuln.Advisory, error) {
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list advisories: %w", err)
	}
	defer rows.Close()
	out := []vuln.Advisory{}
	for rows.Next() {
		var doc []byte
		if err := rows.Scan(&doc); err != nil {
			return nil, fmt.Errorf("list advisories: %w", err)
		}
		var d advisoryDoc
		var a vuln.Advisory
		if err := json.Unmarshal(doc, &d); err != nil {
			return nil, fmt.Errorf("decode advisory: %w", err)
		}
		if err := json.Unmarshal(d.Advisory, &a); err != nil {
			return nil, fmt.Errorf("decode advisory: %w", err)
		}
		a.CVSSVector, a.CVSSScore, a.Withdrawn = d.CVSSVector, d.CVSSScore, store.FromUnix(d.Withdrawn)
		out = append(out, a)
	}
	return out, rows.Err()
}

// searchKind tells what a search query is: a CVE id; an advisory id
// stored in the database (as an advisory or an alias, whatever database
// publishes it), spelt as stored; an id of a known database that is not
// stored (which finds nothing); a CPE (key, "" when malformed); else text.
func (s *Store) searchKind(ctx context.Context, q string) (id string, cpe string, isID, isCPE bool, err error) {
	t := strings.TrimSpace(q)
	canon, known := vuln.CanonicalID(t)
	if known && vuln.IsCVE(canon) {
		return canon, "", true, false, nil
	}
	if !strings.HasPrefix(strings.ToLower(t), "cpe:") {
		stored, err := s.resolveIDs(ctx, []string{t})
		if err != nil {
			return "", "", false, false, err
		}
		if stored[0] != "" {
			return stored[0], "", true, false, nil
		}
	}
	if known {
		return canon, "", true, false, nil
	}
	if strings.HasPrefix(strings.ToLower(t), "cpe:") {
		// A malformed CPE gives an empty key, which callers report.
		key, _ := CPEKey(q)
		return "", key, false, true, nil
	}
	return "", "", false, false, nil
}

// aliasedCVEs selects the ids an advisory id (two arguments, both the id)
// aliases: through the advisory with that id, and through the advisories
// aliasing it.
const aliasedCVEs = `SELECT aa.alias FROM vuln_advisory_aliases aa JOIN vuln_advisories a ON a.id = aa.advisory_id WHERE a.adv_id = ?
	UNION SELECT alias FROM vuln_advisory_aliases WHERE advisory_id IN (SELECT advisory_id FROM vuln_advisory_aliases WHERE alias = ?)`

func errBadCPE(q string) error {
	return periscope.Errorf(periscope.EInvalid, "query looks like a CPE but does not name a part, vendor and product (e.g. cpe:2.3:a:apache:log4j): %q.", periscope.Clip(q, 64))
}

func textQuery(s *Store, q string) (string, error) {
	fq, ok := s.ftsQuery([]string{q})
	if !ok {
		return "", periscope.Errorf(periscope.EInvalid, "query must contain letters or digits.")
	}
	return fq, nil
}

// SearchVulns answers a vulnerability search: an id matches exactly (an
// advisory id gives the CVEs it aliases), a CPE matches the records whose
// criteria name the same part, vendor and product (versions are not
// compared), other text is full-text search ranked by relevance.
func (s *Store) SearchVulns(ctx context.Context, q VulnSearch) ([]vuln.Vulnerability, error) {
	f := VulnFilter{Ecosystem: q.Ecosystem, Package: q.Package}
	var w where
	from, fargs, order := "vulns v", []any(nil), "v.published DESC, v.id DESC"
	id, cpe, isID, isCPE, err := s.searchKind(ctx, q.Query)
	if err != nil {
		return nil, err
	}
	switch {
	case isID && vuln.IsCVE(id):
		w.add("v.cve_id = ?", id)
	case isID:
		w.add("v.cve_id IN ("+aliasedCVEs+")", id, id)
	case isCPE:
		if cpe == "" {
			return nil, errBadCPE(q.Query)
		}
		if q.Ecosystem != "" || q.Package != "" {
			w.add("v.id IN (SELECT vuln_id FROM vuln_cpes WHERE cpe_key = ?)", cpe)
		} else {
			// The newest matches straight from the index, however many
			// CVEs name the product.
			w.add("v.id IN (SELECT vuln_id FROM vuln_cpes WHERE cpe_key = ? ORDER BY published DESC, vuln_id DESC LIMIT ?)", cpe, q.Limit)
		}
	default:
		fq, err := textQuery(s, q.Query)
		if err != nil {
			return nil, err
		}
		var fw where
		s.vulnFilters(&fw, f)
		keys, err := s.rankedKeys(ctx, vulnRank, fq, q.Query, fw, q.Limit)
		if err != nil || len(keys) == 0 {
			return []vuln.Vulnerability{}, err
		}
		vs, err := s.scanVulns(ctx, `SELECT `+vulnCols+` FROM vulns v`+vulnJoins+` WHERE v.cve_id IN (`+store.Placeholders(len(keys))+`)`, anys(keys)...)
		return orderByKeys(vs, keys, func(v vuln.Vulnerability) string { return v.CVEID }), err
	}
	s.vulnFilters(&w, f)
	sq := `SELECT ` + vulnCols + ` FROM ` + from + vulnJoins + ` WHERE ` + w.String() + ` ORDER BY ` + order + ` LIMIT ?`
	return s.scanVulns(ctx, sq, append(append(fargs, w.args...), q.Limit)...)
}

// SearchAdvisories answers an advisory search: an id matches the advisory
// or those aliasing it, a CPE the advisories aliasing CVEs of that
// product, other text is ranked full-text search.
func (s *Store) SearchAdvisories(ctx context.Context, q VulnSearch) ([]vuln.Advisory, error) {
	f := VulnFilter{Ecosystem: q.Ecosystem, Package: q.Package}
	var w where
	from, fargs, order := "vuln_advisories a", []any(nil), "a.published DESC, a.id DESC"
	id, cpe, isID, isCPE, err := s.searchKind(ctx, q.Query)
	if err != nil {
		return nil, err
	}
	switch {
	case strings.TrimSpace(q.Query) == "":
		// A listing by ecosystem or package alone (the API requires one),
		// newest first.
	case isID:
		w.add("(a.adv_id = ? OR a.id IN (SELECT advisory_id FROM vuln_advisory_aliases WHERE alias = ?))", id, id)
	case isCPE:
		if cpe == "" {
			return nil, errBadCPE(q.Query)
		}
		w.add("a.id IN (SELECT aa.advisory_id FROM vuln_advisory_aliases aa JOIN vulns v ON v.cve_id = aa.alias JOIN vuln_cpes c ON c.vuln_id = v.id WHERE c.cpe_key = ?)", cpe)
	default:
		fq, err := textQuery(s, q.Query)
		if err != nil {
			return nil, err
		}
		var fw where
		s.advisoryFilters(&fw, f)
		keys, err := s.rankedKeys(ctx, advisoryRank, fq, q.Query, fw, q.Limit)
		if err != nil || len(keys) == 0 {
			return []vuln.Advisory{}, err
		}
		as, err := s.scanAdvisories(ctx, `SELECT a.doc FROM vuln_advisories a WHERE a.adv_id IN (`+store.Placeholders(len(keys))+`)`, anys(keys)...)
		return orderByKeys(as, keys, func(a vuln.Advisory) string { return a.ID }), err
	}
	s.advisoryFilters(&w, f)
	sq := `SELECT a.doc FROM ` + from + ` WHERE ` + w.String() + ` ORDER BY ` + order + ` LIMIT ?`
	return s.scanAdvisories(ctx, sq, append(append(fargs, w.args...), q.Limit)...)
}

// SearchExploits answers an exploit search: a CVE id gives its exploits,
// EDB-<n> or a bare number one exploit, other text ranked full-text search
// of the titles.
func (s *Store) SearchExploits(ctx context.Context, q VulnSearch) ([]vuln.Exploit, error) {
	f := VulnFilter{Ecosystem: q.Ecosystem, Package: q.Package}
	var w where
	from, fargs, order := "vuln_exploits x", []any(nil), "x.date_added DESC, x.edb_id DESC"
	t := strings.TrimSpace(q.Query)
	edb, numErr := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(strings.ToUpper(t), "EDB-ID:"), "EDB-"))
	// EDB-<n> and a bare number are exploit ids here, before any
	// advisory id.
	var id string
	var isID bool
	if numErr != nil || edb <= 0 {
		var err error
		if id, _, isID, _, err = s.searchKind(ctx, q.Query); err != nil {
			return nil, err
		}
	}
	switch {
	case numErr == nil && edb > 0:
		w.add("x.edb_id = ?", edb)
	case isID && vuln.IsCVE(id):
		w.add("x.id IN (SELECT exploit_id FROM vuln_exploit_cves WHERE cve_id = ?)", id)
	case isID:
		w.add("x.id IN (SELECT exploit_id FROM vuln_exploit_cves WHERE cve_id IN ("+aliasedCVEs+"))", id, id)
	default:
		fq, err := textQuery(s, q.Query)
		if err != nil {
			return nil, err
		}
		var fw where
		s.exploitFilters(&fw, f)
		keys, err := s.rankedKeys(ctx, exploitRank, fq, q.Query, fw, q.Limit)
		if err != nil || len(keys) == 0 {
			return []vuln.Exploit{}, err
		}
		edbs := make([]any, len(keys))
		for i, k := range keys {
			edbs[i], _ = strconv.Atoi(k)
		}
		xs, err := s.scanExploits(ctx, `SELECT x.doc FROM vuln_exploits x WHERE x.edb_id IN (`+store.Placeholders(len(keys))+`)`, edbs...)
		return orderByKeys(xs, keys, func(x vuln.Exploit) string { return strconv.Itoa(x.EDBID) }), err
	}
	s.exploitFilters(&w, f)
	sq := `SELECT x.doc FROM ` + from + ` WHERE ` + w.String() + ` ORDER BY ` + order + ` LIMIT ?`
	return s.scanExploits(ctx, sq, append(append(fargs, w.args...), q.Limit)...)
}

// OptimizeVulns refreshes what the query planner knows after a bulk load:
// on PostgreSQL a VACUUM (ANALYZE) of the vulnerability tables (statistics
// and the visibility map that lets counts be index-only; deployments with
// autovacuum off get nothing else), on SQLite PRAGMA optimize.
//
// On PostgreSQL it also puts vulns_search back in date order when a load
// left it out of order (the statistics' correlation of published with the
// heap order below clusterBelow): the text search walks the newest rows of
// vulns_search through its date index and reads every row it passes, one
// heap page each when the rows are scattered (5,400 pages for a common word
// at 300,000 CVEs loaded in no date order, 400 in date order). CLUSTER
// rewrites the narrow table and its indexes (3.7 s at 300,000 CVEs, during
// which searches wait); loads of new CVEs, which arrive newest last, keep
// the order, so it runs after a bulk load, not after every sync.
func (s *Store) OptimizeVulns(ctx context.Context) error {
	if _, err := s.st.Exec(ctx, s.d.optimize()); err != nil {
		return fmt.Errorf("optimize vulnerability tables: %w", err)
	}
	if _, ok := s.d.(pgDialect); !ok {
		return nil
	}
	var corr sql.NullFloat64
	err := s.st.DB().QueryRowContext(ctx, `SELECT correlation FROM pg_stats
		WHERE schemaname = current_schema() AND tablename = 'vulns_search' AND attname = 'published'`).Scan(&corr)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("optimize vulnerability tables: %w", err)
	}
	if !corr.Valid || corr.Float64 >= clusterBelow {
		return nil
	}
	if _, err := s.st.DB().ExecContext(ctx, `CLUSTER vulns_search USING vulns_search_published`); err != nil {
		return fmt.Errorf("optimize vulnerability tables: order vulns_search by date: %w", err)
	}
	if _, err := s.st.DB().ExecContext(ctx, `ANALYZE vulns_search`); err != nil {
		return fmt.Errorf("optimize vulnerability tables: %w", err)
	}
	return nil
}

// clusterBelow is the correlation of vulns_search's dates with its heap
// order under which OptimizeVulns rewrites it in date order.
const clusterBelow = 0.9

// VulnCounts reports how many records of each kind are stored.
type VulnCounts struct {
	Vulnerabilities, Advisories, Exploits, KEV, EPSS int
}

// CountVulns counts the stored records.
func (s *Store) CountVulns(ctx context.Context) (VulnCounts, error) {
	var c VulnCounts
	err := s.queryRow(ctx, `SELECT (SELECT COUNT(*) FROM vulns), (SELECT COUNT(*) FROM vuln_advisories), (SELECT COUNT(*) FROM vuln_exploits),
		(SELECT COUNT(*) FROM vuln_kev), (SELECT COUNT(*) FROM vuln_epss)`).Scan(&c.Vulnerabilities, &c.Advisories, &c.Exploits, &c.KEV, &c.EPSS)
	if err != nil {
		return c, fmt.Errorf("count vulnerability records: %w", err)
	}
	return c, nil
}

// SyncState is the stored state of one upstream feed of the scheduled sync.
type SyncState struct {
	Source       string
	URL          string
	ETag         string
	LastModified string
	LastAttempt  int64
	LastSuccess  int64
	LastError    string
	Records      int64
}

// VulnSyncStates returns the sync state of every source, by source name.
func (s *Store) VulnSyncStates(ctx context.Context) (map[string]SyncState, error) {
	rows, err := s.query(ctx, `SELECT source, url, etag, last_modified, last_attempt, last_success, last_error, records FROM vuln_sync`)
	if err != nil {
		return nil, fmt.Errorf("read sync state: %w", err)
	}
	defer rows.Close()
	out := map[string]SyncState{}
	for rows.Next() {
		var st SyncState
		if err := rows.Scan(&st.Source, &st.URL, &st.ETag, &st.LastModified, &st.LastAttempt, &st.LastSuccess, &st.LastError, &st.Records); err != nil {
			return nil, fmt.Errorf("read sync state: %w", err)
		}
		out[st.Source] = st
	}
	return out, rows.Err()
}

// PutVulnSyncState stores the sync state of a source.
func (s *Store) PutVulnSyncState(ctx context.Context, st SyncState) error {
	_, err := s.exec(ctx, `INSERT INTO vuln_sync (source, url, etag, last_modified, last_attempt, last_success, last_error, records)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (source) DO UPDATE SET url = excluded.url, etag = excluded.etag,
		last_modified = excluded.last_modified, last_attempt = excluded.last_attempt, last_success = excluded.last_success,
		last_error = excluded.last_error, records = excluded.records`,
		st.Source, st.URL, st.ETag, st.LastModified, st.LastAttempt, st.LastSuccess, st.LastError, st.Records)
	if err != nil {
		return fmt.Errorf("store sync state of %s: %w", st.Source, err)
	}
	return nil
}
