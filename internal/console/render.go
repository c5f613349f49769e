package console

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/periscope"
)

//go:embed templates/*.html
var templateFS embed.FS

// pageTemplate is the base template joined with one page's.
type pageTemplate struct{ t *template.Template }

// nav is the navigation bar, in order.
var nav = []struct{ Path, Label string }{
	{"/", "Overview"}, {"/search", "Search"}, {"/organizations", "Organizations"}, {"/alerts", "Alerts"},
	{"/vulnerabilities", "Vulnerabilities"}, {"/brand", "Brand"}, {"/darkweb", "Dark web"}, {"/scans", "Scans"},
	{"/settings", "Settings"},
}

func (c *Console) parseTemplates() (map[string]*pageTemplate, error) {
	funcs := template.FuncMap{
		"asset": c.assets.url,
		"unix":  unixTime,
		"path":  url.PathEscape,
		"json": func(v any) (string, error) {
			b, err := json.Marshal(v)
			return string(b), err
		},
		"add":       func(a, b int) int { return a + b },
		"kind":      kindOf,
		"cols":      columns,
		"verified":  verified,
		"list":      func(s ...string) []string { return s },
		"asList":    asSlice,
		"alertsURL": alertsURL,
		"searchURL": searchURL,
		// hx-get is not a URL attribute to html/template: the query is
		// escaped here.
		"facetsURL": func(q string) string { return "/search/facets?" + url.Values{"q": {q}}.Encode() },
		"clip": func(s any) string {
			t := fmt.Sprint(s)
			if r := []rune(t); len(r) > 300 {
				return string(r[:300]) + "…"
			}
			return t
		},
		"str": func(v any) string {
			if v == nil {
				return ""
			}
			return fmt.Sprint(v)
		},
	}
	base, err := template.New("base.html").Funcs(funcs).ParseFS(templateFS, "templates/base.html")
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*pageTemplate{}
	for _, n := range names {
		name := strings.TrimSuffix(path.Base(n), ".html")
		if name == "base" {
			continue
		}
		t, err := template.Must(base.Clone()).ParseFS(templateFS, n)
		if err != nil {
			return nil, err
		}
		pages[name] = &pageTemplate{t: t}
	}
	return pages, nil
}

