package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/console"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// env is the API with the console mounted, on a fresh database.
type env struct {
	*apitest.Env
	t testing.TB
}

func newEnv(t testing.TB, engine string, cfg ...api.Config) *env {
	t.Helper()
	var o apitest.Options
	if len(cfg) > 0 {
		o.Config = &cfg[0]
	}
	e := apitest.New(t, engine, o)
	c, err := console.New(console.Config{Version: "test"}, e.Server, e.Store, e.Store, alertstore.New(e.Store), nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Mount()
	return &env{Env: e, t: t}
}

func each(t *testing.T, fn func(t *testing.T, e *env)) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) { fn(t, newEnv(t, engine)) })
	}
}

// browser is a client with its own cookies that does not follow
// redirects (the tests look at them).
type browser struct {
	e   *env
	c   *http.Client
	jar *cookiejar.Jar
}

func (e *env) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{e: e, jar: jar, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

type page struct {
	Status int
	Header http.Header
	Body   string
}

func (b *browser) do(req *http.Request) page {
	b.e.t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return page{Status: resp.StatusCode, Header: resp.Header, Body: string(body)}
}

func (b *browser) get(path string) page {
	b.e.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.e.HTTP.URL+path, nil)
	return b.do(req)
}

// post submits a form as the page's own form would (same origin).
func (b *browser) post(path string, form url.Values) page {
	b.e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.e.HTTP.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.e.HTTP.URL)
	return b.do(req)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// token is the CSRF token of the page at path.
func (b *browser) token(path string) string {
	b.e.t.Helper()
	p := b.get(path)
	m := csrfField.FindStringSubmatch(p.Body)
	if m == nil {
		b.e.t.Fatalf("no CSRF token on %s (%d): %s", path, p.Status, p.Body)
	}
	return m[1]
}

// signIn signs in with key and returns the page sign-in redirected to.
func (b *browser) signIn(key, next string) page {
	b.e.t.Helper()
	tok := b.token("/login")
	return b.post("/login", url.Values{"csrf": {tok}, "key": {key}, "next": {next}})
}

func (b *browser) mustSignIn(key string) {
	b.e.t.Helper()
	if p := b.signIn(key, "/"); p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/" {
		b.e.t.Fatalf("sign-in: %d %s", p.Status, p.Header.Get("Location"))
	}
}

func enterprise(e *env, company string) (periscope.Account, string) {
	return e.Account(periscope.Account{Company: company, Plan: "enterprise", Enterprise: true, CreditsPerMonth: 1000,
		MaxResultsPerRequest: 100})
}

