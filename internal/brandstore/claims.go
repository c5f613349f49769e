package brandstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/periscope-oss/periscope/internal/store"
)

// A name under a domain that another account claims is that account's own
// host, never a look-alike shown to anyone else: no finding is stored for
// it (insertFindings), those stored before the claim go when the brand
// monitor sees it (DropFindingsUnder), and every read leaves them out
// (store.NotClaimedByOther) in between.

// deleteFindingsUnder deletes the findings whose look-alike is the domain or
// below it (args: the domain, its LIKE pattern) that their own account may
// no longer be shown.
const deleteFindingsUnder = `DELETE FROM brand_findings WHERE (domain = ? OR domain LIKE ? ESCAPE '\') AND NOT (%s)`

// DropFindingsUnder deletes the findings whose look-alike is domain or a
// name below it, of every account but the one whose claim covers it, and
// reports how many went.
func (s *Store) DropFindingsUnder(ctx context.Context, domain string) (int64, error) {
	q := fmt.Sprintf(deleteFindingsUnder, store.NotClaimedByOther(s.st.Dialect(), "brand_findings.domain", "brand_findings.account_id"))
	res, err := s.exec(ctx, q, domain, "%."+store.LikeEscape(domain))
	if err != nil {
		return 0, fmt.Errorf("drop findings under %q: %w", domain, err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// namesVisibleTo keeps the names (at most a few hundred a statement) that
// no other account's claim covers (args: the names, then the account).
const namesVisibleTo = `SELECT v.column1 FROM (VALUES %s) AS v WHERE %s`

// VisibleNames returns the names of names that account may be shown: those
// not under another account's domain claim, in their order.
func (s *Store) VisibleNames(ctx context.Context, account string, names []string) ([]string, error) {
	const perStmt = 500
	keep := make(map[string]bool, len(names))
	cond := store.NotClaimedByOther(s.st.Dialect(), "v.column1", "?")
	for part := range slices.Chunk(names, perStmt) {
		args := make([]any, 0, len(part)+2)
		for _, n := range part {
			args = append(args, n)
		}
		q := fmt.Sprintf(namesVisibleTo, strings.TrimSuffix(strings.Repeat("(CAST(? AS TEXT)), ", len(part)), ", "), cond)
		rows, err := s.query(ctx, q, append(args, store.NotClaimedByOtherArgs(account)...)...)
		if err != nil {
			return nil, fmt.Errorf("check claims of %d names: %w", len(part), err)
		}
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				rows.Close()
				return nil, fmt.Errorf("check claims of %d names: %w", len(part), err)
			}
			keep[n] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("check claims of %d names: %w", len(part), err)
		}
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		if keep[n] {
			out = append(out, n)
		}
	}
	return out, nil
}
