package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
)

const (
	auditPerPage = 50
	maxAuditPage = 1_000_000
)

// Bounds of what an audit record keeps of a request.
const (
	// maxAuditRequestBytes bounds the stored (redacted) request: larger
	// requests are kept as an excerpt marked request_truncated.
	maxAuditRequestBytes = 4 << 10
	// auditExcerptBytes is how much of a larger request's redacted JSON is
	// kept as its excerpt.
	auditExcerptBytes = 1 << 10
	// maxQueryTagsBytes bounds query_tags, which are stored whole (larger
	// ones are refused with 400 before any charge).
	maxQueryTagsBytes = 4 << 10
)

// audit writes the trail record of an OEM request: the body's query_tags and
// the rest of the body, secrets redacted at every depth, bounded. The rest
// of a dark-web search (the email, name or phone it looks for) is sealed
// for the account (sealAudit).
func (s *Server) audit(r *http.Request, p *periscope.Principal, status, charged int) error {
	tags, req := auditBody(requestBody(r))
	e := &periscope.AuditEntry{AccountID: p.Account.ID, KeyPrefix: p.Key.Prefix, Time: s.now(), Method: r.Method,
		Endpoint: strings.TrimPrefix(r.URL.Path, "/api/v1"), StatusCode: status, CreditsCharged: charged,
		QueryTags: tags, Request: req}
	if strings.HasPrefix(e.Endpoint, sealedAuditPrefix) {
		if err := s.sealAudit(e); err != nil {
			return err
		}
	}
	// The trail is written even when the client has gone.
	return s.accounts.AddAudit(context.WithoutCancel(r.Context()), e)
}

// sealedAuditPrefix is the endpoints whose requests name a person: their
// audit records keep the request sealed.
const sealedAuditPrefix = "/oem/darkweb/"

// sealedAuditRequest is what the request column holds for a sealed record,
// and what its account is shown when the record does not open (sealed
// with another secrets key than the server's).
var sealedAuditRequest = []byte(`{"sealed":true}`)

// auditPurpose binds a sealed request to its account: moved to another
// account's record, it does not open.
func auditPurpose(accountID string) string { return "audit_logs.request:" + accountID }

// sealAudit moves e's request into SealedRequest, sealed for its account.
func (s *Server) sealAudit(e *periscope.AuditEntry) error {
	if s.auditKey == nil {
		return errors.New("no secrets key to seal the audit record of a dark-web search")
	}
	sealed, err := s.auditKey.Seal(auditPurpose(e.AccountID), e.Request)
	if err != nil {
		return fmt.Errorf("seal audit record: %w", err)
	}
	e.Request, e.SealedRequest = sealedAuditRequest, sealed
	return nil
}

// openAudit returns the request of e as its account is shown it.
func (s *Server) openAudit(e periscope.AuditEntry) json.RawMessage {
	if e.SealedRequest == "" {
		return e.Request
	}
	if s.auditKey != nil {
		if plain, err := s.auditKey.Open(auditPurpose(e.AccountID), e.SealedRequest); err == nil {
			return plain
		}
	}
	return sealedAuditRequest
}

// auditBody returns what the trail keeps of a request body: its query_tags
// and the rest, both redacted; a rest longer than maxAuditRequestBytes is
// replaced by {"request_truncated": true, "request_bytes": n, "excerpt": "..."}.
func auditBody(body []byte) (tags, req []byte) {
	tags, req = []byte("{}"), []byte("{}")
	if checkJSONText(body) != nil {
		// Refused as not text: what it held cannot be stored faithfully
		// (PostgreSQL refuses NUL) and is not kept.
		return tags, []byte(`{"request_invalid_text":true}`)
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if len(bytes.TrimSpace(body)) == 0 || dec.Decode(&m) != nil {
		return tags, req
	}
	if t, ok := m["query_tags"].(map[string]any); ok {
		redact(t)
		if b, err := marshalNoEscape(t); err == nil {
			tags = b
		}
	}
	delete(m, "query_tags")
	redact(m)
	b, err := marshalNoEscape(m)
	if err != nil {
		return tags, req
	}
	if len(b) <= maxAuditRequestBytes {
		return tags, b
	}
	cut := auditExcerptBytes
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	t, err := marshalNoEscape(map[string]any{"request_truncated": true, "request_bytes": len(b), "excerpt": string(b[:cut])})
	if err != nil {
		return tags, req
	}
	return tags, t
}

func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

const redacted = "[redacted]"

// redact replaces secrets in a decoded JSON object, at every depth (objects
// inside objects and arrays): values whose field name says they are a
// credential (secretName), and the query of an object whose type is a
// password search.
func redact(m map[string]any) {
	for k, v := range m {
		if secretName(k) {
			m[k] = redacted
			continue
		}
		redactValue(v)
	}
	if typ, ok := m["type"].(string); ok && strings.Contains(strings.ToLower(typ), "password") {
		if _, ok := m["query"]; ok {
			m["query"] = redacted
		}
	}
}

func redactValue(v any) {
	switch x := v.(type) {
	case map[string]any:
		redact(x)
	case []any:
		for _, e := range x {
			redactValue(e)
		}
	}
}

// secretWords are what a field holding a credential is called, matched in
// the name lowercased with separators removed (api_key, X-Auth-Token,
// sessionId, Set-Cookie, client_secret, passwd, bearerToken...).
var secretWords = []string{"token", "secret", "passw", "pwd", "passphrase", "credential", "auth", "bearer",
	"session", "cookie", "apikey", "privatekey", "accesskey", "signature", "jwt"}

// secretName reports whether a field name says its value is a secret. Names
// ending in "key" count (api_key, license-key); "keywords" does not.
func secretName(name string) bool {
	var b strings.Builder
	for _, c := range strings.ToLower(name) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
		}
	}
	n := b.String()
	if strings.HasSuffix(n, "key") || strings.HasSuffix(n, "keys") {
		return true
	}
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
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
	// Bounded so that the offset fits every engine (PostgreSQL refuses a
	// negative OFFSET; SQLite would wrap to page 1).
	if err := checkRange("page", page, 1, maxAuditPage); err != nil {
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
			StatusCode: e.StatusCode, CreditsCharged: e.CreditsCharged, QueryTags: e.QueryTags, Request: s.openAudit(e), APIKey: e.KeyPrefix}
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
