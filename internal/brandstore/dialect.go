package brandstore

import (
	"strings"
	"unicode/utf8"

	"github.com/periscope-oss/periscope/internal/store"
)

// dialect is how the brand tables' SQL differs by engine.
type dialect interface {
	// substringFrom is the FROM clause of a findings listing filtered by
	// the lower-case substring sub, with its arguments, when the engine
	// starts such a query from an index of its own; ok is false when the
	// plain FROM brand_findings serves (the caller's LIKE decides either
	// way).
	substringFrom(sub string) (from string, args []any, ok bool)
}

func dialectOf(d store.Dialect) dialect {
	if d.Name() == "postgres" {
		return pgDialect{}
	}
	return sqliteDialect{}
}

type sqliteDialect struct{}

// substringFrom starts from the trigram index (migration 14), which yields
// the rows holding sub's trigrams (CROSS JOIN fixes the order: SQLite
// would otherwise walk the account's listing index and probe the
// matches). A substring of fewer than three characters has no trigram.
func (sqliteDialect) substringFrom(sub string) (string, []any, bool) {
	if utf8.RuneCountInString(sub) < 3 {
		return "", nil, false
	}
	return ` FROM (SELECT rowid AS gid FROM brand_findings_grams WHERE brand_findings_grams MATCH ?) g
				CROSS JOIN brand_findings ON brand_findings.id = g.gid`, []any{`"` + strings.ReplaceAll(sub, `"`, `""`) + `"`}, true
}

type pgDialect struct{}

// substringFrom: PostgreSQL answers the LIKE itself from its pg_trgm
// indexes.
func (pgDialect) substringFrom(string) (string, []any, bool) { return "", nil, false }