// addAlert stores an open alert for an organization of the account.
func addAlert(t testing.TB, e *env, accountID, orgID, title string) alertstore.Alert {
	t.Helper()
	a := alertstore.Alert{AccountID: accountID, OrganizationID: orgID, Type: "new_port", Severity: "high", Title: title,
		Message: "Port 8443 opened on api.example.com.", Host: "api.example.com", Domain: "example.com",
		Fingerprint: title, LastSeen: e.Clock.Now().Unix(), Evidence: json.RawMessage(`{"port":8443}`)}
	as := alertstore.New(e.Store)
	if err := e.Store.Tx(context.Background(), func(tx *store.Tx) error {
		_, err := as.UpsertAlert(context.Background(), tx, &a)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return a
}

// newOrg creates an organization of the account.
func newOrg(t testing.TB, e *env, accountID, name string) periscope.Organization {
	t.Helper()
	o := periscope.Organization{AccountID: accountID, Name: name}
	if err := e.Store.CreateOrganization(context.Background(), &o); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestSignInRedirectsBackAndSignsOut(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		_, key := enterprise(e, "Acme")
		b := e.browser()
		p := b.get("/organizations?x=1")
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/login?next=%2Forganizations%3Fx%3D1" {
			t.Fatalf("signed-out page: %d %q", p.Status, p.Header.Get("Location"))
		}
		// A wrong key: 401, and the key typed is not echoed.
		bad := strings.Repeat("ab", 32)
		p = b.signIn(bad, "/organizations?x=1")
		if p.Status != http.StatusUnauthorized || strings.Contains(p.Body, bad) {
			t.Fatalf("wrong key: %d (echoed: %v)", p.Status, strings.Contains(p.Body, bad))
		}
		p = b.signIn(key, "/organizations?x=1")
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/organizations?x=1" {
			t.Fatalf("sign-in: %d %q", p.Status, p.Header.Get("Location"))
		}
		var session *http.Cookie
		for _, c := range (&http.Response{Header: p.Header}).Cookies() {
			if c.Name == "periscope_session" && c.Value != "" {
				session = c
			}
		}
		if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || session.Value == key {
			t.Fatalf("session cookie %+v", session)
		}
		p = b.get("/organizations?x=1")
		if p.Status != 200 || !strings.Contains(p.Body, "Acme") || strings.Contains(p.Body, key) {
			t.Fatalf("signed-in page: %d (key shown: %v)", p.Status, strings.Contains(p.Body, key))
		}
		// Sign-out needs the token; then the session is gone from the
		// database, so the old cookie no longer works anywhere.
		if p := b.post("/logout", url.Values{"csrf": {"0000"}}); p.Status != http.StatusForbidden {
			t.Fatalf("sign-out without the token: %d", p.Status)
		}
		if p := b.post("/logout", url.Values{"csrf": {b.token("/logout")}}); p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/login" {
			t.Fatalf("sign-out: %d %q", p.Status, p.Header.Get("Location"))
		}
		replay := e.browser()
		u, _ := url.Parse(e.HTTP.URL)
		replay.jar.SetCookies(u, []*http.Cookie{{Name: "periscope_session", Value: session.Value}})
		if p := replay.get("/"); p.Status != http.StatusSeeOther {
			t.Fatalf("old session after sign-out: %d", p.Status)
		}
	})
}

func TestSafeNextStaysOnSite(t *testing.T) {
	e := newEnv(t, "sqlite")
	_, key := enterprise(e, "Acme")
	for _, next := range []string{"//evil.example/x", "https://evil.example/", "/\\evil.example", "javascript:alert(1)", "/login", ""} {
		b := e.browser()
		if p := b.signIn(key, next); p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/" {
			t.Errorf("next %q: %d %q, want /", next, p.Status, p.Header.Get("Location"))
		}
	}
}

func TestSignInNeedsItsFormToken(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		_, key := enterprise(e, "Acme")
		b := e.browser()
		b.token("/login")
		// A login form posted from another site (login CSRF): no token, or
		// a token not matching the cookie.
		for _, tok := range []string{"", strings.Repeat("0", 64)} {
			if p := b.post("/login", url.Values{"csrf": {tok}, "key": {key}}); p.Status != http.StatusForbidden {
				t.Errorf("token %q: %d", tok, p.Status)
			}
		}
	})
}

