package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/periscope-oss/periscope/internal/periscope"
)

// FullHunt's global search, /intel/* and /nexus/* answers carry credits:
// the account's balance after the request's charge. The charge is taken by
// the wrapper only once the handler has succeeded (route.go), so such a
// handler hands the wrapper a builder instead of a body, and the wrapper
// builds the body with the balance it reads after reserving the credit.

// writeWithCredits answers 200 with the body build returns for the balance
// after the charge. Only charged routes answer through a buffer; on any
// other writer the body is built at once with the balance before.
func (s *Server) writeWithCredits(w http.ResponseWriter, r *http.Request, build func(balance int64) any) {
	if b, ok := w.(*bufferedResponse); ok {
		b.withCredits = build
		b.WriteHeader(http.StatusOK)
		return
	}
	acct := principalOf(r).Account
	used, _ := acct.Usage(s.now())
	writeJSON(w, http.StatusOK, build(max(acct.CreditsPerMonth-used, 0)))
}

// balance returns the credits left in pool for the account, read after a
// reservation (so it includes it, and any other request's charged since).
func (s *Server) balance(ctx context.Context, accountID string, pool periscope.Pool) (int64, error) {
	a, err := s.accounts.Account(ctx, accountID)
	if err != nil {
		return 0, fmt.Errorf("read balance: %w", err)
	}
	used, oemUsed := a.Usage(s.now())
	if pool == periscope.PoolOEM {
		return max(a.OEMCreditsPerMonth-oemUsed, 0), nil
	}
	return max(a.CreditsPerMonth-used, 0), nil
}
