package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/alerts"
	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// AlertService is what the alert and webhook routes need (alerts.Service).
type AlertService interface {
	SearchLedger(ctx context.Context, q alertstore.LedgerQuery) ([]alertstore.Row, int, bool, error)
	Alerts(ctx context.Context, q alertstore.AlertQuery) ([]alertstore.Alert, error)
	SetState(ctx context.Context, accountID, id, state string) (alertstore.Alert, error)
	CreateEndpoint(ctx context.Context, e *alertstore.Endpoint) error
	Endpoints(ctx context.Context, accountID, orgID string) ([]alertstore.Endpoint, error)
	Endpoint(ctx context.Context, accountID, orgID, id string) (alertstore.Endpoint, error)
	UpdateEndpoint(ctx context.Context, e *alertstore.Endpoint) error
	DeleteEndpoint(ctx context.Context, accountID, orgID, id string) error
	SendTest(ctx context.Context, e alertstore.Endpoint) (string, error)
	// VulnFindings reads the vulnerability matching's findings
	// (vulnfindings.go).
	VulnFindings(ctx context.Context, q alerts.FindingQuery) ([]alerts.Finding, int, error)
}

// Page sizes: FullHunt's 500 alerts; the ledger search's 100 rows.
const (
	alertsPageSize = 500
	ledgerPageSize = 100
	// secretOverlap is how long a rotated-out secret keeps signing.
	secretOverlap = 24 * time.Hour
)

// ledgerTime is the ledger's and alerts' timestamp format.
const ledgerTime = "2006-01-02 15:04:05"

type ledgerRowJSON struct {
	Host      string `json:"host"`
	Domain    string `json:"domain"`
	TLD       string `json:"tld"`
	Subdomain string `json:"subdomain"`
	HostType  string `json:"host_type"`
	IPAddress string `json:"ip_address"`
	Category  string `json:"category"`
	Change    string `json:"change"`
	Value     string `json:"value"`
	OldValue  string `json:"old_value"`
	Timestamp string `json:"timestamp"`
}