func TestFormsNeedTokenAndSameOrigin(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		a, key := enterprise(e, "Acme")
		b := e.browser()
		b.mustSignIn(key)
		count := func() int {
			orgs, err := e.Store.Organizations(context.Background(), a.ID)
			if err != nil {
				t.Fatal(err)
			}
			return len(orgs)
		}
		before := count()
		tok := b.token("/organizations")
		if p := b.post("/organizations", url.Values{"csrf": {strings.Repeat("1", 64)}, "name": {"Forged"}}); p.Status != http.StatusForbidden {
			t.Errorf("wrong token: %d", p.Status)
		}
		req, _ := http.NewRequest(http.MethodPost, e.HTTP.URL+"/organizations", strings.NewReader(url.Values{"csrf": {tok}, "name": {"Forged"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "https://evil.example")
		if p := b.do(req); p.Status != http.StatusForbidden {
			t.Errorf("cross-origin post: %d", p.Status)
		}
		req, _ = http.NewRequest(http.MethodPost, e.HTTP.URL+"/organizations", strings.NewReader(url.Values{"csrf": {tok}, "name": {"Forged"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		if p := b.do(req); p.Status != http.StatusForbidden {
			t.Errorf("cross-site post: %d", p.Status)
		}
		if n := count(); n != before {
			t.Fatalf("refused forms created %d organizations", n-before)
		}
		p := b.post("/organizations", url.Values{"csrf": {tok}, "name": {"Red team"}, "description": {"<script>x</script>"}})
		if p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Header.Get("Location"), "/organizations/") {
			t.Fatalf("create: %d %q", p.Status, p.Header.Get("Location"))
		}
		if n := count(); n != before+1 {
			t.Fatalf("created %d organizations, want 1", n-before)
		}
		p = b.get(p.Header.Get("Location"))
		if p.Status != 200 || !strings.Contains(p.Body, "Organization created.") || strings.Contains(p.Body, "<script>x</script>") ||
			!strings.Contains(p.Body, "&lt;script&gt;x&lt;/script&gt;") {
			t.Fatalf("organization page: %d, description escaped: %v", p.Status, strings.Contains(p.Body, "&lt;script&gt;"))
		}
		// The API's validation is the console's: an empty name is its 400,
		// shown on the page, and creates nothing.
		if p := b.post("/organizations", url.Values{"csrf": {tok}, "name": {"  "}}); p.Status != http.StatusBadRequest || !strings.Contains(p.Body, "name is required") {
			t.Errorf("empty name: %d", p.Status)
		}
	})
}

// noInline finds what the Content-Security-Policy would block: inline
// script, event-handler attributes, style attributes and elements.
var noInline = regexp.MustCompile(`(?i)<script[^>]*>[^<]|\son[a-z]+\s*=|\sstyle\s*=|<style|javascript:`)

var scriptTag = regexp.MustCompile(`(?i)<script[^>]*>`)

// inline returns what the Content-Security-Policy would block on a page.
func inline(body string) string {
	if m := noInline.FindString(body); m != "" {
		return m
	}
	for _, tag := range scriptTag.FindAllString(body, -1) {
		if !strings.Contains(tag, ` src="/assets/`) {
			return tag
		}
	}
	return ""
}

func TestEveryPageIsSafeAndAnswers(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		a, key := enterprise(e, "Acme")
		org := newOrg(t, e, a.ID, "Acme Org")
		al := addAlert(t, e, a.ID, org.ID, "Port 8443 opened")
		if _, err := e.Hosts.UpsertHosts(context.Background(), []host.Host{{Host: "api.example.com", Domain: "example.com", TLD: "com", Subdomain: "api",
			IPAddress: "192.0.2.10", NetworkPorts: []int{443, 8443}, HTTPTitle: "Example API"}}); err != nil {
			t.Fatal(err)
		}
		b := e.browser()
		b.mustSignIn(key)
		for _, path := range []string{"/", "/search", "/search?q=domain:example.com", "/hosts/api.example.com", "/hosts/api.example.com?history=1", "/domains/example.com",
			"/organizations", "/organizations/" + org.ID, "/alerts", "/alerts?state=open&severity=high", "/alerts/" + al.ID,
			"/vulnerabilities", "/vulnerabilities?q=log4j", "/brand", "/darkweb", "/scans", "/settings", "/logout"} {
			p := b.get(path)
			if p.Status != 200 {
				t.Errorf("%s: %d: %s", path, p.Status, p.Body)
				continue
			}
			h := p.Header
			if h.Get("Content-Security-Policy") == "" || !strings.Contains(h.Get("Content-Security-Policy"), "script-src 'self'") ||
				strings.Contains(h.Get("Content-Security-Policy"), "unsafe") || h.Get("X-Frame-Options") != "DENY" ||
				h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Cache-Control") != "no-store" {
				t.Errorf("%s: headers %v", path, h)
			}
			if m := inline(p.Body); m != "" {
				t.Errorf("%s: inline code or style the CSP blocks: %q", path, m)
			}
			if strings.Contains(p.Body, key) {
				t.Errorf("%s: the key is on the page", path)
			}
		}
		if p := b.get("/hosts/api.example.com"); !strings.Contains(p.Body, "Example API") || !strings.Contains(p.Body, "8443") {
			t.Errorf("host page lacks the host's data")
		}
		if p := b.get("/search?q=domain:example.com"); !strings.Contains(p.Body, `href="/hosts/api.example.com"`) {
			t.Errorf("search page lacks the host")
		}
		if p := b.get("/alerts/" + al.ID); !strings.Contains(p.Body, "Port 8443 opened") || !strings.Contains(p.Body, "8443") {
			t.Errorf("alert page lacks the alert and its evidence")
		}
		if p := b.get("/no-such-page"); p.Status != 404 {
			t.Errorf("unknown page: %d", p.Status)
		}
	})
}

func TestAlertActionsAndTenancy(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		a, keyA := enterprise(e, "Acme")
		_, keyB := enterprise(e, "Bravo")
		org := newOrg(t, e, a.ID, "Acme Org")
		al := addAlert(t, e, a.ID, org.ID, "Port 8443 opened")
		other := addAlert(t, e, a.ID, org.ID, "Port 22 opened")
		state := func(id string) string {
			x, err := alertstore.New(e.Store).Alert(context.Background(), a.ID, id)
			if err != nil {
				t.Fatal(err)
			}
			return x.State
		}
		// B cannot see or change A's alert, organization or host of A's
		// organization: the same 404 page as an unknown id.
		bb := e.browser()
		bb.mustSignIn(keyB)
		for _, path := range []string{"/alerts/" + al.ID, "/organizations/" + org.ID} {
			if p := bb.get(path); p.Status != http.StatusNotFound || strings.Contains(p.Body, "Port 8443") {
				t.Errorf("B opens A's %s: %d", path, p.Status)
			}
		}
		tokB := bb.token("/alerts")
		if p := bb.post("/alerts/state", url.Values{"csrf": {tokB}, "id": {al.ID}, "action": {"acknowledge"}}); p.Status != http.StatusNotFound {
			t.Errorf("B acknowledges A's alert: %d", p.Status)
		}
		if s := state(al.ID); s != alertstore.StateOpen {
			t.Fatalf("A's alert is %s after B's attempt", s)
		}
		// A acknowledges one, then resolves both at once.
		ba := e.browser()
		ba.mustSignIn(keyA)
		tok := ba.token("/alerts")
		p := ba.post("/alerts/state", url.Values{"csrf": {tok}, "id": {al.ID}, "action": {"acknowledge"}, "return": {"/alerts/" + al.ID}})
		if p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Header.Get("Location"), "/alerts/"+al.ID+"?") {
			t.Fatalf("acknowledge: %d %q", p.Status, p.Header.Get("Location"))
		}
		if s := state(al.ID); s != alertstore.StateAcknowledged {
			t.Fatalf("acknowledged alert is %s", s)
		}
		p = ba.post("/alerts/state", url.Values{"csrf": {tok}, "id": {al.ID, other.ID}, "action": {"resolve"}, "return": {"https://evil.example/"}})
		if p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Header.Get("Location"), "/alerts?") {
			t.Fatalf("bulk resolve: %d %q", p.Status, p.Header.Get("Location"))
		}
		if s1, s2 := state(al.ID), state(other.ID); s1 != alertstore.StateResolved || s2 != alertstore.StateResolved {
			t.Fatalf("after bulk resolve: %s, %s", s1, s2)
		}
		if p := ba.post("/alerts/state", url.Values{"csrf": {tok}, "id": {al.ID}, "action": {"delete"}}); p.Status != http.StatusBadRequest {
			t.Errorf("unknown action: %d", p.Status)
		}
	})
}

