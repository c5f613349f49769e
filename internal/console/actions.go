package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/periscope-oss/periscope/internal/periscope"
)

// The pages that change something. Each POST is checked by signedIn
// (session, same origin, CSRF token), calls the API route that makes the
// change, and either redirects back with a fixed result message (flash) or,
// for an answer shown once (a webhook secret, a new key), renders it.

// flashes are the result messages a redirect may name (?done=...): fixed
// texts, so nothing a link carries is shown as the console's word.
var flashes = map[string]string{
	"org-created": "Organization created.", "org-deleted": "Organization deleted.",
	"asset-added": "Asset added.", "asset-removed": "Asset removed.", "verified": "Domain verified.",
	"alerts-updated": "Alerts updated.", "webhook-tested": "Test delivery queued.",
	"key-revoked": "Key revoked; its console sessions have ended.", "webhook-deleted": "Webhook deleted.",
}

func flash(q url.Values) string { return flashes[q.Get("done")] }

func back(w http.ResponseWriter, r *http.Request, path, done string) error {
	http.Redirect(w, r, path+"?done="+done, http.StatusSeeOther)
	return nil
}

// formError renders a rejected form's message on its page: a validation,
// conflict or quota error is the user's to fix; anything else is the
// page's error.
func formError(err error) (string, bool) {
	switch statusOf(err) {
	case http.StatusBadRequest, http.StatusConflict, http.StatusForbidden, http.StatusTooManyRequests,
		http.StatusUnprocessableEntity, http.StatusRequestEntityTooLarge, http.StatusServiceUnavailable:
		if n := tierNotice(err); n != "" {
			return n, true
		}
		return messageOf(err), true
	}
	return "", false
}

// --- Organizations ---

// handleOrganizations answers GET /organizations: the list, with the
// create form.
func (c *Console) handleOrganizations(w http.ResponseWriter, v *visit) error {
	return c.organizationsPage(w, v, http.StatusOK, flash(v.r.URL.Query()), "")
}

func (c *Console) organizationsPage(w http.ResponseWriter, v *visit, status int, flash, notice string) error {
	orgs, err := v.fetch("/api/v1/enterprise/organizations?per_page=1000")
	if err != nil {
		return err
	}
	if notice == "" {
		notice = orgs.Notice
	}
	return c.renderStatus(w, v, status, "organizations", page{Title: "Organizations", Flash: flash, Notice: notice, Data: orgs})
}

// handleCreateOrganization answers POST /organizations.
func (c *Console) handleCreateOrganization(w http.ResponseWriter, v *visit) error {
	f := v.r.PostForm
	var out map[string]any
	err := v.call(http.MethodPost, "/api/v1/enterprise/organizations", map[string]string{"name": f.Get("name"), "description": f.Get("description")}, &out)
	if msg, ok := formError(err); ok {
		return c.organizationsPage(w, v, statusOf(err), "", msg)
	}
	if err != nil {
		return err
	}
	id, _ := out["id"].(string)
	return back(w, v.r, "/organizations/"+url.PathEscape(id), "org-created")
}

// handleOrganization answers GET /organizations/{id}: the organization,
// its assets with their verification and the TXT record to publish.
func (c *Console) handleOrganization(w http.ResponseWriter, v *visit) error {
	return c.organizationPage(w, v, http.StatusOK, flash(v.r.URL.Query()), "")
}

func (c *Console) organizationPage(w http.ResponseWriter, v *visit, status int, flash, notice string) error {
	id := v.r.PathValue("id")
	org, err := v.fetch("/api/v1/enterprise/organizations/" + url.PathEscape(id))
	if err != nil {
		return err
	}
	if notice == "" {
		notice = org.Notice
	}
	title := "Organization"
	if m, ok := org.Data.(map[string]any); ok {
		title, _ = m["name"].(string)
	}
	return c.renderStatus(w, v, status, "organization", page{Title: title, Flash: flash, Notice: notice, Data: org})
}

