package api

import (
	"net/http"
)

type authStatusUser struct {
	Company   string `json:"company"`
	Email     string `json:"email"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Plan      string `json:"plan"`
}

type authStatusCredits struct {
	CreditsUsage         int64 `json:"credits_usage"`
	MaxResultsPerRequest int   `json:"max_results_per_request"`
	RemainingCredits     int64 `json:"remaining_credits"`
	TotalCreditsPerMonth int64 `json:"total_credits_per_month"`
}

type authStatusResponse struct {
	Status      int               `json:"status"`
	Message     string            `json:"message"`
	User        authStatusUser    `json:"user"`
	UserCredits authStatusCredits `json:"user_credits"`
}

// handleAuthStatus answers GET /auth/status in FullHunt's exact shape.
func (s *Server) handleAuthStatus(w http.ResponseWriter, r *http.Request) error {
	p := principalOf(r)
	a := p.Account
	used, _ := a.Usage(s.now())
	remaining := max(a.CreditsPerMonth-used, 0)
	writeJSON(w, http.StatusOK, authStatusResponse{
		Status: http.StatusOK,
		User: authStatusUser{Company: a.Company, Email: p.User.Email, FirstName: p.User.FirstName,
			LastName: p.User.LastName, Plan: a.Plan},
		UserCredits: authStatusCredits{CreditsUsage: a.CreditsPerMonth - remaining, MaxResultsPerRequest: a.MaxResultsPerRequest,
			RemainingCredits: remaining, TotalCreditsPerMonth: a.CreditsPerMonth},
	})
	return nil
}

// handleOEMCredits answers POST /oem/account/credits (a FullHunt extension).
func (s *Server) handleOEMCredits(w http.ResponseWriter, r *http.Request) error {
	p := principalOf(r)
	a := p.Account
	_, oemUsed := a.Usage(s.now())
	writeJSON(w, http.StatusOK, map[string]any{"response": map[string]any{
		"credits_remaining": max(a.OEMCreditsPerMonth-oemUsed, 0),
		"credits_per_month": a.OEMCreditsPerMonth,
		"oem_enabled":       a.OEM,
		"company":           a.Company,
		"account_id":        a.ID,
		"timestamp":         s.now().Unix(),
	}})
	return nil
}