func TestTierNoticesInsteadOfErrors(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		_, key := e.Account(periscope.Account{Company: "Free Co", Plan: "free", CreditsPerMonth: 100, MaxResultsPerRequest: 10})
		b := e.browser()
		b.mustSignIn(key)
		for _, path := range []string{"/", "/organizations", "/alerts", "/brand", "/darkweb", "/scans", "/settings"} {
			p := b.get(path)
			if p.Status != 200 || !strings.Contains(p.Body, "needs an Enterprise account") {
				t.Errorf("%s for a free account: %d, notice shown: %v", path, p.Status, strings.Contains(p.Body, "needs an Enterprise account"))
			}
		}
		if p := b.get("/alerts/0f0e0d0c-0000-0000-0000-000000000000"); p.Status != http.StatusForbidden || !strings.Contains(p.Body, "needs an Enterprise account") {
			t.Errorf("alert page for a free account: %d", p.Status)
		}
	})
}

func TestPagesChargeAndLimitAsTheAPI(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		a, key := enterprise(e, "Acme")
		if _, err := e.Hosts.UpsertHosts(context.Background(), []host.Host{{Host: "api.example.com", Domain: "example.com", TLD: "com", Subdomain: "api"}}); err != nil {
			t.Fatal(err)
		}
		used := func() int64 {
			acct, err := e.Store.Account(context.Background(), a.ID)
			if err != nil {
				t.Fatal(err)
			}
			return acct.CreditsUsed
		}
		b := e.browser()
		b.mustSignIn(key)
		before := used()
		if p := b.get("/hosts/api.example.com"); p.Status != 200 {
			t.Fatalf("host page: %d", p.Status)
		}
		if n := used() - before; n != 1 {
			t.Errorf("the host page cost %d credits, want the API's 1", n)
		}
		// HEAD (no data) is refused rather than charged.
		before = used()
		req, _ := http.NewRequest(http.MethodHead, e.HTTP.URL+"/hosts/api.example.com", nil)
		if p := b.do(req); p.Status != http.StatusMethodNotAllowed {
			t.Errorf("HEAD of the host page: %d", p.Status)
		}
		if n := used() - before; n != 0 {
			t.Errorf("a HEAD cost %d credits", n)
		}
		// A host that is not there is the API's 404 and costs nothing.
		before = used()
		if p := b.get("/hosts/nothing.example.org"); p.Status != http.StatusNotFound {
			t.Errorf("unknown host: %d", p.Status)
		}
		if n := used() - before; n != 0 {
			t.Errorf("a 404 cost %d credits", n)
		}
	})
	t.Run("rate limit", func(t *testing.T) {
		cfg := api.DefaultConfig()
		cfg.RateLimit = 3
		e := newEnv(t, "sqlite", cfg)
		acct, key := enterprise(e, "Acme")
		newOrg(t, e, acct.ID, "One")
		newOrg(t, e, acct.ID, "Two")
		b := e.browser()
		b.mustSignIn(key)
		// A page counts as one request of the key's limit, however many
		// API routes it reads (settings: credits, keys, organizations and
		// each organization's webhooks).
		for i := range 3 {
			if p := b.get("/settings"); p.Status != 200 {
				t.Fatalf("settings page %d within the limit of 3: %d", i+1, p.Status)
			}
		}
		last := b.get("/organizations")
		if last.Status != http.StatusTooManyRequests || !strings.Contains(last.Body, "Rate limit exceeded") {
			t.Errorf("past the key's limit: %d", last.Status)
		}
	})
}

