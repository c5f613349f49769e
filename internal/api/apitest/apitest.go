// Package apitest runs the real API over real HTTP on a real database for
// tests, and validates every response against the OpenAPI document.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/darkwebstore"
	"github.com/periscope-oss/periscope/internal/scanstore"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/periscope-oss/periscope/internal/alerts"
	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/api"
	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/brandwatch"
	"github.com/periscope-oss/periscope/internal/domaincollection"
	"github.com/periscope-oss/periscope/internal/history"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/orgprofile"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/schema"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
	"github.com/periscope-oss/periscope/internal/torstore"
	"github.com/periscope-oss/periscope/internal/vulnstore"
	"github.com/periscope-oss/periscope/internal/whoislookup"
	"github.com/periscope-oss/periscope/internal/whoisstore"
)

// Clock is a settable clock shared by the server and the store.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Env is a running server on a fresh database.
type Env struct {
	T      testing.TB
	Engine string
	Store  *store.Store
	Hosts  *hoststore.Store
	Vulns  *vulnstore.Store
	Brand  *brandstore.Store
	// Watcher is the brand watcher the server is handed (no worker runs:
	// searches are computed on demand).
	Watcher *brandwatch.Watcher
	// Darkweb is the unlocked dark-web store the server uses.
	Darkweb *darkwebstore.Store
	Server  *api.Server
	HTTP    *httptest.Server
	Clock   *Clock
	Client  *http.Client
}

// Options adjust a test environment.
type Options struct {
	Config *api.Config
	// Deps, when set, receives the dependencies and the database and may add capability
	// collaborators before the server is built.
	Deps func(d *api.Deps, s *store.Store)
	// Store, when set, is the database to serve instead of a fresh one
	// (migrated by the caller; the test's clock is set on it).
	Store *store.Store
}