// handleDeleteOrganization answers POST /organizations/{id}/delete.
func (c *Console) handleDeleteOrganization(w http.ResponseWriter, v *visit) error {
	err := v.call(http.MethodDelete, "/api/v1/enterprise/organizations/"+url.PathEscape(v.r.PathValue("id")), nil, nil)
	if msg, ok := formError(err); ok {
		return c.organizationPage(w, v, statusOf(err), "", msg)
	}
	if err != nil {
		return err
	}
	return back(w, v.r, "/organizations", "org-deleted")
}

// assetTarget is the API route and body of an asset form: kind "domain"
// or "ip-range".
func assetTarget(v *visit) (string, map[string]string, error) {
	kind, value := v.r.PostForm.Get("kind"), strings.TrimSpace(v.r.PostForm.Get("value"))
	base := "/api/v1/enterprise/organizations/" + url.PathEscape(v.r.PathValue("id"))
	switch kind {
	case "domain":
		return base + "/domains", map[string]string{"domain": value}, nil
	case "ip-range":
		return base + "/ip-ranges", map[string]string{"ip_range": value}, nil
	}
	return "", nil, periscope.Errorf(periscope.EInvalid, "kind must be domain or ip-range.")
}

// handleAddAsset answers POST /organizations/{id}/assets.
func (c *Console) handleAddAsset(w http.ResponseWriter, v *visit) error {
	return c.assetChange(w, v, http.MethodPost, "asset-added")
}

// handleRemoveAsset answers POST /organizations/{id}/assets/remove.
func (c *Console) handleRemoveAsset(w http.ResponseWriter, v *visit) error {
	return c.assetChange(w, v, http.MethodDelete, "asset-removed")
}

func (c *Console) assetChange(w http.ResponseWriter, v *visit, method, done string) error {
	target, body, err := assetTarget(v)
	if err == nil {
		err = v.call(method, target, body, nil)
	}
	if msg, ok := formError(err); ok {
		return c.organizationPage(w, v, statusOf(err), "", msg)
	}
	if err != nil {
		return err
	}
	return back(w, v.r, "/organizations/"+url.PathEscape(v.r.PathValue("id")), done)
}

// handleVerifyDomain answers POST /organizations/{id}/verify: "verify
// now" (the API looks up the TXT record).
func (c *Console) handleVerifyDomain(w http.ResponseWriter, v *visit) error {
	id := v.r.PathValue("id")
	err := v.call(http.MethodPost, "/api/v1/enterprise/organizations/"+url.PathEscape(id)+"/domains/verify",
		map[string]string{"domain": v.r.PostForm.Get("domain")}, nil)
	if msg, ok := formError(err); ok {
		return c.organizationPage(w, v, statusOf(err), "", msg)
	}
	if err != nil {
		return err
	}
	return back(w, v.r, "/organizations/"+url.PathEscape(id), "verified")
}

// --- Alerts ---

var alertFilters = []string{"state", "severity", "type", "org", "from", "to", "page"}

// handleAlerts answers GET /alerts: the filtered list with single and bulk
// actions.
func (c *Console) handleAlerts(w http.ResponseWriter, v *visit) error {
	q := v.r.URL.Query()
	api := url.Values{}
	for _, k := range alertFilters {
		if s := q.Get(k); s != "" {
			api.Set(k, s)
		}
	}
	target := "/api/v1/enterprise/alerts"
	if len(api) > 0 {
		target += "?" + api.Encode()
	}
	list, err := v.fetch(target)
	if err != nil {
		return err
	}
	orgs, err := v.fetch("/api/v1/enterprise/organizations?per_page=1000")
	if err != nil {
		return err
	}
	filters := map[string]string{}
	for _, k := range alertFilters {
		filters[k] = q.Get(k)
	}
	data := map[string]any{"Alerts": list, "Orgs": orgs, "Filter": filters, "Page": pageNumber(q),
		"Return": v.r.URL.RequestURI()}
	return c.renderStatus(w, v, http.StatusOK, "alerts", page{Title: "Alerts", Flash: flash(q), Notice: list.Notice, Data: data})
}