func TestRevokingTheKeyEndsItsSessions(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		a, key := enterprise(e, "Acme")
		b := e.browser()
		b.mustSignIn(key)
		if p := b.get("/settings"); p.Status != 200 {
			t.Fatalf("settings: %d", p.Status)
		}
		keys, err := e.Store.Keys(context.Background(), a.ID)
		if err != nil || len(keys) != 1 {
			t.Fatalf("keys: %v %v", keys, err)
		}
		// Revoked from the settings page: the session's own key signs it out.
		if p := b.post("/settings/keys/revoke", url.Values{"csrf": {b.token("/settings")}, "key": {keys[0].ID}}); p.Status != http.StatusSeeOther {
			t.Fatalf("revoke: %d", p.Status)
		}
		if p := b.get("/settings"); p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Header.Get("Location"), "/login") {
			t.Fatalf("after revoking the session's key: %d %q", p.Status, p.Header.Get("Location"))
		}
		if _, err := e.Store.Authenticate(context.Background(), key); periscope.ErrorCode(err) != periscope.EUnauthorized {
			t.Fatalf("the key still authenticates: %v", err)
		}
	})
}

func TestSettingsShowNewSecretsOnce(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		a, key := enterprise(e, "Acme")
		_, keyB := enterprise(e, "Bravo")
		org := newOrg(t, e, a.ID, "Acme Org")
		b := e.browser()
		b.mustSignIn(key)
		tok := b.token("/settings")
		p := b.post("/settings/keys", url.Values{"csrf": {tok}, "name": {"laptop"}})
		m := regexp.MustCompile(`id="new-key">([0-9a-f]{64})<`).FindStringSubmatch(p.Body)
		if p.Status != http.StatusCreated || m == nil {
			t.Fatalf("create key: %d", p.Status)
		}
		if _, err := e.Store.Authenticate(context.Background(), m[1]); err != nil {
			t.Fatalf("the key shown does not authenticate: %v", err)
		}
		if p := b.get("/settings"); strings.Contains(p.Body, m[1]) || !strings.Contains(p.Body, "laptop") {
			t.Errorf("the new key is shown again, or its name is missing")
		}
		// A webhook: the API's URL checks apply (a private address is
		// refused), and the secret is shown once.
		p = b.post("/settings/webhooks", url.Values{"csrf": {tok}, "org": {org.ID}, "url": {"https://hooks.example.com/p"}, "min_severity": {"high"}, "format": {"json"}})
		sm := regexp.MustCompile(`id="new-secret">([^<]+)<`).FindStringSubmatch(p.Body)
		if p.Status != http.StatusCreated || sm == nil || !strings.Contains(p.Body, "hooks.example.com/p") {
			t.Fatalf("create webhook: %d", p.Status)
		}
		if p := b.get("/settings"); strings.Contains(p.Body, sm[1]) {
			t.Errorf("the webhook secret is shown again")
		}
		// B cannot add a webhook to A's organization.
		bb := e.browser()
		bb.mustSignIn(keyB)
		if p := bb.post("/settings/webhooks", url.Values{"csrf": {bb.token("/settings")}, "org": {org.ID}, "url": {"https://hooks.example.com/b"}}); p.Status != http.StatusNotFound {
			t.Errorf("B's webhook on A's organization: %d", p.Status)
		}
		var n int
		if err := e.Store.QueryRow(context.Background(), `SELECT COUNT(*) FROM webhook_endpoints WHERE organization_id = ?`, org.ID).Scan(&n); err != nil || n != 1 {
			t.Fatalf("A's organization has %d webhooks (%v), want 1", n, err)
		}
	})
}

