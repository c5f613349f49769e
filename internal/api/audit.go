package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
)

const auditPerPage = 50

// audit writes the trail record of an OEM request. It runs for every
// authenticated request to an /oem/ route, whatever its outcome.
func (s *Server) audit(r *http.Request, p *periscope.Principal, status, charged int) {
	body := requestBody(r)
	tags, req := []byte("{}"), []byte("{}")
	var m map[string]json.RawMessage
	if len(bytes.TrimSpace(body)) > 0 && json.Unmarshal(body, &m) == nil {
		if t := bytes.TrimSpace(m["query_tags"]); len(t) > 0 && t[0] == '{' {
			tags = t
		}
		delete(m, "query_tags")
		redact(m)
		if b, err := json.Marshal(m); err == nil {
			req = b
		}
	}
	e := &periscope.AuditEntry{AccountID: p.Account.ID, KeyPrefix: p.Key.Prefix, Time: s.now(), Method: r.Method,
		Endpoint: strings.TrimPrefix(r.URL.Path, "/api/v1"), StatusCode: status, CreditsCharged: charged,
		QueryTags: tags, Request: req}
	// The trail is written even when the client has gone.
	if err := s.accounts.AddAudit(context.WithoutCancel(r.Context()), e); err != nil {
		s.log.Error("audit record lost", "request_id", requestID(r.Context()), "account", p.Account.ID, "err", err)
	}
}

// redact removes secrets from a request body before it is stored: fields
// whose name says key, token, secret or password, and the query itself when
// it is a password search.
func redact(m map[string]json.RawMessage) {
	for k := range m {
		lk := strings.ToLower(k)
		if strings.Contains(lk, "key") || strings.Contains(lk, "token") || strings.Contains(lk, "secret") || strings.Contains(lk, "password") {
			m[k] = json.RawMessage(`"[redacted]"`)
		}
	}
	var typ string
	if json.Unmarshal(m["type"], &typ) == nil && strings.Contains(strings.ToLower(typ), "password") {
		if _, ok := m["query"]; ok {
			m["query"] = json.RawMessage(`"[redacted]"`)
		}
	}
}

type auditLogJSON struct {
	ID             int64           `json:"id"`
	Timestamp      int64           `json:"timestamp"`
	Method         string          `json:"method"`
	Endpoint       string          `json:"endpoint"`
	StatusCode     int             `json:"status_code"`
	CreditsCharged int             `json:"credits_charged"`
	QueryTags      json.RawMessage `json:"query_tags"`
	Request        json.RawMessage `json:"request"`
	APIKey         string          `json:"api_key"`
}

// handleAuditLogs answers POST /oem/account/audit-logs.
func (s *Server) handleAuditLogs(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Page      *int   `json:"page"`
		StartDate string `json:"start_date"`
		EndDate   string `json:"end_date"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	page := 1
	if in.Page != nil {
		page = *in.Page
	}
	if err := checkRange("page", page, 1, 0); err != nil {
		return err
	}
	f := store.AuditFilter{AccountID: principalOf(r).Account.ID, Page: page, PerPage: auditPerPage}
	var err error
	if f.From, err = parseDate("start_date", in.StartDate, "2006-01-02"); err != nil {
		return err
	}
	if f.To, err = parseDate("end_date", in.EndDate, "2006-01-02"); err != nil {
		return err
	}
	if !f.To.IsZero() {
		f.To = f.To.AddDate(0, 0, 1) // inclusive
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To) {
		return periscope.Errorf(periscope.EInvalid, "start_date must not be after end_date.")
	}
	logs, total, err := s.accounts.AuditLogs(r.Context(), f)
	if err != nil {
		return err
	}
	out := make([]auditLogJSON, len(logs))
	for i, e := range logs {
		out[i] = auditLogJSON{ID: e.ID, Timestamp: e.Time.Unix(), Method: e.Method, Endpoint: e.Endpoint,
			StatusCode: e.StatusCode, CreditsCharged: e.CreditsCharged, QueryTags: e.QueryTags, Request: e.Request, APIKey: e.KeyPrefix}
	}
	pages := (total + auditPerPage - 1) / auditPerPage
	writeJSON(w, http.StatusOK, map[string]any{"response": map[string]any{
		"logs": out,
		"pagination": map[string]any{"page": page, "per_page": auditPerPage, "total": total, "total_pages": pages,
			"has_next": page < pages, "has_prev": page > 1},
		"timestamp": s.now().Unix(),
	}})
	return nil
}

// parseDate parses a date in layout, or ISO YYYY-MM-DD, which is accepted
// wherever a date is taken. Empty means unset.
func parseDate(name, v, layout string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, l := range []string{layout, "2006-01-02"} {
		if t, err := time.Parse(l, v); err == nil {
			return t, nil
		}
	}
	human := strings.NewReplacer("2006", "YYYY", "01", "MM", "02", "DD").Replace(layout)
	return time.Time{}, periscope.Errorf(periscope.EInvalid, "%s must be a date in %s format (got %q).", name, human, periscope.Clip(v, 32))
}