// handleAlert answers GET /alerts/{id}: one alert with its evidence.
// Another account's alert is the same 404 page as an unknown id.
func (c *Console) handleAlert(w http.ResponseWriter, v *visit) error {
	if err := c.api.Allow(v.r, v.p, true); err != nil {
		if n := tierNotice(err); n != "" {
			return c.renderStatus(w, v, http.StatusForbidden, "alert", page{Title: "Alert", Notice: n})
		}
		return err
	}
	a, err := c.alerts.Alert(v.r.Context(), v.p.Account.ID, v.r.PathValue("id"))
	if err != nil {
		return err
	}
	var evidence any
	json.Unmarshal(a.Evidence, &evidence)
	return c.renderStatus(w, v, http.StatusOK, "alert", page{Title: a.Title, Flash: flash(v.r.URL.Query()),
		Data: map[string]any{"Alert": a, "Evidence": evidence, "Return": "/alerts/" + url.PathEscape(a.ID)}})
}

var alertActions = map[string]string{"acknowledge": "acknowledge", "resolve": "resolve", "suppress": "suppress"}

// handleAlertState answers POST /alerts/state: acknowledge, resolve or
// suppress the alerts checked (id, repeated), then back to the list.
func (c *Console) handleAlertState(w http.ResponseWriter, v *visit) error {
	f := v.r.PostForm
	action, ok := alertActions[f.Get("action")]
	if !ok {
		return periscope.Errorf(periscope.EInvalid, "action must be acknowledge, resolve or suppress.")
	}
	ids := f["id"]
	if len(ids) == 0 || len(ids) > 500 {
		return periscope.Errorf(periscope.EInvalid, "Check between 1 and 500 alerts.")
	}
	for _, id := range ids {
		if err := v.call(http.MethodPost, "/api/v1/enterprise/alerts/"+url.PathEscape(id)+"/"+action, nil, nil); err != nil {
			return err
		}
	}
	ret := f.Get("return")
	if safeNext(ret) != ret || !(strings.HasPrefix(ret, "/alerts")) {
		ret = "/alerts"
	}
	u, _ := url.Parse(ret)
	q := u.Query()
	q.Set("done", "alerts-updated")
	u.RawQuery = q.Encode()
	http.Redirect(w, v.r, u.RequestURI(), http.StatusSeeOther)
	return nil
}

// --- Search ---

// searchFacets are the facets shown beside the results.
const searchFacets = "port:6,product:6,country:6,org:6"

// facetGroup is one facet's values, each with the search that adds it.
type facetGroup struct {
	Name   string
	Values []facetValue
}

type facetValue struct {
	Value string
	Count json.Number
	Add   string // the query with name:value added
}

// handleSearch answers GET /search?q=&page=: the host query language
// (GET /hosts/search: a credit a page), 50 hosts a page, and export
// links. Facets are counted apart (handleSearchFacets, free) and loaded
// into the page by htmx, so the results do not wait for them; without
// JavaScript, ?facets=1 renders them inline.
func (c *Console) handleSearch(w http.ResponseWriter, v *visit) error {
	q := v.r.URL.Query()
	text := strings.TrimSpace(q.Get("q"))
	pageN := pageNumber(q)
	data := map[string]any{"Q": text, "Page": pageN}
	if text == "" {
		return c.render(w, v, "search", "Search", data)
	}
	api := url.Values{"query": {text}, "page": {strconv.Itoa(pageN)}, "limit": {"50"}}
	var res struct {
		Total int   `json:"total"`
		Limit int   `json:"limit"`
		Match []any `json:"matches"`
	}
	err := v.call(http.MethodGet, "/api/v1/hosts/search?"+api.Encode(), nil, &res)
	if msg, ok := formError(err); ok {
		return c.renderStatus(w, v, http.StatusOK, "search", page{Title: "Search", Notice: msg, Data: data})
	}
	if err != nil {
		return err
	}
	data["Total"], data["Matches"] = res.Total, res.Match
	if res.Limit > 0 {
		data["Pages"] = (res.Total + res.Limit - 1) / res.Limit
	}
	if q.Get("facets") == "1" {
		if data["Facets"], err = facets(v, text); err != nil {
			return err
		}
	}
	return c.render(w, v, "search", "Search", data)
}