func TestSearchFacetsPagingAndExport(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		_, key := enterprise(e, "Acme")
		var hs []host.Host
		for i := range 60 {
			hs = append(hs, host.Host{Host: fmt.Sprintf("h%02d.example.com", i), Domain: "example.com", TLD: "com", Subdomain: fmt.Sprintf("h%02d", i),
				NetworkPorts: []int{443}})
		}
		hs[0].NetworkPorts = []int{443, 8443}
		if _, err := e.Hosts.UpsertHosts(context.Background(), hs); err != nil {
			t.Fatal(err)
		}
		b := e.browser()
		b.mustSignIn(key)
		p := b.get("/search?q=" + url.QueryEscape("domain:example.com"))
		if p.Status != 200 || !strings.Contains(p.Body, "60 hosts · page 1 of 2") {
			t.Fatalf("search: %d %s", p.Status, p.Body)
		}
		for _, want := range []string{`href="/search?page=2&amp;q=domain%3Aexample.com"`, `href="/search/export?q=domain%3aexample.com&amp;format=csv"`,
			`hx-get="/search/facets?q=domain%3Aexample.com"`} {
			if !strings.Contains(p.Body, want) {
				t.Errorf("search page lacks %s", want)
			}
		}
		// A facet value's link adds it to the query: in the fragment htmx
		// loads, and inline without JavaScript.
		frag := b.get("/search/facets?q=" + url.QueryEscape("domain:example.com"))
		inline := b.get("/search?facets=1&q=" + url.QueryEscape("domain:example.com"))
		for _, p := range []page{frag, inline} {
			if !strings.Contains(p.Body, `href="/search?q=domain%3Aexample.com&#43;port%3A8443"`) {
				t.Errorf("facets lack the link adding port:8443: %s", p.Body)
			}
		}
		if strings.Contains(frag.Body, "<html") || frag.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("the facet fragment is a whole page, or lacks the CSP")
		}
		if p := b.get("/search/facets?q=" + url.QueryEscape("domain:example.com port:443")); strings.Contains(p.Body, `port%3A443&#43;port%3A443"`) {
			t.Errorf("a facet value already in the query is offered again")
		}
		if p := b.get("/search?page=2&q=" + url.QueryEscape("domain:example.com")); !strings.Contains(p.Body, "page 2 of 2") || strings.Count(p.Body, `href="/hosts/`) != 10 {
			t.Errorf("page 2: %d hosts", strings.Count(p.Body, `href="/hosts/`))
		}
		// A query the language refuses is its message on the page.
		if p := b.get("/search?q=" + url.QueryEscape("nosuch:1")); p.Status != 200 || !strings.Contains(p.Body, "unknown field") {
			t.Errorf("bad query: %d", p.Status)
		}
		p = b.get("/search/export?format=csv&q=" + url.QueryEscape("domain:example.com port:8443"))
		if p.Status != 200 || !strings.HasPrefix(p.Header.Get("Content-Type"), "text/csv") || !strings.Contains(p.Body, "h00.example.com") || strings.Contains(p.Body, "h01.example.com") {
			t.Errorf("export: %d %s %q", p.Status, p.Header.Get("Content-Type"), p.Body)
		}
	})
}