// unixTime formats a Unix time (a json.Number, an int64 or a float64) as
// UTC; zero is "".
func unixTime(v any) string {
	var n int64
	switch x := v.(type) {
	case json.Number:
		i, err := x.Int64()
		if err != nil {
			return x.String()
		}
		n = i
	case int64:
		n = x
	case int:
		n = int64(x)
	case float64:
		n = int64(x)
	case time.Time:
		if x.IsZero() {
			return ""
		}
		return x.UTC().Format("2006-01-02 15:04 UTC")
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
	if n == 0 {
		return ""
	}
	return time.Unix(n, 0).UTC().Format("2006-01-02 15:04 UTC")
}

// page is what the base template renders around a page's own data.
type page struct {
	Title   string
	Path    string // the nav entry to mark current
	Nav     any
	User    string // the signed-in user's email and company
	Company string
	Plan    string
	CSRF    string
	Notice  string // a tier notice or an error message for the page
	Flash   string // the result of the last action
	Version string
	Data    any
}

// render writes a page with status 200.
func (c *Console) render(w http.ResponseWriter, v *visit, name, title string, data any) error {
	return c.renderStatus(w, v, http.StatusOK, name, page{Title: title, Data: data})
}

func (c *Console) renderStatus(w http.ResponseWriter, v *visit, status int, name string, p page) error {
	t, ok := c.pages[name]
	if !ok {
		return fmt.Errorf("no template %q", name)
	}
	p.Nav, p.Version = nav, c.cfg.Version
	if v != nil {
		p.User, p.Company, p.Plan, p.CSRF = v.p.User.Email, v.p.Account.Company, v.p.Account.Plan, v.sess.CSRF
		if p.Path == "" {
			p.Path = navPath(v.r.URL.Path)
		}
	}
	// Rendered into a buffer first: a template error is then a clean error
	// page, not half a page.
	var buf bytes.Buffer
	if err := t.t.ExecuteTemplate(&buf, "base.html", p); err != nil {
		return fmt.Errorf("render %s: %w", name, err)
	}
	headers(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
	return nil
}

// renderFragment writes one template of a page alone (a part htmx
// swaps into the page).
func (c *Console) renderFragment(w http.ResponseWriter, v *visit, name, fragment string, data any) error {
	t, ok := c.pages[name]
	if !ok {
		return fmt.Errorf("no template %q", name)
	}
	var buf bytes.Buffer
	if err := t.t.ExecuteTemplate(&buf, fragment, data); err != nil {
		return fmt.Errorf("render %s/%s: %w", name, fragment, err)
	}
	headers(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(buf.Bytes())
	return nil
}

func navPath(p string) string {
	for _, n := range nav[1:] {
		if p == n.Path || strings.HasPrefix(p, n.Path+"/") {
			return n.Path
		}
	}
	switch {
	case strings.HasPrefix(p, "/hosts/"), strings.HasPrefix(p, "/domains/"):
		return "/search"
	}
	return p
}

// renderError renders err as an error page with its status: a not-found
// is the 404 page, a tier notice a 403 page, an internal cause is logged
// with the request id and never shown.
func (c *Console) renderError(w http.ResponseWriter, r *http.Request, v *visit, err error) {
	status := statusOf(err)
	msg := messageOf(err)
	if n := tierNotice(err); n != "" {
		msg = n
	}
	title := http.StatusText(status)
	if status >= 500 {
		c.log.ErrorContext(r.Context(), "console page failed", "path", r.URL.Path, "err", err)
		msg = "Something went wrong on our side; it was logged. Try again shortly."
	}
	if status == http.StatusNotFound {
		title, msg = "Not found", "There is nothing here, or it belongs to another account."
	}
	if rerr := c.renderStatus(w, v, status, "error", page{Title: title, Notice: msg, Data: status}); rerr != nil {
		c.log.ErrorContext(r.Context(), "console error page failed", "err", rerr)
		http.Error(w, http.StatusText(status), status)
	}
}

// get calls a GET API route and decodes its JSON answer into out; an
// answer of status ≥ 400 is an *apiError.
func (v *visit) get(target string, out any) error {
	return v.call(http.MethodGet, target, nil, out)
}

// call calls an API route with body (marshalled to JSON when not nil).
func (v *visit) call(method, target string, body, out any) error {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return err
		}
	}
	a := v.c.api.Call(v.r, v.p, method, target, raw)
	if a.Status >= 400 {
		var e struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		json.Unmarshal(a.Body, &e)
		if e.Error == "" {
			e.Error, e.Message = periscope.EInternal, http.StatusText(a.Status)
		}
		return &apiError{Status: a.Status, Code: e.Error, Message: e.Message}
	}
	if out == nil {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(a.Body))
	d.UseNumber()
	if err := d.Decode(out); err != nil {
		return fmt.Errorf("decode %s %s: %w", method, target, err)
	}
	return nil
}

// section is one part of a page read from the API: its data, or the
// notice shown in its place (a tier the account lacks, spent credits, a
// bad filter).
type section struct {
	Data   any
	Notice string
}

// fetch reads a section: a tier the account lacks, spent credits or a bad
// filter become its notice; anything else (not found, rate limited,
// unavailable, internal) is the page's error, with its status.
func (v *visit) fetch(target string) (section, error) {
	var data any
	err := v.get(target, &data)
	if err == nil {
		return section{Data: data}, nil
	}
	if n := tierNotice(err); n != "" {
		return section{Notice: n}, nil
	}
	if s := statusOf(err); s == http.StatusBadRequest || s == http.StatusUnprocessableEntity {
		return section{Notice: messageOf(err)}, nil
	}
	return section{}, err
}

// kindOf classifies a decoded JSON value for the generic templates.
func kindOf(v any) string {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return "empty"
		}
		return "map"
	case []any:
		return "list"
	case nil:
		return "empty"
	case string:
		if x == "" {
			return "empty"
		}
	}
	return "scalar"
}

// columns are the keys of a list of JSON objects (the first twelve, in
// order, of the first object), for a generic table.
func columns(v any) []string {
	list, _ := v.([]any)
	if len(list) == 0 {
		return nil
	}
	m, _ := list[0].(map[string]any)
	keys := sortedKeys(m)
	if len(keys) > 12 {
		keys = keys[:12]
	}
	return keys
}

// verified is "yes" or "no" for an asset of an organization's detail (its
// assets list), "—" when active monitoring is off.
func verified(org any, value string) string {
	m, _ := org.(map[string]any)
	for _, a := range asSlice(m["assets"]) {
		am, _ := a.(map[string]any)
		if am["value"] == value {
			if am["verified"] == true {
				return "yes"
			}
			return "no"
		}
	}
	return "—"
}

// alertsURL is the alerts page n with filters f (a whole URL, so the
// template does not escape its query string again).
func alertsURL(f map[string]string, n int) template.URL {
	q := url.Values{}
	for k, v := range f {
		if v != "" && k != "page" {
			q.Set(k, v)
		}
	}
	q.Set("page", fmt.Sprint(n))
	return template.URL("/alerts?" + q.Encode())
}

// searchURL is the search page n of query q.
func searchURL(q string, n int) template.URL {
	v := url.Values{"q": {q}}
	if n > 1 {
		v.Set("page", fmt.Sprint(n))
	}
	return template.URL("/search?" + v.Encode())
}
