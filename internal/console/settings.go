package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/periscope-oss/periscope/internal/periscope"
)

// settings is the data of the settings page.
type settings struct {
	Status   section // credits and usage (GET /auth/status)
	Keys     []periscope.APIKey
	KeyID    string // the session's own key
	Webhooks []orgWebhooks
	Orgs     section
	// Shown once, right after the action that made them.
	NewKey    string
	NewSecret string
}

type orgWebhooks struct {
	OrgID, OrgName string
	Webhooks       section
}

// handleSettings answers GET /settings.
func (c *Console) handleSettings(w http.ResponseWriter, v *visit) error {
	return c.settingsPage(w, v, http.StatusOK, &settings{}, flash(v.r.URL.Query()), "")
}

func (c *Console) settingsPage(w http.ResponseWriter, v *visit, status int, s *settings, flash, notice string) error {
	var err error
	if s.Status, err = v.fetch("/api/v1/auth/status"); err != nil {
		return err
	}
	// The keys have no API route: the console applies the API's rate limit
	// itself, and lists only the session's account's keys.
	if err := c.api.Allow(v.r, v.p, false); err != nil {
		return err
	}
	if s.Keys, err = c.keys.Keys(v.r.Context(), v.p.Account.ID); err != nil {
		return err
	}
	s.KeyID = v.p.Key.ID
	if s.Orgs, err = v.fetch("/api/v1/enterprise/organizations?per_page=1000"); err != nil {
		return err
	}
	for i, o := range asSlice(s.Orgs.Data) {
		if i == 20 {
			break // the first twenty organizations' webhooks; the rest are a page away in the API
		}
		m, _ := o.(map[string]any)
		id, _ := m["id"].(string)
		name, _ := m["name"].(string)
		hooks, err := v.fetch("/api/v1/enterprise/organizations/" + url.PathEscape(id) + "/webhooks")
		if err != nil {
			return err
		}
		s.Webhooks = append(s.Webhooks, orgWebhooks{OrgID: id, OrgName: name, Webhooks: hooks})
	}
	return c.renderStatus(w, v, status, "settings", page{Title: "Settings", Flash: flash, Notice: notice, Data: s})
}

// handleCreateWebhook answers POST /settings/webhooks: the new webhook's
// signing secret is shown once, on the page this answers.
func (c *Console) handleCreateWebhook(w http.ResponseWriter, v *visit) error {
	f := v.r.PostForm
	body := map[string]any{"url": strings.TrimSpace(f.Get("url"))}
	if s := f.Get("min_severity"); s != "" {
		body["min_severity"] = s
	}
	if s := f.Get("format"); s != "" {
		body["format"] = s
	}
	var out map[string]any
	err := v.call(http.MethodPost, "/api/v1/enterprise/organizations/"+url.PathEscape(f.Get("org"))+"/webhooks", body, &out)
	if msg, ok := formError(err); ok {
		return c.settingsPage(w, v, statusOf(err), &settings{}, "", msg)
	}
	if err != nil {
		return err
	}
	secret, _ := out["secret"].(string)
	return c.settingsPage(w, v, http.StatusCreated, &settings{NewSecret: secret},
		"Webhook created. Copy its signing secret now: it is not shown again.", "")
}

// handleWebhookAction answers POST /settings/webhooks/action: test,
// rotate-secret or delete a webhook.
func (c *Console) handleWebhookAction(w http.ResponseWriter, v *visit) error {
	f := v.r.PostForm
	target := "/api/v1/enterprise/organizations/" + url.PathEscape(f.Get("org")) + "/webhooks/" + url.PathEscape(f.Get("webhook"))
	method := http.MethodPost
	switch f.Get("action") {
	case "test":
		target += "/test"
	case "rotate":
		target += "/rotate-secret"
	case "delete":
		method = http.MethodDelete
	default:
		return periscope.Errorf(periscope.EInvalid, "action must be test, rotate or delete.")
	}
	var out map[string]any
	err := v.call(method, target, nil, &out)
	if msg, ok := formError(err); ok {
		return c.settingsPage(w, v, statusOf(err), &settings{}, "", msg)
	}
	if err != nil {
		return err
	}
	switch f.Get("action") {
	case "rotate":
		secret, _ := out["secret"].(string)
		return c.settingsPage(w, v, http.StatusOK, &settings{NewSecret: secret},
			"Secret rotated; the old one keeps signing for 24 hours. Copy the new one now: it is not shown again.", "")
	case "test":
		return back(w, v.r, "/settings", "webhook-tested")
	}
	return back(w, v.r, "/settings", "webhook-deleted")
}

// handleCreateKey answers POST /settings/keys: a new key of the signed-in
// user, shown once on the page this answers.
func (c *Console) handleCreateKey(w http.ResponseWriter, v *visit) error {
	if err := c.api.Allow(v.r, v.p, false); err != nil {
		return err
	}
	name := strings.TrimSpace(v.r.PostForm.Get("name"))
	if len(name) > 100 || strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return c.settingsPage(w, v, http.StatusBadRequest, &settings{}, "", "A key name is one line of at most 100 characters.")
	}
	key, _, err := c.keys.CreateKey(v.r.Context(), v.p.Account.ID, v.p.User.ID, name)
	if err != nil {
		return err
	}
	return c.settingsPage(w, v, http.StatusCreated, &settings{NewKey: key},
		"Key created. Copy it now: it is not shown again.", "")
}

// handleRevokeKey answers POST /settings/keys/revoke: revoking a key ends
// its console sessions (the session's own key signs you out).
func (c *Console) handleRevokeKey(w http.ResponseWriter, v *visit) error {
	if err := c.api.Allow(v.r, v.p, false); err != nil {
		return err
	}
	if _, err := c.keys.RevokeAccountKey(v.r.Context(), v.p.Account.ID, v.r.PostForm.Get("key")); err != nil {
		return err
	}
	return back(w, v.r, "/settings", "key-revoked")
}