// TestPagesInAccessLogAndMetrics: console pages are counted by route
// pattern, and logged with the key's prefix and account, never a path's
// ids in a metric label nor the query string in the log.
func TestPagesInAccessLogAndMetrics(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	e := apitest.New(t, "sqlite", apitest.Options{Deps: func(d *api.Deps, _ *store.Store) {
		d.Log = slog.New(slog.NewJSONHandler(writerFunc(func(b []byte) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			return logs.Write(b)
		}), nil))
	}})
	c, err := console.New(console.Config{}, e.Server, e.Store, e.Store, alertstore.New(e.Store), nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Mount()
	en := &env{Env: e, t: t}
	a, key := enterprise(en, "Acme")
	org := newOrg(t, en, a.ID, "Acme Org")
	al := addAlert(t, en, a.ID, org.ID, "Port 8443 opened")
	b := en.browser()
	b.mustSignIn(key)
	if p := b.get("/alerts/" + al.ID + "?secret=s3cr3t"); p.Status != 200 {
		t.Fatalf("alert page: %d", p.Status)
	}
	resp, err := http.Get(e.HTTP.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(metrics), `route="GET /alerts/{id}"`) || strings.Contains(string(metrics), al.ID) {
		t.Errorf("metrics: the page's route pattern missing, or its id present")
	}
	mu.Lock()
	log := logs.String()
	mu.Unlock()
	var line map[string]any
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, `"GET /alerts/{id}"`) {
			json.Unmarshal([]byte(l), &line)
		}
	}
	if line == nil || line["account"] != a.ID || line["key"] != key[:8] || strings.Contains(log, "s3cr3t") || strings.Contains(log, key) {
		t.Errorf("access log line %v (query or key in the log: %v)", line, strings.Contains(log, "s3cr3t") || strings.Contains(log, key))
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
