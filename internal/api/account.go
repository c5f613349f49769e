package api

import (
	"bytes"
	"net/http"
	"strconv"

	"github.com/periscope-oss/periscope/internal/jsontext"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// handleAuthStatus answers GET /auth/status in FullHunt's exact shape:
// {"status":200,"message":"","user":{"company","email","first_name",
// "last_name","plan"},"user_credits":{"credits_usage",
// "max_results_per_request","remaining_credits","total_credits_per_month"}}.
// Written by hand (every client calls it, often as a health check): the
// bytes are encoding/json's for the same fields, which a test checks.
func (s *Server) handleAuthStatus(w http.ResponseWriter, r *http.Request) error {
	p := principalOf(r)
	a := p.Account
	used, _ := a.Usage(s.now())
	remaining := max(a.CreditsPerMonth-used, 0)
	buf := jsonBuffers.Get().(*bytes.Buffer)
	defer putJSONBuffer(buf)
	buf.Grow(512) // allocates only the first time this pooled buffer is used
	b := appendAuthStatus(buf.AvailableBuffer(), p, remaining)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(b)
	return nil
}

func appendAuthStatus(b []byte, p *periscope.Principal, remaining int64) []byte {
	a := &p.Account
	b = append(b, `{"status":200,"message":"","user":{"company":`...)
	b = jsontext.AppendString(b, a.Company, false)
	b = append(b, `,"email":`...)
	b = jsontext.AppendString(b, p.User.Email, false)
	b = append(b, `,"first_name":`...)
	b = jsontext.AppendString(b, p.User.FirstName, false)
	b = append(b, `,"last_name":`...)
	b = jsontext.AppendString(b, p.User.LastName, false)
	b = append(b, `,"plan":`...)
	b = jsontext.AppendString(b, a.Plan, false)
	b = append(b, `},"user_credits":{"credits_usage":`...)
	b = strconv.AppendInt(b, a.CreditsPerMonth-remaining, 10)
	b = append(b, `,"max_results_per_request":`...)
	b = strconv.AppendInt(b, int64(a.MaxResultsPerRequest), 10)
	b = append(b, `,"remaining_credits":`...)
	b = strconv.AppendInt(b, remaining, 10)
	b = append(b, `,"total_credits_per_month":`...)
	b = strconv.AppendInt(b, a.CreditsPerMonth, 10)
	return append(b, "}}\n"...)
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
