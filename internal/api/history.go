package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/history"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/ledger"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// Host history (beyond FullHunt; Censys and Shodan offer it) and FullHunt's
// historical-hosts search, read from the change ledger: the host as the
// index holds it now with the later ledger rows undone.

// History is what the host history routes need (*history.Service).
type History interface {
	Events(ctx context.Context, name string, q history.Query) (history.Page, error)
	AsOf(ctx context.Context, name string, at time.Time) (host.Host, error)
	Diff(ctx context.Context, name string, from, to time.Time) (history.Diff, error)
	States(ctx context.Context, typ, value string, limit int) ([]ledger.State, int, error)
}

// historyPageSize is the default and largest page of /host/{host}/history.
const (
	historyPageSize    = 100
	historyMaxPageSize = 1000
	// historicalMaxResults caps the OEM historical-hosts search, as
	// FullHunt's 10,000.
	historicalMaxResults = 10000
)

var errHistoryOff = periscope.Errorf(periscope.EUnavailable, "Host history is not served by this server.")

type historyEvent struct {
	Time     int64  `json:"time"`
	Category string `json:"category"`
	Change   string `json:"change"`
	Value    string `json:"value"`
	OldValue string `json:"old_value"`
	Source   string `json:"source"`
}

// handleHostHistory answers GET /host/{host}/history: the host's ledger
// rows, newest first, a page at a time.
func (s *Server) handleHostHistory(w http.ResponseWriter, r *http.Request) error {
	if s.history == nil {
		return errHistoryOff
	}
	name, err := pathHost(r)
	if err != nil {
		return err
	}
	q := history.Query{Cursor: r.URL.Query().Get("cursor")}
	if q.From, q.To, err = instantRange(r); err != nil {
		return err
	}
	if q.Limit, err = queryInt(r, "limit", historyPageSize, 1, historyMaxPageSize); err != nil {
		return err
	}
	q.Limit = min(q.Limit, max(principalOf(r).Account.MaxResultsPerRequest, 1))
	p, err := s.history.Events(r.Context(), name, q)
	if err != nil {
		return err
	}
	events := make([]historyEvent, len(p.Events))
	for i, e := range p.Events {
		events[i] = historyEvent{Time: e.Time, Category: string(e.Category), Change: string(e.Change.Change),
			Value: e.Value, OldValue: e.OldValue, Source: e.Source}
	}
	writeJSON(w, http.StatusOK, map[string]any{"host": p.Host, "events": events, "next_cursor": p.NextCursor})
	return nil
}

