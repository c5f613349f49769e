package console

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"

	"github.com/periscope-oss/periscope/internal/periscope"
)

type loginData struct {
	Next  string
	Token string // the sign-in form's CSRF token (double-submitted in a cookie)
	Error string
}

// handleLoginPage answers GET /login: the sign-in form, or straight back
// to next when the session is live.
func (c *Console) handleLoginPage(w http.ResponseWriter, r *http.Request) {
	next := safeNext(r.URL.Query().Get("next"))
	if ck, err := r.Cookie(cookieName(r, sessionCookie, tlsSessionCookie)); err == nil {
		if _, _, err := c.sessions.Session(r.Context(), ck.Value, c.limits()); err == nil {
			headers(w)
			http.Redirect(w, r, next, http.StatusSeeOther)
			return
		}
	}
	c.loginForm(w, r, http.StatusOK, next, "")
}

func (c *Console) loginForm(w http.ResponseWriter, r *http.Request, status int, next, msg string) {
	var b [32]byte
	rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	setCookie(w, r, cookieName(r, loginCookie, tlsLoginCookie), token, 3600)
	p := page{Title: "Sign in", Path: "/login", Data: loginData{Next: next, Token: token, Error: msg}}
	if err := c.renderStatus(w, nil, status, "login", p); err != nil {
		c.renderError(w, r, nil, err)
	}
}

// handleLogin answers POST /login: the key is exchanged for a session
// (the key is never stored, rendered or logged); a wrong key counts
// against the address's failed-authentication limit, as with the API.
func (c *Console) handleLogin(w http.ResponseWriter, r *http.Request) {
	headers(w)
	want := ""
	if ck, err := r.Cookie(cookieName(r, loginCookie, tlsLoginCookie)); err == nil {
		want = ck.Value
	}
	if err := c.checkForm(w, r, want); err != nil {
		c.loginForm(w, r, http.StatusForbidden, "/", messageOf(err))
		return
	}
	next := safeNext(r.PostForm.Get("next"))
	sess, _, err := c.sessions.CreateSession(r.Context(), r.PostForm.Get("key"), c.limits())
	if periscope.ErrorCode(err) == periscope.EUnauthorized {
		status, msg := http.StatusUnauthorized, "That key is not valid (unknown or revoked)."
		if lerr := c.api.AuthFailed(r); lerr != nil {
			status, msg = statusOf(lerr), messageOf(lerr)
		}
		c.loginForm(w, r, status, next, msg)
		return
	}
	if err != nil {
		c.renderError(w, r, nil, err)
		return
	}
	setCookie(w, r, cookieName(r, loginCookie, tlsLoginCookie), "", -1)
	setCookie(w, r, cookieName(r, sessionCookie, tlsSessionCookie), sess.ID, int(c.cfg.Absolute.Seconds()))
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// handleLogoutPage answers GET /logout: a confirmation form (signing out
// is a POST with the CSRF token, so no link elsewhere can do it).
func (c *Console) handleLogoutPage(w http.ResponseWriter, v *visit) error {
	return c.render(w, v, "logout", "Sign out", nil)
}

// handleLogout answers POST /logout: the session ends in the database.
func (c *Console) handleLogout(w http.ResponseWriter, v *visit) error {
	if err := c.sessions.DeleteSession(v.r.Context(), v.sess.ID); err != nil {
		return err
	}
	setCookie(w, v.r, cookieName(v.r, sessionCookie, tlsSessionCookie), "", -1)
	http.Redirect(w, v.r, "/login", http.StatusSeeOther)
	return nil
}
