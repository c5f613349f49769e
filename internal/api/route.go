package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
)

// handlerFunc is the one handler style: return an error, the adapter writes it.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// entitlement is what an account must have to call a route.
type entitlement int

const (
	needNothing entitlement = iota
	needEnterprise
	needOEM
	// needPaid: any plan but the free one (or an Enterprise or OEM account).
	needPaid
)

// policy is how the wrapper treats a route.
type policy struct {
	public bool // no key needed (health, metrics, OpenAPI, docs)
	need   entitlement
	pool   periscope.Pool // which credits a 2xx costs; PoolNone for free routes
	// rate is the route's per-key limit in requests per minute at
	// FullHunt's scale, where most routes have generalRate; 0 means
	// generalRate. What is served is this scaled to the deployment's or
	// the account's general rate (routeLimit).
	rate int
	// family is the route's rate-limit family (general, oem, mcp): the
	// count its requests take from, unless it has a rate of its own, and
	// the label of its 429s in the metrics.
	family string
	forms  bool // also takes application/x-www-form-urlencoded fields
	// streamed: the route streams its answer and reserves its own charge
	// (from pool) before the first byte; it is not buffered.
	streamed bool
	// assetChange: the route changes organizations or their assets, which
	// have a per-account limit of their own (limitAssetChange).
	assetChange bool
	// bearer: the key may also come as "Authorization: Bearer <key>".
	bearer bool
	// page: a web-console route (pages.go), authenticated by the console.
	page bool
	// reads: the route only reads, so its queries may be served by a read
	// replica (set by handle from readsOnly).
	reads bool
	// selfCharged: the route has a side effect beyond its answer (a queued
	// scan, a registry query), so its handler takes the credit itself
	// before or with that effect (chargeWithWork, chargeBefore): a request
	// refused for want of credit has no effect.
	selfCharged bool
}

// The route policies of docs/api.md "Credits, entitlements and limits".
var (
	public           = policy{public: true}
	free             = policy{family: "general"}
	charged          = policy{family: "general", pool: periscope.PoolMonthly}
	chargedForms     = policy{family: "general", pool: periscope.PoolMonthly, forms: true}
	enterprise       = policy{family: "general", need: needEnterprise}
	enterpriseChange = policy{family: "general", need: needEnterprise, assetChange: true}
	oemCharged       = policy{family: "oem", need: needOEM, pool: periscope.PoolOEM}
	oemFree          = policy{family: "oem", need: needOEM}
	// enterpriseScan is an Enterprise route costing a monthly credit,
	// taken in the transaction that queues the scan (on-demand scans).
	enterpriseScan = policy{family: "general", need: needEnterprise, pool: periscope.PoolMonthly, selfCharged: true}
	// oemSelfCharged is an OEM route whose handler takes the credit with
	// or before its side effect (on-demand scans, WHOIS lookups).
	oemSelfCharged = policy{family: "oem", need: needOEM, pool: periscope.PoolOEM, selfCharged: true}
	// agent is the MCP endpoint: the key may come as a Bearer token; each
	// tool call is then a REST request with its own policy (and counts
	// against its own route's limit as well as this one).
	agent = policy{family: "mcp", bearer: true, need: needPaid}
	// chargedStream is a charged route whose handler streams and charges
	// (/hosts/export).
	chargedStream = policy{family: "general", pool: periscope.PoolMonthly, streamed: true}
)

// generalRate is FullHunt's per-key limit of most routes, in requests per
// minute (docs/api.md "Rate limits"), and the scale route rates are given in.
const generalRate = 60

// limited returns p with a rate of its own: perMinute requests a minute per
// key where the general rate is generalRate.
func (p policy) limited(perMinute int) policy {
	p.rate = perMinute
	return p
}

// counter names the per-key count a request of route pattern takes from:
// the route's own for a route with a rate of its own, else its family's,
// so that the routes of FullHunt's general rate share one 60 a minute
// (../shared/API.md: per key and per route family).
func (p policy) counter(pattern string) string {
	if p.rate != 0 && p.rate != generalRate {
		return pattern
	}
	return p.family
}

// routeLimit is the per-key limit of a route of the given rate when the
// general rate is base (--rate-limit, or the account's own rate): base
// itself for a route of the general rate, and in proportion for the others
// (at base 60 exactly FullHunt's figures; at base 120, twice them), at
// least 1. A base of 0 or less turns the limit off.
func routeLimit(rate, base int) int {
	if base <= 0 {
		return 0
	}
	if rate == 0 || rate == generalRate {
		return base
	}
	return max(1, int((int64(rate)*int64(base)+generalRate/2)/generalRate))
}