// hostAt answers GET /host/{host}?at=: the host as it stood then
// (handleHost hands over when at is given).
func (s *Server) hostAt(w http.ResponseWriter, r *http.Request, name string) error {
	if s.history == nil {
		return errHistoryOff
	}
	at, err := instant("at", r.URL.Query().Get("at"), false)
	if err != nil {
		return err
	}
	h, err := s.history.AsOf(r.Context(), name, at)
	if err != nil {
		return err
	}
	body, err := hostWith(h, map[string]any{"raw": h, "as_of": at.Unix()})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

type diffChange struct {
	Category string `json:"category"`
	Change   string `json:"change"`
	Value    string `json:"value"`
	OldValue string `json:"old_value"`
}

// handleHostDiff answers GET /host/{host}/diff: what changed between the
// host at from and the host at to (default now).
func (s *Server) handleHostDiff(w http.ResponseWriter, r *http.Request) error {
	if s.history == nil {
		return errHistoryOff
	}
	name, err := pathHost(r)
	if err != nil {
		return err
	}
	if r.URL.Query().Get("from") == "" {
		return periscope.Errorf(periscope.EMissing, "from is required: an RFC 3339 time, a date (YYYY-MM-DD) or Unix seconds.")
	}
	from, to, err := instantRange(r)
	if err != nil {
		return err
	}
	if to.IsZero() {
		to = s.now()
	}
	d, err := s.history.Diff(r.Context(), name, from, to)
	if err != nil {
		return err
	}
	changes := make([]diffChange, len(d.Changes))
	for i, c := range d.Changes {
		changes[i] = diffChange{Category: string(c.Category), Change: string(c.Change), Value: c.Value, OldValue: c.OldValue}
	}
	writeJSON(w, http.StatusOK, map[string]any{"host": d.Host, "from": d.From.Unix(), "to": d.To.Unix(),
		"total_changes": len(changes), "changes": changes})
	return nil
}

// handleHistoricalHosts answers POST /oem/historical-hosts/search: the past
// states of a host or of the hosts of a domain, newest first.
func (s *Server) handleHistoricalHosts(w http.ResponseWriter, r *http.Request) error {
	if s.history == nil {
		return errHistoryOff
	}
	var in struct {
		Query *string `json:"query"`
		Type  string  `json:"type"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	typ, value, err := hostOrDomain(in.Query, in.Type)
	if err != nil {
		return err
	}
	limit := min(max(principalOf(r).Account.MaxResultsPerRequest, 1), historicalMaxResults)
	states, total, err := s.history.States(r.Context(), typ, value, limit)
	if err != nil {
		return err
	}
	results := make([]json.RawMessage, len(states))
	for i, st := range states {
		if results[i], err = hostWith(st.Host, map[string]any{"timestamp": time.Unix(st.Since, 0).UTC().Format(ledgerTime),
			"valid_from": st.Since, "valid_until": st.Until, "is_current": st.Until == 0}); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"query": map[string]string{"type": typ, "value": value},
		"total_results": total, "results": results})
	return nil
}

// hostOrDomain reads the query and type of the OEM host-or-domain searches
// (alerts, historical hosts): type inferred when absent, a domain search
// keyed by the registrable domain.
func hostOrDomain(query *string, typ string) (string, string, error) {
	if query == nil || strings.TrimSpace(*query) == "" {
		return "", "", periscope.Errorf(periscope.EMissing, "query is required: a host name, an IP address or a domain.")
	}
	if err := checkText("query", *query, 253); err != nil {
		return "", "", err
	}
	n, err := host.Normalize(strings.TrimSpace(*query))
	if err != nil {
		return "", "", periscope.Errorf(periscope.EInvalid, "query must be a host name, an IP address or a domain.")
	}
	if typ == "" {
		typ = "host"
		if !n.IP && n.Host == n.Domain {
			typ = "domain"
		}
	}
	switch typ {
	case "host":
		return typ, n.Host, nil
	case "domain":
		if n.IP || n.Domain == "" {
			return "", "", periscope.Errorf(periscope.EInvalid, "a domain search needs a domain name, not an address.")
		}
		return typ, n.Domain, nil
	}
	return "", "", periscope.Errorf(periscope.EInvalid, "type must be host or domain (got %q).", periscope.Clip(typ, 32))
}

// pathHost reads and checks the {host} of a host route.
func pathHost(r *http.Request) (string, error) {
	name := r.PathValue("host")
	if _, err := host.Normalize(name); err != nil {
		return "", periscope.Errorf(periscope.EInvalid, "host must be a host name or IP address (got %q).", periscope.Clip(name, 64))
	}
	return name, nil
}

// hostWith is the host object with extra members after its own.
func hostWith(h host.Host, extra map[string]any) (json.RawMessage, error) {
	doc, err := h.CanonicalJSON()
	if err != nil {
		return nil, err
	}
	more, err := json.Marshal(extra)
	if err != nil {
		return nil, err
	}
	if len(more) <= 2 {
		return doc, nil
	}
	body := append(doc[:len(doc)-1:len(doc)-1], ',')
	return append(body, more[1:]...), nil
}

// instantRange reads the from and to of the history routes (inclusive; a
// date alone means its whole day).
func instantRange(r *http.Request) (from, to time.Time, err error) {
	q := r.URL.Query()
	if v := q.Get("from"); v != "" {
		if from, err = instant("from", v, false); err != nil {
			return
		}
	}
	if v := q.Get("to"); v != "" {
		if to, err = instant("to", v, true); err != nil {
			return
		}
	}
	if !from.IsZero() && !to.IsZero() && to.Before(from) {
		err = periscope.Errorf(periscope.EInvalid, "to must not be before from.")
	}
	return
}

// instant reads a time: RFC 3339, a date (YYYY-MM-DD, its first second, or
// its last when end is set) or Unix seconds.
func instant(name, v string, end bool) (time.Time, error) {
	if v == "" {
		return time.Time{}, periscope.Errorf(periscope.EMissing, "%s is required: an RFC 3339 time (2026-11-20T12:00:00Z), a date (YYYY-MM-DD) or Unix seconds.", name)
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02", v); err == nil {
		if end {
			t = t.Add(24*time.Hour - time.Second)
		}
		return t, nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 && n < 1<<40 {
		return time.Unix(n, 0).UTC(), nil
	}
	return time.Time{}, periscope.Errorf(periscope.EInvalid, "%s must be an RFC 3339 time (2026-11-20T12:00:00Z), a date (YYYY-MM-DD) or Unix seconds (got %q).", name, periscope.Clip(v, 40))
}
