package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/periscope-oss/periscope/internal/periscope"
)

const accountColumns = `id, company, plan, enterprise, oem, credits_per_month, credits_used,
	oem_credits_per_month, oem_credits_used, credits_period, max_results_per_request, rate_limit, created_at,
	max_organizations, max_domains, max_ranges`

func scanAccount(row interface{ Scan(...any) error }, a *periscope.Account) error {
	var created int64
	err := row.Scan(&a.ID, &a.Company, &a.Plan, &a.Enterprise, &a.OEM, &a.CreditsPerMonth, &a.CreditsUsed,
		&a.OEMCreditsPerMonth, &a.OEMCreditsUsed, &a.CreditsPeriod, &a.MaxResultsPerRequest, &a.RateLimit, &created,
		&a.Quotas.Organizations, &a.Quotas.Domains, &a.Quotas.Ranges)
	a.CreatedAt = time.Unix(created, 0).UTC()
	return err
}

// CreateAccount stores a new account with its first user. The ids are set on
// return. A company or e-mail already taken is a conflict.
func (s *Store) CreateAccount(ctx context.Context, a *periscope.Account, u *periscope.User) error {
	if a.Company == "" {
		return periscope.Errorf(periscope.EMissing, "company is required.")
	}
	if u.Email == "" {
		return periscope.Errorf(periscope.EMissing, "email is required.")
	}
	now := s.Now().UTC()
	a.ID, u.ID, u.AccountID = uuid.NewString(), uuid.NewString(), ""
	u.AccountID = a.ID
	a.CreatedAt, u.CreatedAt = now.Truncate(time.Second), now.Truncate(time.Second)
	if a.Plan == "" {
		a.Plan = "free"
	}
	if a.CreditsPeriod == "" {
		a.CreditsPeriod = periscope.Period(now)
	}
	err := s.Tx(ctx, func(tx *Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO accounts (`+accountColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			a.ID, a.Company, a.Plan, a.Enterprise, a.OEM, a.CreditsPerMonth, a.CreditsUsed,
			a.OEMCreditsPerMonth, a.OEMCreditsUsed, a.CreditsPeriod, a.MaxResultsPerRequest, a.RateLimit, now.Unix(),
			a.Quotas.Organizations, a.Quotas.Domains, a.Quotas.Ranges)
		if err != nil {
			return fmt.Errorf("insert account: %w", err)
		}
		_, err = tx.Exec(ctx, `INSERT INTO users (id, account_id, email, first_name, last_name, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			u.ID, a.ID, u.Email, u.FirstName, u.LastName, now.Unix())
		if err != nil {
			return fmt.Errorf("insert user: %w", err)
		}
		return nil
	})
	if isUniqueViolation(err) {
		return &periscope.Error{Code: periscope.EConflict, Message: "An account with this company or e-mail already exists.", Err: err}
	}
	return err
}

// Account returns the account with the given id.
func (s *Store) Account(ctx context.Context, id string) (periscope.Account, error) {
	var a periscope.Account
	err := scanAccount(s.queryRow(ctx, `SELECT `+accountColumns+` FROM accounts WHERE id = ?`, id), &a)
	if errors.Is(err, sql.ErrNoRows) {
		return a, periscope.Errorf(periscope.ENotFound, "No account %q.", id)
	}
	if err != nil {
		return a, fmt.Errorf("read account %s: %w", id, err)
	}
	return a, nil
}

// AccountByCompany returns the account of the given company name.
func (s *Store) AccountByCompany(ctx context.Context, company string) (periscope.Account, error) {
	var a periscope.Account
	err := scanAccount(s.queryRow(ctx, `SELECT `+accountColumns+` FROM accounts WHERE company = ?`, company), &a)
	if errors.Is(err, sql.ErrNoRows) {
		return a, periscope.Errorf(periscope.ENotFound, "No account for company %q.", company)
	}
	if err != nil {
		return a, fmt.Errorf("read account %q: %w", company, err)
	}
	return a, nil
}

// Accounts lists every account, oldest first.
func (s *Store) Accounts(ctx context.Context) ([]periscope.Account, error) {
	rows, err := s.query(ctx, `SELECT `+accountColumns+` FROM accounts ORDER BY created_at, company`)
	if err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	defer rows.Close()
	var out []periscope.Account
	for rows.Next() {
		var a periscope.Account
		if err := scanAccount(rows, &a); err != nil {
			return nil, fmt.Errorf("list accounts: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// UpdateAccount writes the settings of a (not its usage counters).
func (s *Store) UpdateAccount(ctx context.Context, a periscope.Account) error {
	res, err := s.exec(ctx, `UPDATE accounts SET company = ?, plan = ?, enterprise = ?, oem = ?, credits_per_month = ?,
		oem_credits_per_month = ?, max_results_per_request = ?, rate_limit = ?,
		max_organizations = ?, max_domains = ?, max_ranges = ? WHERE id = ?`,
		a.Company, a.Plan, a.Enterprise, a.OEM, a.CreditsPerMonth, a.OEMCreditsPerMonth, a.MaxResultsPerRequest, a.RateLimit,
		a.Quotas.Organizations, a.Quotas.Domains, a.Quotas.Ranges, a.ID)
	s.auth.invalidate(a.ID)
	if isUniqueViolation(err) {
		return &periscope.Error{Code: periscope.EConflict, Message: "Another account has this company name.", Err: err}
	}
	if err != nil {
		return fmt.Errorf("update account %s: %w", a.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return periscope.Errorf(periscope.ENotFound, "No account %q.", a.ID)
	}
	return nil
}

// Users lists the users of an account.
func (s *Store) Users(ctx context.Context, accountID string) ([]periscope.User, error) {
	rows, err := s.query(ctx, `SELECT id, account_id, email, first_name, last_name, created_at FROM users
		WHERE account_id = ? ORDER BY created_at, email`, accountID)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	defer rows.Close()
	var out []periscope.User
	for rows.Next() {
		var u periscope.User
		var created int64
		if err := rows.Scan(&u.ID, &u.AccountID, &u.Email, &u.FirstName, &u.LastName, &created); err != nil {
			return nil, fmt.Errorf("list users: %w", err)
		}
		u.CreatedAt = time.Unix(created, 0).UTC()
		out = append(out, u)
	}
	return out, rows.Err()
}