// route is one entry of the API map.
type route struct {
	Method  string
	Path    string // ServeMux pattern path, e.g. /api/v1/host/{host}
	policy  policy
	handler handlerFunc
}

// handle registers a route: pattern is "METHOD /path".
func (s *Server) handle(pattern string, p policy, h handlerFunc) {
	method, path, _ := strings.Cut(pattern, " ")
	p.reads = readsOnly(method, path)
	s.routes = append(s.routes, route{Method: method, Path: path, policy: p, handler: h})
	s.mux.Handle(pattern, s.wrap(pattern, p, h))
}

// Routes lists the registered routes as "METHOD /path" patterns (for the
// OpenAPI test and the docs).
func (s *Server) Routes() []string {
	out := make([]string, len(s.routes))
	for i, r := range s.routes {
		out[i] = r.Method + " " + r.Path
	}
	return out
}

var (
	errUnavailable = periscope.Errorf(periscope.EUnavailable, "The server is shutting down; retry shortly.")
	errNotFound    = periscope.Errorf(periscope.ENotFound, "No such route.")
)

func errInternal(v any) error {
	return &periscope.Error{Code: periscope.EInternal, Message: "internal", Err: fmt.Errorf("panic: %v", v)}
}

// wrap returns the route's full chain.
func (s *Server) wrap(pattern string, p policy, h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info(r.Context()).route = pattern
		if r.Method == http.MethodHead && p.pool != periscope.PoolNone {
			// A HEAD answer carries no data, so it must not cost a credit;
			// a free HEAD that runs the whole query would be a way around
			// the credits. Refused outright.
			w.Header().Set("Allow", "GET")
			s.writeError(w, r, periscope.Errorf(periscope.EMethodNotAllowed, "HEAD is not offered on charged routes; use GET."))
			return
		}
		if p.public {
			if err := h(w, r); err != nil {
				s.writeError(w, r, err)
			}
			return
		}
		if err := s.serveAPI(w, r, pattern, p, h); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// serveAPI is the chain of every authenticated route, in order: key (a
// failed one counts against the client IP's failed-authentication limit),
// per-key rate limit, entitlement, text and body checks, a non-binding
// credit check, the handler, then for a 2xx of a charged route the credit
// reservation, and for OEM routes the audit record. Charged and OEM routes
// answer from a buffer: the credit is reserved only once the handler has
// validated its input and succeeded (so invalid requests never hold
// credits), and an OEM answer is released only after its audit record is
// written (an OEM request is never served without one).
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request, pattern string, p policy, h handlerFunc) (err error) {
	// Header lookup is case-insensitive by canonicalisation (X-API-KEY,
	// x-api-key); the name is written canonical so Get allocates nothing.
	in := info(r.Context())
	if !in.session {
		key := r.Header.Get("X-Api-Key")
		if p.bearer {
			key = mcpKey(r)
		}
		in.principal, err = s.accounts.Authenticate(r.Context(), key)
	}
	if err != nil {
		// Only failures count and only failures are refused: a valid key
		// behind the same NAT as a key-guesser still gets through.
		if periscope.ErrorCode(err) == periscope.EUnauthorized {
			if res := s.failures.Allow(s.clientIP(r), s.cfg.AuthFailLimit); !res.Allowed {
				s.metrics.rateLimited.WithLabelValues("auth").Inc()
				return rateLimited(res.RetryAfter(s.now()), "Too many failed authentications from this address.")
			}
		}
		return err
	}
	in.authed = true
	principal := &in.principal
	acct := principal.Account
	in.keyPrefix, in.accountID = principal.Key.Prefix, acct.ID

	// A key's requests are counted per route family, and a route with a
	// rate of its own has a count of its own (counter); each route has its
	// own limit (routeLimit).
	base := s.cfg.RateLimit
	if acct.RateLimit > 0 {
		base = acct.RateLimit
	}
	limit := routeLimit(p.rate, base)
	if in.page != nil {
		// A console page is one request at the general rate however many
		// routes it calls (take).
		limit = base
	}
	res := s.take(in.page, principal.Key.ID, p.counter(pattern), limit)
	if limit > 0 {
		h := w.Header()
		h.Set("X-RateLimit-Limit", strconv.Itoa(res.Limit))
		h.Set("X-RateLimit-Remaining", strconv.Itoa(res.Remaining))
		h.Set("X-RateLimit-Reset", strconv.FormatInt(res.Reset.Unix(), 10))
	}
	if !res.Allowed {
		s.metrics.rateLimited.WithLabelValues(p.family).Inc()
		return rateLimited(res.RetryAfter(s.now()), "Rate limit exceeded: %d requests per minute for this key.", limit)
	}

	oem := strings.HasPrefix(r.URL.Path, "/api/v1/oem/")
	status, charged, audited := 0, 0, false
	if oem {
		// Requests that fail before or in the handler are recorded here;
		// served ones were recorded before their answer was released.
		defer func() {
			if audited || err == nil {
				return
			}
			status = statusOf[periscope.ErrorCode(err)]
			if status == 0 {
				status = http.StatusInternalServerError
			}
			if aerr := s.audit(r, principal, status, 0); aerr != nil {
				s.log.Error("audit record lost", "request_id", requestID(r.Context()), "account", acct.ID, "err", aerr)
			}
		}()
	}

	switch {
	case p.need == needEnterprise && !acct.Enterprise:
		return periscope.Errorf(periscope.EEnterpriseRequired, "This route needs an Enterprise account.")
	case p.need == needOEM && !acct.OEM:
		return periscope.Errorf(periscope.EOEMRequired, "This route needs the OEM module.")
	case p.need == needPaid && acct.Plan == "free" && !acct.Enterprise && !acct.OEM:
		return periscope.Errorf(periscope.EForbidden, mcpPaidOnly)
	}
	// After the entitlement check: only accounts that may change assets
	// spend the change budget.
	if p.assetChange {
		if err := s.limitAssetChange(r); err != nil {
			return err
		}
	}
	if err := checkRequestText(r); err != nil {
		return err
	}
	if err := s.readBody(w, r, p, oem); err != nil {
		return err
	}
	// Key, limits, credits and the audit record are read and written on
	// the primary; the handler's own reads may go to a replica that has
	// caught up (hr, the handler's request).
	hr := r
	if p.reads {
		hr = r.WithContext(store.ReplicaReads(r.Context()))
	}
	if p.pool != periscope.PoolNone {
		// Not binding (Reserve is): spares the work of a request that
		// cannot be paid for.
		used, oemUsed := acct.Usage(s.now())
		if p.pool == periscope.PoolOEM && oemUsed >= acct.OEMCreditsPerMonth || p.pool == periscope.PoolMonthly && used >= acct.CreditsPerMonth {
			return store.CreditsExhausted(p.pool, s.now())
		}
	}
	if !p.buffered() && !oem {
		return h(w, hr)
	}
	buf := newBufferedResponse()
	if p.selfCharged {
		buf.charge = &selfCharge{account: acct.ID, pool: p.pool}
	}
	if err := h(buf, hr); err != nil {
		if c := buf.charge; c != nil && c.paid && c.refundable {
			s.refund(r, acct.ID, p.pool, c.period)
		}
		return err
	}
	status = buf.statusCode()
	period := ""
	ok2xx := status >= 200 && status < 300
	switch c := buf.charge; {
	case c != nil && c.paid && ok2xx:
		period, charged = c.period, 1
	case c != nil && c.paid && c.refundable:
		s.refund(r, acct.ID, p.pool, c.period)
	case c == nil && p.pool != periscope.PoolNone && ok2xx:
		if period, err = s.accounts.Reserve(r.Context(), acct.ID, p.pool, 1); err != nil {
			return err
		}
		charged = 1
	}
	if buf.withCredits != nil && status == http.StatusOK {
		bal, berr := int64(0), error(nil)
		if charged == 1 {
			bal, berr = s.balance(r.Context(), acct.ID, p.pool)
		}
		if berr != nil {
			s.refund(r, acct.ID, p.pool, period)
			return berr
		}
		buf.body.Reset()
		writeJSON(buf, http.StatusOK, buf.withCredits(bal))
	}
	if oem {
		if aerr := s.audit(r, principal, status, charged); aerr != nil && buf.charge != nil && buf.charge.paid && !buf.charge.refundable {
			// The work is done and paid for in one transaction (a queued
			// scan): it cannot be taken back, so it is answered.
			audited = true
			s.log.Error("audit record lost", "request_id", requestID(r.Context()), "account", acct.ID, "err", aerr)
		} else if aerr != nil {
			audited = true // the failure is logged below; no second attempt
			s.log.Error("audit record not written; request failed", "request_id", requestID(r.Context()), "account", acct.ID, "err", aerr)
			if charged == 1 {
				s.refund(r, acct.ID, p.pool, period)
			}
			return &periscope.Error{Code: periscope.EUnavailable, Err: aerr,
				Message: "The request could not be recorded in the audit log, so it was neither served nor charged; retry shortly."}
		}
		audited = true
	}
	if charged == 1 {
		s.metrics.credits.WithLabelValues(poolName(p.pool)).Inc()
	}
	buf.flush(w)
	return nil
}

