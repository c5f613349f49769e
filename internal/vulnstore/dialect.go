package vulnstore

import (
	"strconv"
	"strings"

	"github.com/periscope-oss/periscope/internal/store"
)

// dialect is how the vulnerability tables' full-text search and upkeep
// differ by engine: SQLite keeps FTS5 tables that the writers update
// (external-content vuln_exploits_fts and vuln_advisories_fts, migration
// 2; for the vulnerabilities the contentless, date-ordered
// vulns_search_fts, migration 19), PostgreSQL generated tsvector columns
// with GIN indexes, and for the vulnerabilities a narrow copy
// (vulns_search, migration 16) kept by a trigger, on which the unfiltered
// search ranks.
type dialect interface {
	// textWord is one word of a full-text query, a prefix when star is "*".
	textWord(w, star string) string
	// textAll joins words that must all match; textAny phrases of which
	// one must.
	textAll(words []string) string
	textAny(parts []string) string
	// textMatch is the condition that row alias t of table (vulns,
	// vuln_exploits, vuln_advisories) matches the full-text query bound to
	// its one ?.
	textMatch(table, t string) string
	// windowMatch is the condition that row alias t of table matches the
	// text query (its first argument), with any further arguments; when
	// unfiltered, it may cut the matches to the newest rankWindow itself.
	windowMatch(table, t string, unfiltered bool) (string, []any)
	// syncsTextIndex says whether writers update the text index themselves.
	syncsTextIndex() bool
	// optimize refreshes what the planner knows after a bulk load.
	optimize() string
}

func dialectOf(d store.Dialect) dialect {
	if d.Name() == "postgres" {
		return pgDialect{}
	}
	return sqliteDialect{}
}

type sqliteDialect struct{}

func (sqliteDialect) textWord(w, star string) string { return `"` + w + `"` + star }
func (sqliteDialect) textAll(words []string) string  { return strings.Join(words, " ") }
func (sqliteDialect) textAny(parts []string) string  { return strings.Join(parts, " OR ") }

// textMatch: the unary + keeps SQLite from driving the query from the
// matches (every match of a common word looked up in the table): it walks
// the date window and probes the match set instead.
func (sqliteDialect) textMatch(table, t string) string {
	if table == "vulns" {
		return "+" + t + ".id IN (SELECT rowid & " + vulnKeyID + " FROM vulns_search_fts WHERE vulns_search_fts MATCH ?)"
	}
	return "+" + t + ".id IN (SELECT rowid FROM " + table + "_fts WHERE " + table + "_fts MATCH ?)"
}

// vulnKey is the rowid of a CVE in vulns_search_fts (migration 19),
// computed from a row of vulns: its publication date (clamped to
// 0..2^32-1) above its id, so rowid order is (published, id) order.
// rowid & vulnKeyID is the id again.
const (
	vulnKey   = "((MIN(MAX(published, 0), 4294967295) << 31) | id)"
	vulnKeyID = "2147483647"
)

// vulnMatchSince is textMatch for vulns with a second argument, the
// vulnKeyFrom of a date: only the matches published since then are read
// from the index (its rowids are in date order).
func (sqliteDialect) vulnMatchSince(t string) string {
	return "+" + t + ".id IN (SELECT rowid & " + vulnKeyID + " FROM vulns_search_fts WHERE vulns_search_fts MATCH ? AND rowid >= ?)"
}

// vulnKeyFrom is the lowest vulns_search_fts rowid of the CVEs published
// at or after unix (seconds), clamped as vulnKey clamps.
func vulnKeyFrom(unix int64) int64 {
	return min(max(unix, 0), 1<<32-1) << 31
}

// windowMatch: unfiltered, the newest rankWindow vulnerability matches
// come straight from vulns_search_fts, whose rowids are in date order.
func (d sqliteDialect) windowMatch(table, t string, unfiltered bool) (string, []any) {
	if table == "vulns" && unfiltered {
		return t + ".id IN (SELECT rowid & " + vulnKeyID + " FROM vulns_search_fts WHERE vulns_search_fts MATCH ? ORDER BY rowid DESC LIMIT " + strconv.Itoa(rankWindow) + ")", nil
	}
	return d.textMatch(table, t), nil
}

func (sqliteDialect) syncsTextIndex() bool { return true }
func (sqliteDialect) optimize() string     { return `PRAGMA optimize` }

type pgDialect struct{}

func (pgDialect) textWord(w, star string) string { return w + strings.ReplaceAll(star, "*", ":*") }
func (pgDialect) textAll(words []string) string  { return strings.Join(words, " & ") }
func (pgDialect) textAny(parts []string) string  { return strings.Join(parts, " | ") }

func (pgDialect) textMatch(_, t string) string {
	return t + ".tsv @@ to_tsquery('english', ?)"
}

// windowMatch: unfiltered, the newest rankWindow vulnerability matches
// are chosen on the narrow rows of vulns_search (migration 16): a common
// word's matches in vulns are one heap page each.
func (d pgDialect) windowMatch(table, t string, unfiltered bool) (string, []any) {
	if table == "vulns" && unfiltered {
		return t + ".id IN (SELECT id FROM vulns_search WHERE tsv @@ to_tsquery('english', ?) ORDER BY published DESC, id DESC LIMIT " + strconv.Itoa(rankWindow) + ")", nil
	}
	return d.textMatch(table, t), nil
}

func (pgDialect) syncsTextIndex() bool { return false }

// optimize is a VACUUM (ANALYZE): statistics and the visibility map that
// lets counts be index-only (deployments with autovacuum off get nothing
// else).
func (pgDialect) optimize() string {
	return `VACUUM (ANALYZE) vulns, vulns_search, vuln_cpes, vuln_kev, vuln_epss, vuln_exploits, vuln_exploit_cves,
			vuln_advisories, vuln_advisory_aliases, vuln_advisory_packages`
}
