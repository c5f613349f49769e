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
	// rankedSource is the FROM clause of a ranked full-text search of
	// table as alias t, its arguments and the ORDER BY.
	rankedSource(table, t, fq string, filtered bool, limit int) (string, []any, string)
	// textCond is the WHERE condition rankedSource needs ("" for none).
	textCond(table, t string, filtered bool) string
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

// rankedSource ranks the FTS5 table first (bm25, title weighted 10:1) and,
// when nothing else filters, cuts it to limit before the join, so a common
// word never joins every match. For the vulnerabilities, when nothing else
// filters, only the newest rankWindow matches are ranked, as on
// PostgreSQL: vulns_search_fts's rowids are in date order, so FTS5 walks
// the matches from the newest end and stops there (bm25 of every match of
// a common word was most of the search's time).
func (sqliteDialect) rankedSource(table, t, fq string, filtered bool, limit int) (string, []any, string) {
	if table == "vulns" {
		inner := "SELECT rowid & " + vulnKeyID + " AS rid, bm25(vulns_search_fts, " + bm25Weights(table) + ") AS score FROM vulns_search_fts WHERE vulns_search_fts MATCH ?"
		args := []any{fq}
		if !filtered {
			inner = "SELECT w.rid, w.score FROM (" + inner + " ORDER BY rowid DESC LIMIT " + strconv.Itoa(rankWindow) + ") w ORDER BY w.score, w.rid DESC LIMIT ?"
			args = append(args, limit)
		}
		return "(" + inner + ") f JOIN vulns " + t + " ON " + t + ".id = f.rid", args, "f.score, " + t + ".id DESC"
	}
	inner := "SELECT rowid AS rid, bm25(" + table + "_fts, " + bm25Weights(table) + ") AS score FROM " + table + "_fts WHERE " + table + "_fts MATCH ?"
	args := []any{fq}
	if !filtered {
		inner += " ORDER BY score LIMIT ?"
		args = append(args, limit)
	}
	return "(" + inner + ") f JOIN " + table + " " + t + " ON " + t + ".id = f.rid", args, "f.score, " + t + ".id DESC"
}

func bm25Weights(table string) string {
	if table == "vuln_exploits" {
		return "1.0"
	}
	return "10.0, 1.0"
}

// rankedByID is rankedSource for a filter cond that reads nothing of the
// row but its id (alias f, as f.id): the matches are filtered, ranked and
// cut to limit on the FTS5 rowids, and table is read for the final page
// alone (joining every match read each one's wide row, doc included).
func (sqliteDialect) rankedByID(table, t, fq, cond string, cargs []any, limit int) (string, []any, string) {
	inner := "SELECT f.id AS rid, f.score FROM (SELECT rowid AS id, bm25(" + table + "_fts, " + bm25Weights(table) + ") AS score FROM " +
		table + "_fts WHERE " + table + "_fts MATCH ?) f WHERE " + cond + " ORDER BY f.score, f.id DESC LIMIT ?"
	args := append(append([]any{fq}, cargs...), limit)
	return "(" + inner + ") f JOIN " + table + " " + t + " ON " + t + ".id = f.rid", args, "f.score, " + t + ".id DESC"
}

func (sqliteDialect) textCond(string, string, bool) string { return "" }
func (sqliteDialect) syncsTextIndex() bool                 { return true }
func (sqliteDialect) optimize() string                     { return `PRAGMA optimize` }

type pgDialect struct{}

func (pgDialect) textWord(w, star string) string { return w + strings.ReplaceAll(star, "*", ":*") }
func (pgDialect) textAll(words []string) string  { return strings.Join(words, " & ") }
func (pgDialect) textAny(parts []string) string  { return strings.Join(parts, " | ") }

func (pgDialect) textMatch(_, t string) string {
	return t + ".tsv @@ to_tsquery('english', ?)"
}

// rankedSource lets the GIN index find the matches and ts_rank order them
// (the newest rankWindow of them when nothing else filters).
func (pgDialect) rankedSource(table, t, fq string, filtered bool, limit int) (string, []any, string) {
	order := "ts_rank(" + t + ".tsv, fq) DESC, " + t + ".id DESC"
	if filtered {
		return table + " " + t + " CROSS JOIN to_tsquery('english', ?) fq", []any{fq}, order
	}
	if table == "vulns" {
		// The window is chosen and ranked on the narrow rows of
		// vulns_search (migration 16): a common word's matches in vulns
		// are one heap page each. vulns is read for the final page alone.
		src := "(SELECT n.id, ts_rank(n.tsv, fq) AS score FROM (SELECT id, tsv FROM vulns_search WHERE tsv @@ to_tsquery('english', ?)" +
			" ORDER BY published DESC, id DESC LIMIT " + strconv.Itoa(rankWindow) + ") n CROSS JOIN to_tsquery('english', ?) fq" +
			" ORDER BY score DESC, n.id DESC LIMIT ?) r JOIN vulns " + t + " ON " + t + ".id = r.id"
		return src, []any{fq, fq, limit}, "r.score DESC, " + t + ".id DESC"
	}
	// ts_rank reads every match's tsvector from the heap: a common
	// word would rank tens of thousands of rows. Rank the newest
	// rankWindow matches instead, which the date index yields.
	date := "published"
	if table == "vuln_exploits" {
		date = "date_added"
	}
	src := "(SELECT * FROM " + table + " WHERE tsv @@ to_tsquery('english', ?) ORDER BY " + date + " DESC, id DESC LIMIT " +
		strconv.Itoa(rankWindow) + ") " + t + " CROSS JOIN to_tsquery('english', ?) fq"
	return src, []any{fq, fq}, order
}

// textCond: the narrow vulnerability window of rankedSource holds
// matches only and has no fq in scope.
func (pgDialect) textCond(table, t string, filtered bool) string {
	if table == "vulns" && !filtered {
		return ""
	}
	return t + ".tsv @@ fq"
}

func (pgDialect) syncsTextIndex() bool { return false }

// optimize is a VACUUM (ANALYZE): statistics and the visibility map that
// lets counts be index-only (deployments with autovacuum off get nothing
// else).
func (pgDialect) optimize() string {
	return `VACUUM (ANALYZE) vulns, vulns_search, vuln_cpes, vuln_kev, vuln_epss, vuln_exploits, vuln_exploit_cves,
			vuln_advisories, vuln_advisory_aliases, vuln_advisory_packages`
}
