// Package console is Periscope's web console: server-rendered pages
// (html/template, one base template and one per page) for the people who
// use the API's data, served by the API's own server (api.Server.HandlePage)
// so that pages share its request ids, access log and metrics.
//
// The console is a client of the API in the same process: a page reads and
// changes data only through api.Server.Call, which runs the API route for
// the session's principal through the same chain as a keyed request (tiers,
// tenancy, credits, rate limits, OEM audit), and renders the JSON answer.
// The few actions no API route serves (the account's keys, one alert by
// id) pass api.Server.Allow first. Sign-in exchanges an API key for a
// server-side session (store.Session); the key is never rendered again.
package console

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
)

// API is what the console needs of the API server (*api.Server).
type API interface {
	HandlePage(pattern string, h http.Handler)
	Call(r *http.Request, p periscope.Principal, method, target string, body []byte) api.Answer
	Forward(w http.ResponseWriter, r *http.Request, p periscope.Principal, method, target string)
	Allow(r *http.Request, p periscope.Principal, enterprise bool) error
	AuthFailed(r *http.Request) error
}

// Sessions is the session storage (*store.Store).
type Sessions interface {
	CreateSession(ctx context.Context, key string, lim store.SessionLimits) (store.Session, periscope.Principal, error)
	Session(ctx context.Context, id string, lim store.SessionLimits) (store.Session, periscope.Principal, error)
	DeleteSession(ctx context.Context, id string) error
}

// Keys is the account's key management, which no API route serves
// (*store.Store).
type Keys interface {
	Keys(ctx context.Context, accountID string) ([]periscope.APIKey, error)
	CreateKey(ctx context.Context, accountID, userID, name string) (string, periscope.APIKey, error)
	RevokeAccountKey(ctx context.Context, accountID, id string) (periscope.APIKey, error)
}

// Alerts reads one alert of an account by id, which no API route serves
// (*alertstore.Store).
type Alerts interface {
	Alert(ctx context.Context, accountID, id string) (alertstore.Alert, error)
}

// Config holds the console's settings.
type Config struct {
	// Idle and Absolute bound a session's life (defaults 30 minutes and
	// 12 hours).
	Idle, Absolute time.Duration
	// Version is shown in the footer.
	Version string
}

// Console is the web console.
type Console struct {
	cfg      Config
	api      API
	sessions Sessions
	keys     Keys
	alerts   Alerts
	log      *slog.Logger
	pages    map[string]*pageTemplate
	assets   *assetSet
}

// New returns the console; Mount serves it.
func New(cfg Config, a API, s Sessions, k Keys, al Alerts, log *slog.Logger) (*Console, error) {
	if cfg.Idle <= 0 {
		cfg.Idle = 30 * time.Minute
	}
	if cfg.Absolute <= 0 {
		cfg.Absolute = 12 * time.Hour
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Console{cfg: cfg, api: a, sessions: s, keys: k, alerts: al, log: log}
	var err error
	if c.assets, err = loadAssets(); err != nil {
		return nil, err
	}
	if c.pages, err = c.parseTemplates(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Console) limits() store.SessionLimits {
	return store.SessionLimits{Idle: c.cfg.Idle, Absolute: c.cfg.Absolute}
}

// Cookie names. Under TLS the session cookie takes the __Host- prefix, which
// browsers accept only with Secure, Path=/ and no Domain.
const (
	sessionCookie         = "periscope_session"
	tlsSessionCookie      = "__Host-periscope_session"
	loginCookie           = "periscope_login"
	tlsLoginCookie        = "__Host-periscope_login"
	maxFormBytes          = 64 << 10
	contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)

// secure reports whether the request reached us over TLS (directly, or
// through a proxy that says so: a false claim only makes the cookie
// stricter for the client who made it).
func secure(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

func cookieName(r *http.Request, plain, tls string) string {
	if secure(r) {
		return tls
	}
	return plain
}

func setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true,
		Secure: secure(r), SameSite: http.SameSiteStrictMode})
}

