package api

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/periscope-oss/periscope/internal/periscope"
)

// The /auth/status answer as it was encoded before it was written by hand.
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

func checkAuthStatusBytes(t *testing.T, p *periscope.Principal, remaining int64) {
	t.Helper()
	a := p.Account
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(authStatusResponse{Status: 200,
		User: authStatusUser{Company: a.Company, Email: p.User.Email, FirstName: p.User.FirstName, LastName: p.User.LastName, Plan: a.Plan},
		UserCredits: authStatusCredits{CreditsUsage: a.CreditsPerMonth - remaining, MaxResultsPerRequest: a.MaxResultsPerRequest,
			RemainingCredits: remaining, TotalCreditsPerMonth: a.CreditsPerMonth}}); err != nil {
		t.Fatal(err)
	}
	if got := appendAuthStatus(nil, p, remaining); !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("auth/status bytes differ from encoding/json:\n got %s\nwant %s", got, want.Bytes())
	}
}

func TestAuthStatusMatchesEncodingJSON(t *testing.T) {
	p := &periscope.Principal{}
	p.Account = periscope.Account{Company: "Acme <R&D> \"Labs\"", Plan: "enterprise", CreditsPerMonth: 10000, MaxResultsPerRequest: 100}
	p.User = periscope.User{Email: "a@example.com", FirstName: "Zoë\u2028", LastName: "O'Brien\\\x01\xff"}
	checkAuthStatusBytes(t, p, 9999)
	checkAuthStatusBytes(t, p, 0)
	checkAuthStatusBytes(t, &periscope.Principal{}, 0)
}

func FuzzAuthStatusMatchesEncodingJSON(f *testing.F) {
	f.Add("Acme", "a@example.com", "Ann", "Lee", "free", int64(100), 5, int64(40))
	f.Fuzz(func(t *testing.T, company, email, first, last, plan string, credits int64, maxResults int, remaining int64) {
		p := &periscope.Principal{}
		p.Account = periscope.Account{Company: company, Plan: plan, CreditsPerMonth: credits, MaxResultsPerRequest: maxResults}
		p.User = periscope.User{Email: email, FirstName: first, LastName: last}
		checkAuthStatusBytes(t, p, remaining)
	})
}
