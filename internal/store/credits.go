package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/periscope-oss/periscope/internal/periscope"
)

// Reserve takes n credits from an account's pool, atomically: it succeeds
// only while the pool holds n, so with N left at most N concurrent callers
// succeed. A pool whose stored period is not the current month is renewed
// (both counters reset) in the same statement. The caller gives the credits
// back with Refund when the work fails.
func (s *Store) Reserve(ctx context.Context, accountID string, pool periscope.Pool, n int64) (period string, err error) {
	period = periscope.Period(s.Now())
	q := reserveSQL(pool)
	if q == "" {
		return period, nil
	}
	res, err := s.ExecPrepared(ctx, q, period, n, period, period, accountID, period, n)
	s.auth.invalidate(accountID) // cached principals carry usage counters
	return s.reserved(res, err, pool, period)
}

// Reserve takes n credits inside the transaction, as Store.Reserve does:
// work that must exist only if it was paid for (a queued scan) is written
// in the same transaction, so a refused charge leaves nothing behind.
func (t *Tx) Reserve(ctx context.Context, accountID string, pool periscope.Pool, n int64) (period string, err error) {
	period = periscope.Period(t.s.Now())
	q := reserveSQL(pool)
	if q == "" {
		return period, nil
	}
	res, err := t.Exec(ctx, q, period, n, period, period, accountID, period, n)
	// Before and after the commit: a principal cached in between would
	// carry the old usage for the cache's short life at most.
	t.s.auth.invalidate(accountID)
	return t.s.reserved(res, err, pool, period)
}

// reserveSQL is the conditional debit of a pool ("" for PoolNone).
// Arguments: period, n, period, period, account id, period, n.
func reserveSQL(pool periscope.Pool) string {
	switch pool {
	case periscope.PoolMonthly:
		return `UPDATE accounts SET
			credits_used = (CASE WHEN credits_period = ? THEN credits_used ELSE 0 END) + ?,
			oem_credits_used = CASE WHEN credits_period = ? THEN oem_credits_used ELSE 0 END,
			credits_period = ?
		WHERE id = ? AND (CASE WHEN credits_period = ? THEN credits_used ELSE 0 END) + ? <= credits_per_month`
	case periscope.PoolOEM:
		return `UPDATE accounts SET
			oem_credits_used = (CASE WHEN credits_period = ? THEN oem_credits_used ELSE 0 END) + ?,
			credits_used = CASE WHEN credits_period = ? THEN credits_used ELSE 0 END,
			credits_period = ?
		WHERE id = ? AND (CASE WHEN credits_period = ? THEN oem_credits_used ELSE 0 END) + ? <= oem_credits_per_month`
	}
	return ""
}

// reserved reads the debit's outcome: one row changed, or the pool is spent.
func (s *Store) reserved(res sql.Result, err error, pool periscope.Pool, period string) (string, error) {
	if err != nil {
		return "", fmt.Errorf("reserve credits: %w", err)
	}
	if k, _ := res.RowsAffected(); k == 1 {
		return period, nil
	}
	return "", CreditsExhausted(pool, s.Now())
}

// CreditsExhausted is the error of a pool with no credits left at now.
func CreditsExhausted(pool periscope.Pool, now time.Time) error {
	renews := periscope.NextRenewal(now).Format("2006-01-02 15:04 UTC")
	if pool == periscope.PoolOEM {
		return periscope.Errorf(periscope.EOEMCreditsExhausted, "The account's OEM credits for this month are spent; they renew on %s.", renews)
	}
	return periscope.Errorf(periscope.ECreditsExhausted, "The account's credits for this month are spent; they renew on %s.", renews)
}

// Refund gives back n credits reserved in period (as Reserve returned it).
// Credits reserved before a renewal are not given back into the new month.
func (s *Store) Refund(ctx context.Context, accountID string, pool periscope.Pool, n int64, period string) error {
	col := "credits_used"
	switch pool {
	case periscope.PoolMonthly:
	case periscope.PoolOEM:
		col = "oem_credits_used"
	default:
		return nil
	}
	_, err := s.ExecPrepared(ctx, `UPDATE accounts SET `+col+` = `+col+` - ? WHERE id = ? AND credits_period = ? AND `+col+` >= ?`,
		n, accountID, period, n)
	s.auth.invalidate(accountID)
	if err != nil {
		return fmt.Errorf("refund credits: %w", err)
	}
	return nil
}