// New starts the API on a fresh database of the engine, with a frozen clock
// at 2026-11-22 12:00 UTC and a client that validates every response.
func New(t testing.TB, engine string, opts ...Options) *Env {
	t.Helper()
	var s *store.Store
	for _, o := range opts {
		if o.Store != nil {
			s = o.Store
		}
	}
	if s == nil {
		s = storetest.Open(t, engine, schema.Sets()...)
	}
	clock := &Clock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	s.Now = clock.Now
	hs, vs, bs := hoststore.New(s), vulnstore.New(s), brandstore.New(s)
	mon := brandwatch.New(s, hs, bs, brandwatch.Options{})
	cfg := api.DefaultConfig()
	// The dark-web store, unlocked with a fixed test key.
	dw := darkwebstore.New(s)
	key, err := darkweb.NewKeyring([]byte("periscope-test-darkweb-key-32byt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := dw.Unlock(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	// Webhook secrets, sealed with a fixed test key.
	as := alertstore.New(s)
	if _, err := as.UnlockSecrets(context.Background(), TestSecretsKey(t)); err != nil {
		t.Fatal(err)
	}
	d := api.Deps{Accounts: s, Orgs: s, Hosts: hs, Vulns: vs, Listings: bs, Brand: mon, Now: clock.Now,
		Whois:        whoislookup.New(whoislookup.Config{Store: whoisstore.New(s), Now: clock.Now}),
		WhoisRecords: whoislookup.Stored{Store: whoisstore.New(s)},
		Alerts:       &alerts.Service{Store: as, DB: s},
		History:      &history.Service{Hosts: hs, Ledger: as},
		Tor:          torstore.New(s),
		Domains:      &domaincollection.Service{Hosts: hs},
		OrgProfiles:  &orgprofile.Service{Hosts: hs, Whois: whoisstore.New(s), Breaches: dw},
		Darkweb:      dw, Claims: scanstore.New(s), AuditKey: TestSecretsKey(t)}
	for _, o := range opts {
		if o.Config != nil {
			cfg = *o.Config
		}
		if o.Deps != nil {
			o.Deps(&d, s)
		}
	}
	srv := api.NewServer(cfg, d)
	h := httptest.NewServer(srv)
	t.Cleanup(h.Close)
	v := Validator(t, srv.OpenAPI())
	return &Env{T: t, Engine: engine, Store: s, Hosts: hs, Vulns: vs, Brand: bs, Watcher: mon, Darkweb: dw, Server: srv, HTTP: h, Clock: clock,
		Client: &http.Client{Transport: v.Transport(http.DefaultTransport)}}
}

// Account creates an account with one user and one key and returns the key.
func (e *Env) Account(a periscope.Account) (periscope.Account, string) {
	e.T.Helper()
	ctx := context.Background()
	if a.Company == "" {
		a.Company = fmt.Sprintf("company-%d", time.Now().UnixNano())
	}
	if a.MaxResultsPerRequest == 0 {
		a.MaxResultsPerRequest = 100
	}
	u := periscope.User{Email: strings.ReplaceAll(strings.ToLower(a.Company), " ", "-") + "@example.com", FirstName: "Test", LastName: "User"}
	if err := e.Store.CreateAccount(ctx, &a, &u); err != nil {
		e.T.Fatalf("create account: %v", err)
	}
	key, _, err := e.Store.CreateKey(ctx, a.ID, u.ID, "test")
	if err != nil {
		e.T.Fatalf("create key: %v", err)
	}
	return a, key
}

// Response is a finished request.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test on error.
func (r Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Map decodes the body as a JSON object.
func (r Response) Map(t testing.TB) map[string]any {
	var m map[string]any
	r.JSON(t, &m)
	return m
}

// ErrorCode returns the "error" field of an error body.
func (r Response) ErrorCode() string {
	var b struct {
		Error string `json:"error"`
	}
	json.Unmarshal(r.Body, &b)
	return b.Error
}

// Do sends a request with the key (none when empty). body may be nil, a
// string/[]byte sent as is, or a value encoded as JSON.
func (e *Env) Do(method, path, key string, body any) Response {
	e.T.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			e.T.Fatalf("encode body: %v", err)
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, e.HTTP.URL+path, rd)
	if err != nil {
		e.T.Fatalf("new request: %v", err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-API-KEY", key)
	}
	return e.Send(req)
}

// Send sends a prepared request.
func (e *Env) Send(req *http.Request) Response {
	e.T.Helper()
	resp, err := e.Client.Do(req)
	if err != nil {
		e.T.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.T.Fatalf("read body: %v", err)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// OpenAPIValidator checks responses against the document and remembers which
// operations it has seen answered.
type OpenAPIValidator struct {
	t      testing.TB
	doc    *openapi3.T
	router routers.Router
}

var (
	registerDecoders sync.Once
	coverMu          sync.Mutex
	covered          = map[string]bool{} // "METHOD /path-template" seen validated in this test binary
)

// Covered lists the operations validated so far in this test binary.
func Covered() []string {
	coverMu.Lock()
	defer coverMu.Unlock()
	out := make([]string, 0, len(covered))
	for k := range covered {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Validator loads the document (failing the test when it is invalid).
func Validator(t testing.TB, doc []byte) *OpenAPIValidator {
	t.Helper()
	registerDecoders.Do(func() {
		openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.FileBodyDecoder)
		// The streamed formats of /hosts/export.
		openapi3filter.RegisterBodyDecoder("application/x-ndjson", openapi3filter.FileBodyDecoder)
		openapi3filter.RegisterBodyDecoder("text/csv", openapi3filter.FileBodyDecoder)
	})
	loader := openapi3.NewLoader()
	d, err := loader.LoadFromData(doc)
	if err != nil {
		t.Fatalf("load OpenAPI document: %v", err)
	}
	if err := d.Validate(loader.Context); err != nil {
		t.Fatalf("OpenAPI document is invalid: %v", err)
	}
	r, err := gorillamux.NewRouter(d)
	if err != nil {
		t.Fatalf("OpenAPI router: %v", err)
	}
	return &OpenAPIValidator{t: t, doc: d, router: r}
}

// Transport wraps next so that every response is validated.
func (v *OpenAPIValidator) Transport(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if err != nil {
			return resp, err
		}
		body, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if rerr != nil {
			return resp, nil
		}
		v.Check(req, resp.StatusCode, resp.Header, body)
		return resp, nil
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Check validates one response. Every response is JSON (or the documented
// text of /metrics and /docs); responses of unknown routes must be the JSON
// error body.
func (v *OpenAPIValidator) Check(req *http.Request, status int, h http.Header, body []byte) {
	v.t.Helper()
	ct := h.Get("Content-Type")
	u := *req.URL
	u.Host, u.Scheme = "", ""
	vreq := req.Clone(context.Background())
	vreq.URL = &u
	vreq.Host = ""
	route, params, err := v.router.FindRoute(vreq)
	if err != nil {
		// Not a documented operation: must be a JSON error (404/405).
		var e struct {
			Status int    `json:"status"`
			Error  string `json:"error"`
		}
		if !strings.HasPrefix(ct, "application/json") || json.Unmarshal(body, &e) != nil || e.Status != status || e.Error == "" {
			v.t.Errorf("%s %s: undocumented route answered %d %q with %s", req.Method, req.URL.Path, status, ct, clip(body))
		}
		return
	}
	in := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, ExcludeRequestBody: true}}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: h,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}}
	out.SetBodyBytes(body)
	if status >= 200 && status < 300 {
		// What the handler accepted, the document must accept too.
		rin := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}}
		var reqBody []byte
		if req.GetBody != nil {
			if b, err := req.GetBody(); err == nil {
				reqBody, _ = io.ReadAll(b)
			}
		}
		vreq.Body = io.NopCloser(bytes.NewReader(reqBody))
		// The server takes a JSON object under any of the types curl
		// sends (none, or a form's) as JSON; form fields, which a few
		// routes take, are not in the document.
		switch t := bytes.TrimSpace(reqBody); {
		case len(t) == 0:
			vreq.Header.Del("Content-Type")
			rin.Options.ExcludeRequestBody = true
		case t[0] == '{':
			vreq.Header.Set("Content-Type", "application/json")
		default:
			rin.Options.ExcludeRequestBody = true
		}
		if err := openapi3filter.ValidateRequest(context.Background(), rin); err != nil {
			v.t.Errorf("%s %s → %d: the OpenAPI document refuses the request the handler accepted: %v", req.Method, req.URL.String(), status, err)
		}
	}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		v.t.Errorf("%s %s → %d does not match the OpenAPI document: %v\nbody: %s", req.Method, req.URL.Path, status, err, clip(body))
		return
	}
	coverMu.Lock()
	covered[req.Method+" "+route.Path] = true
	coverMu.Unlock()
}

func clip(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

// TestSecretsKey is the fixed key the environment seals webhook secrets
// with (for tests that open another alertstore.Store on the database).
func TestSecretsKey(t testing.TB) *alertstore.SecretsKey {
	k, err := alertstore.NewSecretsKey([]byte("periscope-test-secrets-key-32byt"))
	if err != nil {
		t.Fatal(err)
	}
	return k
}