// handleAlertSearch answers POST /oem/alerts/search: the change ledger of a
// host or of every host of a registrable domain, newest first.
func (s *Server) handleAlertSearch(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Query *string `json:"query"`
		Type  string  `json:"type"`
		From  string  `json:"from"`
		To    string  `json:"to"`
		Page  *int    `json:"page"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	typ, value, err := hostOrDomain(in.Query, in.Type)
	if err != nil {
		return err
	}
	q := alertstore.LedgerQuery{Limit: ledgerPageSize}
	if typ == "host" {
		q.Host = value
	} else {
		q.Domain = value
	}
	if q.From, q.To, err = alertDates(in.From, in.To); err != nil {
		return err
	}
	page := 1
	if in.Page != nil {
		page = *in.Page
	}
	if err := checkRange("page", page, 1, 1<<20); err != nil {
		return err
	}
	q.Offset = (page - 1) * q.Limit
	rows, total, _, err := s.alerts.SearchLedger(r.Context(), q)
	if err != nil {
		return err
	}
	out := make([]ledgerRowJSON, len(rows))
	for i, x := range rows {
		out[i] = ledgerRowJSON{Host: x.Host, Domain: x.Domain, TLD: x.TLD, Subdomain: x.Subdomain, HostType: x.HostType,
			IPAddress: x.IPAddress, Category: string(x.Category), Change: string(x.Change.Change), Value: x.Value,
			OldValue: x.OldValue, Timestamp: time.Unix(x.Time, 0).UTC().Format(ledgerTime)}
	}
	writeJSON(w, http.StatusOK, map[string]any{"query": map[string]string{"type": typ, "value": value}, "total_results": total, "results": out})
	return nil
}

// alertDates parses the OEM search's from and to: YYYY-MM-DD, DD-MM-YYYY or
// DD/MM/YYYY, inclusive.
func alertDates(from, to string) (int64, int64, error) {
	parse := func(name, v string, end bool) (int64, error) {
		if v == "" {
			return 0, nil
		}
		if len(v) == 10 && v[2] == '-' && v[5] == '-' {
			v = strings.ReplaceAll(v, "-", "/")
		}
		return listingDate(name, v, end)
	}
	f, err := parse("from", from, false)
	if err != nil {
		return 0, 0, err
	}
	t, err := parse("to", to, true)
	if err != nil {
		return 0, 0, err
	}
	if f > 0 && t > 0 && f > t {
		return 0, 0, periscope.Errorf(periscope.EInvalid, "from must not be after to.")
	}
	return f, t, nil
}

type alertJSON struct {
	ID             string          `json:"id"`
	Type           string          `json:"type"`
	Title          string          `json:"title"`
	Message        string          `json:"message"`
	Host           string          `json:"host"`
	Domain         string          `json:"domain"`
	IsSeen         bool            `json:"is_seen"`
	Timestamp      string          `json:"timestamp"`
	Severity       string          `json:"severity"`
	State          string          `json:"state"`
	Count          int64           `json:"count"`
	FirstSeen      int64           `json:"first_seen"`
	LastSeen       int64           `json:"last_seen"`
	OrganizationID string          `json:"organization_id"`
	Evidence       json.RawMessage `json:"evidence"`
}

func toAlertJSON(a alertstore.Alert) alertJSON {
	return alertJSON{ID: a.ID, Type: a.Type, Title: a.Title, Message: a.Message, Host: a.Host, Domain: a.Domain,
		IsSeen: a.State != alertstore.StateOpen, Timestamp: time.Unix(a.LastSeen, 0).UTC().Format(ledgerTime),
		Severity: a.Severity, State: a.State, Count: a.Count, FirstSeen: a.FirstSeen, LastSeen: a.LastSeen,
		OrganizationID: a.OrganizationID, Evidence: a.Evidence}
}

var alertStates = []string{alertstore.StateOpen, alertstore.StateAcknowledged, alertstore.StateResolved, alertstore.StateSuppressed}

// handleListAlerts answers GET /enterprise/alerts: the account's alerts,
// newest first, 500 a page.
func (s *Server) handleListAlerts(w http.ResponseWriter, r *http.Request) error {
	qs := r.URL.Query()
	acct := principalOf(r).Account.ID
	q := alertstore.AlertQuery{AccountID: acct, Type: qs.Get("type"), Severity: qs.Get("severity"), State: qs.Get("state"), Limit: alertsPageSize}
	for _, f := range []struct {
		name, v string
		allowed []string
	}{{"type", q.Type, alerts.Types}, {"severity", q.Severity, alerts.Severities}, {"state", q.State, alertStates}} {
		if f.v != "" && !slices.Contains(f.allowed, f.v) {
			return periscope.Errorf(periscope.EInvalid, "%s must be one of %s.", f.name, strings.Join(f.allowed, ", "))
		}
	}
	if org := qs.Get("org"); org != "" {
		o, err := s.orgs.Organization(r.Context(), acct, org)
		if err != nil {
			return err
		}
		q.OrganizationID = o.ID
	}
	page, err := queryInt(r, "page", 1, 1, 1<<20)
	if err != nil {
		return err
	}
	q.Offset = (page - 1) * alertsPageSize
	if q.From, err = listingDate("from", qs.Get("from"), false); err != nil {
		return err
	}
	if q.To, err = listingDate("to", qs.Get("to"), true); err != nil {
		return err
	}
	if q.From > 0 && q.To > 0 && q.From > q.To {
		return periscope.Errorf(periscope.EInvalid, "from must not be after to.")
	}
	list, err := s.alerts.Alerts(r.Context(), q)
	if err != nil {
		return err
	}
	out := make([]alertJSON, len(list))
	for i, a := range list {
		out[i] = toAlertJSON(a)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// setAlertState moves one of the caller's alerts to state.
func (s *Server) setAlertState(w http.ResponseWriter, r *http.Request, state string) error {
	a, err := s.alerts.SetState(r.Context(), principalOf(r).Account.ID, r.PathValue("id"), state)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toAlertJSON(a))
	return nil
}

// handleAcknowledgeAlert answers POST /enterprise/alerts/{id}/acknowledge.
func (s *Server) handleAcknowledgeAlert(w http.ResponseWriter, r *http.Request) error {
	return s.setAlertState(w, r, alertstore.StateAcknowledged)
}

// handleResolveAlert answers POST /enterprise/alerts/{id}/resolve.
func (s *Server) handleResolveAlert(w http.ResponseWriter, r *http.Request) error {
	return s.setAlertState(w, r, alertstore.StateResolved)
}

// handleSuppressAlert answers POST /enterprise/alerts/{id}/suppress.
func (s *Server) handleSuppressAlert(w http.ResponseWriter, r *http.Request) error {
	return s.setAlertState(w, r, alertstore.StateSuppressed)
}

type endpointJSON struct {
	ID             string   `json:"id"`
	OrganizationID string   `json:"organization_id"`
	URL            string   `json:"url"`
	Format         string   `json:"format"`
	MinSeverity    string   `json:"min_severity"`
	Types          []string `json:"types"`
	Status         string   `json:"status"`
	Failures       int64    `json:"failures"`
	LastError      string   `json:"last_error"`
	LastDeliveryAt int64    `json:"last_delivery_at"`
	DisabledAt     int64    `json:"disabled_at"`
	CreatedAt      int64    `json:"created_at"`
	UpdatedAt      int64    `json:"updated_at"`
	// Secret is shown once: in the answer to create and rotate.
	Secret string `json:"secret,omitempty"`
}

func toEndpointJSON(e alertstore.Endpoint) endpointJSON {
	types := e.Types
	if types == nil {
		types = []string{}
	}
	return endpointJSON{ID: e.ID, OrganizationID: e.OrganizationID, URL: e.URL, Format: e.Format, MinSeverity: e.MinSeverity,
		Types: types, Status: e.Status, Failures: e.Failures, LastError: e.LastError, LastDeliveryAt: e.LastDeliveryAt,
		DisabledAt: e.DisabledAt, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
}

type endpointInput struct {
	URL         *string   `json:"url"`
	Format      *string   `json:"format"`
	MinSeverity *string   `json:"min_severity"`
	Types       *[]string `json:"types"`
	Enabled     *bool     `json:"enabled"`
}

// apply validates in and writes its fields into e.
func (in endpointInput) apply(e *alertstore.Endpoint, now int64, ports []int) error {
	if in.URL != nil {
		if err := checkWebhookURL(*in.URL, ports); err != nil {
			return err
		}
		e.URL = *in.URL
	}
	if in.Format != nil {
		if !slices.Contains(alerts.Formats, *in.Format) {
			return periscope.Errorf(periscope.EInvalid, "format must be one of %s.", strings.Join(alerts.Formats, ", "))
		}
		e.Format = *in.Format
	}
	if in.MinSeverity != nil {
		if !slices.Contains(alerts.Severities, *in.MinSeverity) {
			return periscope.Errorf(periscope.EInvalid, "min_severity must be one of %s.", strings.Join(alerts.Severities, ", "))
		}
		e.MinSeverity = *in.MinSeverity
	}
	if in.Types != nil {
		for _, t := range *in.Types {
			if !slices.Contains(alerts.Types, t) {
				return periscope.Errorf(periscope.EInvalid, "types must be alert types (%s).", strings.Join(alerts.Types, ", "))
			}
		}
		e.Types = slices.Compact(slices.Sorted(slices.Values(*in.Types)))
	}
	if in.Enabled != nil {
		switch {
		case *in.Enabled && e.Status == alertstore.EndpointDisabled:
			e.Status, e.Failures, e.DisabledAt = alertstore.EndpointActive, 0, 0
		case !*in.Enabled && e.Status != alertstore.EndpointDisabled:
			e.Status, e.DisabledAt = alertstore.EndpointDisabled, now
		}
	}
	return nil
}

// checkWebhookURL accepts an absolute http(s) URL without credentials
// naming a port the dispatcher may dial (ports; nil allows any), so an
// endpoint that could never be reached is refused when it is created, not
// found failing at delivery. Which addresses it may reach is the egress
// dialer's decision, at delivery.
func checkWebhookURL(raw string, ports []int) error {
	if err := checkText("url", raw, 2048); err != nil {
		return err
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.Fragment != "" {
		return periscope.Errorf(periscope.EInvalid, "url must be an absolute http or https URL without credentials.")
	}
	if ports == nil {
		return nil
	}
	port := 443
	if u.Scheme == "http" {
		port = 80
	}
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return periscope.Errorf(periscope.EInvalid, "url has an invalid port.")
		}
	}
	if !slices.Contains(ports, port) {
		return periscope.Errorf(periscope.EInvalid, "url must use one of the ports %v (port %d is not dialed for webhooks).", ports, port)
	}
	return nil
}

// orgOf returns the caller's organization named by the path (404 if not
// theirs).
func (s *Server) orgOf(r *http.Request) (periscope.Organization, error) {
	return s.orgs.Organization(r.Context(), principalOf(r).Account.ID, r.PathValue("org_id"))
}

// handleCreateWebhook answers POST /enterprise/organizations/{org_id}/webhooks.
func (s *Server) handleCreateWebhook(w http.ResponseWriter, r *http.Request) error {
	o, err := s.orgOf(r)
	if err != nil {
		return err
	}
	var in endpointInput
	if err := decode(r, &in); err != nil {
		return err
	}
	if in.URL == nil {
		return periscope.Errorf(periscope.EMissing, "url is required.")
	}
	e := alertstore.Endpoint{AccountID: o.AccountID, OrganizationID: o.ID, Format: "json", MinSeverity: "medium", Secret: alerts.NewSecret()}
	in.Enabled = nil
	if err := in.apply(&e, s.now().Unix(), s.cfg.WebhookPorts); err != nil {
		return err
	}
	if err := s.alerts.CreateEndpoint(r.Context(), &e); err != nil {
		return err
	}
	out := toEndpointJSON(e)
	out.Secret = e.Secret
	writeJSON(w, http.StatusCreated, out)
	return nil
}

// handleListWebhooks answers GET /enterprise/organizations/{org_id}/webhooks.
func (s *Server) handleListWebhooks(w http.ResponseWriter, r *http.Request) error {
	o, err := s.orgOf(r)
	if err != nil {
		return err
	}
	eps, err := s.alerts.Endpoints(r.Context(), o.AccountID, o.ID)
	if err != nil {
		return err
	}
	out := make([]endpointJSON, len(eps))
	for i, e := range eps {
		out[i] = toEndpointJSON(e)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// webhookOf returns the endpoint named by the path, of the caller's
// organization.
func (s *Server) webhookOf(r *http.Request) (alertstore.Endpoint, error) {
	o, err := s.orgOf(r)
	if err != nil {
		return alertstore.Endpoint{}, err
	}
	return s.alerts.Endpoint(r.Context(), o.AccountID, o.ID, r.PathValue("webhook_id"))
}

// handleUpdateWebhook answers PATCH .../webhooks/{webhook_id}: url, format,
// min_severity, types, and enabled (true re-enables a disabled endpoint).
func (s *Server) handleUpdateWebhook(w http.ResponseWriter, r *http.Request) error {
	e, err := s.webhookOf(r)
	if err != nil {
		return err
	}
	var in endpointInput
	if err := decode(r, &in); err != nil {
		return err
	}
	if err := in.apply(&e, s.now().Unix(), s.cfg.WebhookPorts); err != nil {
		return err
	}
	if err := s.alerts.UpdateEndpoint(r.Context(), &e); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toEndpointJSON(e))
	return nil
}

// handleRotateWebhookSecret answers POST .../webhooks/{webhook_id}/rotate-secret:
// a new secret, shown once; the old one keeps signing for 24 hours, so
// deliveries carry both signatures while receivers switch.
func (s *Server) handleRotateWebhookSecret(w http.ResponseWriter, r *http.Request) error {
	e, err := s.webhookOf(r)
	if err != nil {
		return err
	}
	e.PreviousSecret, e.PreviousUntil, e.Secret = e.Secret, s.now().Add(secretOverlap).Unix(), alerts.NewSecret()
	if err := s.alerts.UpdateEndpoint(r.Context(), &e); err != nil {
		return err
	}
	out := toEndpointJSON(e)
	out.Secret = e.Secret
	writeJSON(w, http.StatusOK, out)
	return nil
}

// handleTestWebhook answers POST .../webhooks/{webhook_id}/test: a test
// message is queued and delivered like an alert; its webhook-id is returned.
func (s *Server) handleTestWebhook(w http.ResponseWriter, r *http.Request) error {
	e, err := s.webhookOf(r)
	if err != nil {
		return err
	}
	id, err := s.alerts.SendTest(r.Context(), e)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "queued", "delivery_id": id})
	return nil
}

// handleDeleteWebhook answers DELETE .../webhooks/{webhook_id}.
func (s *Server) handleDeleteWebhook(w http.ResponseWriter, r *http.Request) error {
	o, err := s.orgOf(r)
	if err != nil {
		return err
	}
	if err := s.alerts.DeleteEndpoint(r.Context(), o.AccountID, o.ID, r.PathValue("webhook_id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "success"})
	return nil
}