// refund gives a reserved credit back. A fresh context, so a client that
// hung up still gets its refund.
func (s *Server) refund(r *http.Request, accountID string, pool periscope.Pool, period string) {
	if err := s.accounts.Refund(context.WithoutCancel(r.Context()), accountID, pool, 1, period); err != nil {
		s.log.Error("refund failed", "request_id", requestID(r.Context()), "account", accountID, "err", err)
	}
}

// buffered reports whether the route answers through a buffer (it charges).
func (p policy) buffered() bool { return p.pool != periscope.PoolNone && !p.streamed }

// bufferedResponse holds a handler's answer until it is paid for and audited.
// Handlers build whole JSON bodies in memory anyway (writeJSON), so this
// costs one copy.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
	// withCredits, when set, builds the body from the balance after the
	// charge (writeWithCredits).
	withCredits func(balance int64) any
	// charge is a self-charged route's credit (policy.selfCharged).
	charge *selfCharge
}

// selfCharge is the credit a self-charged route's handler takes.
type selfCharge struct {
	account string
	pool    periscope.Pool
	// paid: the credit was taken, in period; refundable: by chargeBefore,
	// so the wrapper gives it back when the request fails.
	paid, refundable bool
	period           string
}

// chargePool is the pool a self-charged handler charges along with its
// work (chargeWithWork); PoolNone outside a self-charged route.
func chargePool(w http.ResponseWriter) periscope.Pool {
	if b, ok := w.(*bufferedResponse); ok && b.charge != nil {
		return b.charge.pool
	}
	return periscope.PoolNone
}