// handleSearchFacets answers GET /search/facets?q=: the facet panel of a
// query (GET /hosts/count, free), the fragment htmx puts beside the
// results.
func (c *Console) handleSearchFacets(w http.ResponseWriter, v *visit) error {
	text := strings.TrimSpace(v.r.URL.Query().Get("q"))
	groups, err := facets(v, text)
	if _, ok := formError(err); ok {
		groups, err = nil, nil // the results page shows the query's error
	}
	if err != nil {
		return err
	}
	return c.renderFragment(w, v, "search", "facets", map[string]any{"Q": text, "Facets": groups})
}

// facets counts the facets of a query, each value with the query that
// adds it (values already in the query left out).
func facets(v *visit, text string) ([]facetGroup, error) {
	var res struct {
		Facets map[string][]map[string]any `json:"facets"`
	}
	if err := v.get("/api/v1/hosts/count?"+url.Values{"query": {text}, "facets": {searchFacets}}.Encode(), &res); err != nil {
		return nil, err
	}
	var groups []facetGroup
	for _, name := range strings.Split(searchFacets, ",") {
		name, _, _ = strings.Cut(name, ":")
		g := facetGroup{Name: name}
		for _, fv := range res.Facets[name] {
			val := fmt.Sprint(fv["value"])
			n, _ := fv["count"].(json.Number)
			term := name + ":" + quoteValue(val)
			if slices.Contains(strings.Fields(text), term) {
				continue // already in the query
			}
			g.Values = append(g.Values, facetValue{Value: val, Count: n, Add: text + " " + term})
		}
		if len(g.Values) > 0 {
			groups = append(groups, g)
		}
	}
	return groups, nil
}

// quoteValue writes a facet value as the query language reads it: quoted
// when it holds anything but letters, digits and . - _.
func quoteValue(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			return strconv.Quote(s)
		}
	}
	return s
}

var exportFormats = map[string]bool{"csv": true, "ndjson": true, "ips": true}

// handleSearchExport answers GET /search/export?q=&format=: every match,
// streamed by GET /hosts/export as the API streams it (and charged as the
// API charges it).
func (c *Console) handleSearchExport(w http.ResponseWriter, v *visit) error {
	q := v.r.URL.Query()
	format := q.Get("format")
	if !exportFormats[format] {
		return periscope.Errorf(periscope.EInvalid, "format must be csv, ndjson or ips.")
	}
	c.api.Forward(w, v.r, v.p, http.MethodGet, "/api/v1/hosts/export?"+url.Values{"query": {q.Get("q")}, "format": {format}}.Encode())
	return nil
}

// --- Scans ---

// handleScans answers GET /scans: the account's organizations and their
// assets, with a form to start an on-demand scan of a verified one.
func (c *Console) handleScans(w http.ResponseWriter, v *visit) error {
	return c.scansPage(w, v, http.StatusOK, nil, "")
}

func (c *Console) scansPage(w http.ResponseWriter, v *visit, status int, started any, notice string) error {
	orgs, err := v.fetch("/api/v1/enterprise/organizations?per_page=1000")
	if err != nil {
		return err
	}
	if notice == "" {
		notice = orgs.Notice
	}
	var assets []any
	if list, ok := orgs.Data.([]any); ok {
		for _, o := range list {
			m, _ := o.(map[string]any)
			id, _ := m["id"].(string)
			var detail map[string]any
			if err := v.get("/api/v1/enterprise/organizations/"+url.PathEscape(id), &detail); err != nil {
				return err
			}
			for _, a := range asSlice(detail["assets"]) {
				am, _ := a.(map[string]any)
				am["organization"] = m["name"]
				assets = append(assets, am)
			}
		}
	}
	return c.renderStatus(w, v, status, "scans", page{Title: "Scans", Notice: notice,
		Data: map[string]any{"Assets": assets, "Started": started}})
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// handleStartScan answers POST /scans: an on-demand scan of target (a
// credit, unless the same scan is already running).
func (c *Console) handleStartScan(w http.ResponseWriter, v *visit) error {
	var out map[string]any
	err := v.call(http.MethodGet, "/api/v1/enterprise/on-demand-scans?target="+url.QueryEscape(v.r.PostForm.Get("target")), nil, &out)
	if msg, ok := formError(err); ok {
		return c.scansPage(w, v, statusOf(err), nil, msg)
	}
	if err != nil {
		return err
	}
	return c.scansPage(w, v, http.StatusOK, out, "")
}