// headers are the console's security headers, on every page.
func headers(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

// visit is one signed-in page request: what the session resolved.
type visit struct {
	c    *Console
	r    *http.Request
	p    periscope.Principal
	sess store.Session
}

// pageFunc is the one handler style of signed-in pages: return an error,
// the adapter renders it.
type pageFunc func(w http.ResponseWriter, v *visit) error

// signedIn adapts a page: security headers, the session (none: to /login
// and back after sign-in), for POST the same-origin and CSRF checks, then
// the page; its error is rendered as an error page.
func (c *Console) signedIn(fn pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		headers(w)
		if r.Method == http.MethodHead {
			// As on the API's charged routes: an answer without its data
			// must not cost a credit, so HEAD is refused.
			w.Header().Set("Allow", "GET")
			http.Error(w, "HEAD is not offered on console pages; use GET.", http.StatusMethodNotAllowed)
			return
		}
		ck, err := r.Cookie(cookieName(r, sessionCookie, tlsSessionCookie))
		if err != nil {
			c.toLogin(w, r)
			return
		}
		sess, p, err := c.sessions.Session(r.Context(), ck.Value, c.limits())
		if err != nil {
			if periscope.ErrorCode(err) == periscope.EUnauthorized {
				setCookie(w, r, ck.Name, "", -1)
				c.toLogin(w, r)
				return
			}
			c.renderError(w, r, nil, err)
			return
		}
		v := &visit{c: c, r: r, p: p, sess: sess}
		if r.Method == http.MethodPost {
			if err := c.checkForm(w, r, sess.CSRF); err != nil {
				c.renderError(w, r, v, err)
				return
			}
		}
		if err := fn(w, v); err != nil {
			c.renderError(w, r, v, err)
		}
	})
}

// toLogin redirects a signed-out request to the sign-in page, which sends
// it back after sign-in (a GET; a form posted without a session is not
// replayed).
func (c *Console) toLogin(w http.ResponseWriter, r *http.Request) {
	target := "/login"
	if r.Method == http.MethodGet && r.URL.Path != "/" {
		target += "?next=" + url.QueryEscape(r.URL.RequestURI())
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

var errForbiddenForm = periscope.Errorf(periscope.EForbidden, "This form has expired or did not come from this console; reload the page and try again.")

// checkForm refuses a cross-site post (Sec-Fetch-Site, else Origin) and a
// form whose token is not want, and bounds and parses the form.
func (c *Console) checkForm(w http.ResponseWriter, r *http.Request, want string) error {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return errForbiddenForm
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return errForbiddenForm
		}
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return periscope.Errorf(periscope.EInvalid, "The form could not be read.")
	}
	got := r.PostForm.Get("csrf")
	if want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return errForbiddenForm
	}
	return nil
}

// safeNext is the path to go back to after sign-in: a path on this site
// only (never //host or a scheme), else "/".
func safeNext(next string) string {
	if next == "" || next[0] != '/' || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") ||
		strings.ContainsAny(next, "\r\n\\") {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || strings.HasPrefix(u.Path, "/login") || strings.HasPrefix(u.Path, "/logout") {
		return "/"
	}
	return u.RequestURI()
}

// apiError is an API answer of status ≥ 400, as the console shows it.
type apiError struct {
	Status  int
	Code    string
	Message string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

// statusOf is an error's HTTP status: an API answer's own, else the API's
// table.
func statusOf(err error) int {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return api.Status(err)
}

func codeOf(err error) string {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.Code
	}
	return periscope.ErrorCode(err)
}

// tierNotice is the notice shown in place of a section the account's tier
// does not include ("" for any other error).
func tierNotice(err error) string {
	switch codeOf(err) {
	case periscope.EEnterpriseRequired:
		return "This part of the console needs an Enterprise account; your plan does not include it."
	case periscope.EOEMRequired:
		return "This part of the console needs the OEM module; your plan does not include it."
	case periscope.ECreditsExhausted, periscope.EOEMCreditsExhausted:
		return "Your credits for this month are spent; this page costs a credit. " + messageOf(err)
	}
	return ""
}

func messageOf(err error) string {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.Message
	}
	return periscope.ErrorMessage(err)
}