// chargedWithWork records that the handler's store call took the credit
// of chargePool(w) in the transaction that did the work.
func chargedWithWork(w http.ResponseWriter) {
	if b, ok := w.(*bufferedResponse); ok && b.charge != nil && b.charge.pool != periscope.PoolNone {
		b.charge.paid = true
	}
}

// chargeBefore takes a self-charged route's credit before its side effect
// (a registry query): with the pool spent, the request fails here. The
// wrapper gives the credit back if the request then fails.
func (s *Server) chargeBefore(w http.ResponseWriter, r *http.Request) error {
	b, ok := w.(*bufferedResponse)
	if !ok || b.charge == nil || b.charge.paid || b.charge.pool == periscope.PoolNone {
		return nil
	}
	period, err := s.accounts.Reserve(r.Context(), b.charge.account, b.charge.pool, 1)
	if err != nil {
		return err
	}
	b.charge.paid, b.charge.refundable, b.charge.period = true, true, period
	return nil
}

func newBufferedResponse() *bufferedResponse { return &bufferedResponse{header: http.Header{}} }

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

func (b *bufferedResponse) statusCode() int {
	if b.status == 0 {
		return http.StatusOK
	}
	return b.status
}

// flush sends the held answer.
func (b *bufferedResponse) flush(w http.ResponseWriter) {
	h := w.Header()
	for k, v := range b.header {
		h[k] = v
	}
	w.WriteHeader(b.statusCode())
	w.Write(b.body.Bytes())
}

func poolName(p periscope.Pool) string {
	if p == periscope.PoolOEM {
		return "oem"
	}
	return "monthly"
}

func rateLimited(after int, format string, args ...any) error {
	return &retryError{err: periscope.Errorf(periscope.ERateLimited, format, args...), after: after}
}

// readBody bounds and buffers the body of POST/PUT/PATCH/DELETE requests:
// an explicit non-JSON content type is a 415, more than MaxBodyBytes a 413.
// OEM bodies must be JSON objects whose query_tags, if present, is an object.
// Routes whose policy takes forms keep form fields for the handler
// (formFields).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, p policy, oem bool) error {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return nil
	}
	// curl -d sends application/x-www-form-urlencoded; a JSON object sent
	// that way is taken as JSON, anything else under that type is a 415.
	form := false
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		form = err == nil && mt == "application/x-www-form-urlencoded"
		if !form && (err != nil || !(mt == "application/json" || strings.HasSuffix(mt, "+json"))) {
			return unsupportedMedia(ct)
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return periscope.Errorf(periscope.ETooLarge, "The request body is larger than %d bytes.", s.cfg.MaxBodyBytes)
	}
	if err != nil {
		return periscope.Errorf(periscope.EInvalidJSON, "The request body could not be read.")
	}
	if t := bytes.TrimSpace(body); form && len(t) > 0 && t[0] != '{' {
		if !p.forms {
			return unsupportedMedia(r.Header.Get("Content-Type"))
		}
		fields, err := url.ParseQuery(string(t))
		if err != nil {
			return periscope.Errorf(periscope.EInvalid, "The form body could not be parsed.")
		}
		if err := checkFormText(fields); err != nil {
			return err
		}
		*r = *r.WithContext(context.WithValue(r.Context(), ctxForm, fields))
		return nil
	}
	*r = *r.WithContext(context.WithValue(r.Context(), ctxBody, body))
	if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 {
		if err := checkJSONText(trimmed); err != nil {
			return err
		}
		if trimmed[0] != '{' || !json.Valid(trimmed) {
			return periscope.Errorf(periscope.EInvalidJSON, "The request body must be a JSON object.")
		}
		if oem {
			var probe struct {
				QueryTags json.RawMessage `json:"query_tags"`
			}
			json.Unmarshal(trimmed, &probe)
			if t := bytes.TrimSpace(probe.QueryTags); len(t) > 0 && string(t) != "null" && t[0] != '{' {
				return periscope.Errorf(periscope.EInvalid, "query_tags must be a JSON object.")
			}
			if len(probe.QueryTags) > maxQueryTagsBytes {
				// Tags are stored whole in every audit record.
				return periscope.Errorf(periscope.EInvalid, "query_tags must be at most %d bytes of JSON.", maxQueryTagsBytes)
			}
		}
	}
	return nil
}

func unsupportedMedia(ct string) error {
	return periscope.Errorf(periscope.EUnsupportedMedia, "Request bodies must be application/json (got %q).", periscope.Clip(ct, 64))
}

// formFields returns the form fields of a request whose route takes forms
// and whose body was form-encoded (ok false otherwise: read the JSON body).
func formFields(r *http.Request) (url.Values, bool) {
	v, ok := r.Context().Value(ctxForm).(url.Values)
	return v, ok
}

// requestBody returns the buffered body.
func requestBody(r *http.Request) []byte {
	b, _ := r.Context().Value(ctxBody).([]byte)
	return b
}

// principalOf returns who the request acts for (set by the wrapper).
func principalOf(r *http.Request) *periscope.Principal {
	if i, ok := r.Context().Value(ctxInfo).(*requestInfo); ok && i.authed {
		return &i.principal
	}
	return nil
}

// notFound answers unmatched requests: 405 with Allow when the path exists
// for other methods, else 404.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "/" && pattern != "" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		s.writeError(w, r, periscope.Errorf(periscope.EMethodNotAllowed, "%s is not allowed here; use %s.", r.Method, strings.Join(allow, " or ")))
		return
	}
	s.writeError(w, r, errNotFound)
}

// readsOnly reports whether a route only reads, so that a read replica may
// serve its queries: GET routes but those that start a scan, and the POST
// searches that keep no cache of their own (the dark-web search and the
// WHOIS lookup write the answers they read back).
func readsOnly(method, path string) bool {
	switch method {
	case http.MethodGet:
		return !strings.Contains(path, "on-demand-scan")
	case http.MethodPost:
		switch path {
		case "/api/v1/global/search", "/api/v1/oem/attack-surface/search", "/api/v1/oem/attack-surface/host",
			"/api/v1/oem/typosquatting/search", "/api/v1/oem/potential-phishing/search", "/api/v1/oem/alerts/search",
			"/api/v1/oem/whois/search", "/api/v1/oem/historical-hosts/search",
			"/api/v1/vulnerability-intelligence/vulnerability-search", "/api/v1/vulnerability-intelligence/advisories-search",
			"/api/v1/vulnerability-intelligence/exploits-search", "/api/v1/oem/vulnerability-intelligence/feed",
			"/api/v1/oem/vulnerability-intelligence/vulnerability-search", "/api/v1/oem/vulnerability-intelligence/advisories-search",
			"/api/v1/oem/vulnerability-intelligence/exploits-search":
			return true
		}
	}
	return false
}
