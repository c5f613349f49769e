package api

import (
	"bytes"
	"context"
	"net/http"
	"strings"

	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/ratelimit"
)

// The web console (internal/console) is served by this server beside the
// API, so its pages share the request id, recovery, access log and metrics.
// Its routes are in the route table with the page policy: no API key; the
// console authenticates a page by its session and reads and changes data
// only through Call, which runs the API route itself, so tiers, tenancy,
// credits, rate limits and the OEM audit apply to a page exactly as to a
// keyed request.

// page is the policy of the console's routes.
var page = policy{page: true}

// HandlePage registers a web-console route: pattern is "METHOD /path",
// outside /api/. The console authenticates it.
func (s *Server) HandlePage(pattern string, h http.Handler) {
	method, path, _ := strings.Cut(pattern, " ")
	if strings.HasPrefix(path, "/api/") {
		panic("api: console route " + pattern + " under /api/")
	}
	s.routes = append(s.routes, route{Method: method, Path: path, policy: page})
	s.mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info(r.Context()).route = pattern
		h.ServeHTTP(w, r)
	}))
}

// Answer is an API route's answer to Call.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte // the JSON body, an error body for a status ≥ 400
}

// Call runs the API route of method and target (a path under /api/v1/ with
// its query string) for p, the principal of the console session serving r,
// through the chain every authenticated request takes, bar reading the
// key: rate limit, entitlement, body checks, credits, audit. body, when
// not nil, is the JSON request body. The page's access-log line then names
// the key's prefix and account.
func (s *Server) Call(r *http.Request, p periscope.Principal, method, target string, body []byte) Answer {
	outer := info(r.Context())
	outer.keyPrefix, outer.accountID = p.Key.Prefix, p.Account.ID
	buf := newBufferedResponse()
	if !strings.HasPrefix(target, "/api/v1/") {
		s.writeError(buf, r, errNotFound)
		return Answer{Status: buf.statusCode(), Header: buf.header, Body: buf.body.Bytes()}
	}
	if s.draining.Load() {
		s.writeError(buf, r, errUnavailable)
		return Answer{Status: buf.statusCode(), Header: buf.header, Body: buf.body.Bytes()}
	}
	in := &requestInfo{id: outer.id, principal: p, authed: true, session: true, page: outer}
	req, err := http.NewRequestWithContext(context.WithValue(r.Context(), ctxInfo, in), method, target, bytes.NewReader(body))
	if err != nil {
		s.writeError(buf, r, periscope.Errorf(periscope.EInvalid, "The request could not be made."))
		return Answer{Status: buf.statusCode(), Header: buf.header, Body: buf.body.Bytes()}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	// The client's address, for the OEM audit record.
	req.RemoteAddr = r.RemoteAddr
	if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
		req.Header["X-Forwarded-For"] = xff
	}
	s.mux.ServeHTTP(buf, req)
	return Answer{Status: buf.statusCode(), Header: buf.header, Body: buf.body.Bytes()}
}

// Forward runs an API route like Call but writes its answer to w as the
// route writes it (an export streamed to the browser as the API streams
// it, with its own content type and disposition).
func (s *Server) Forward(w http.ResponseWriter, r *http.Request, p periscope.Principal, method, target string) {
	outer := info(r.Context())
	outer.keyPrefix, outer.accountID = p.Key.Prefix, p.Account.ID
	if !strings.HasPrefix(target, "/api/v1/") {
		s.writeError(w, r, errNotFound)
		return
	}
	in := &requestInfo{id: outer.id, principal: p, authed: true, session: true, page: outer}
	req, err := http.NewRequestWithContext(context.WithValue(r.Context(), ctxInfo, in), method, target, nil)
	if err != nil {
		s.writeError(w, r, periscope.Errorf(periscope.EInvalid, "The request could not be made."))
		return
	}
	req.RemoteAddr = r.RemoteAddr
	s.mux.ServeHTTP(w, req)
}

// Allow applies to a console action that no API route serves (the
// account's keys, one alert by id) what the wrapper applies to an
// Enterprise route of the general rate: the key's rate limit (one count
// for all such actions), then the Enterprise entitlement when enterprise
// is set. Its error is the API's.
func (s *Server) Allow(r *http.Request, p periscope.Principal, enterprise bool) error {
	outer := info(r.Context())
	outer.keyPrefix, outer.accountID = p.Key.Prefix, p.Account.ID
	limit := s.cfg.RateLimit
	if p.Account.RateLimit > 0 {
		limit = p.Account.RateLimit
	}
	if res := s.take(outer, p.Key.ID, "console", limit); !res.Allowed {
		s.metrics.rateLimited.WithLabelValues("general").Inc()
		return rateLimited(res.RetryAfter(s.now()), "Rate limit exceeded: %d requests per minute for this key.", limit)
	}
	if enterprise && !p.Account.Enterprise {
		return periscope.Errorf(periscope.EEnterpriseRequired, "This route needs an Enterprise account.")
	}
	return nil
}

// Status is the HTTP status of an error's code, from the API's one table.
func Status(err error) int {
	if s, ok := statusOf[periscope.ErrorCode(err)]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// AuthFailed counts a failed console sign-in against the client's address,
// in the same counter as the API's failed authentications; past the limit
// it answers the API's rate-limited error.
func (s *Server) AuthFailed(r *http.Request) error {
	if res := s.failures.Allow(s.clientIP(r), s.cfg.AuthFailLimit); !res.Allowed {
		s.metrics.rateLimited.WithLabelValues("auth").Inc()
		return rateLimited(res.RetryAfter(s.now()), "Too many failed authentications from this address.")
	}
	return nil
}

// take applies the per-key limit: a request takes a token from the key's
// count of its route. A console page (page, the page's request) is one
// request of a count of its own, "console", however many routes it reads:
// its first call (or Allow) takes the token, the others none. (The
// answers of a page's calls are not sent to the browser, so neither are
// their rate-limit headers.)
func (s *Server) take(page *requestInfo, keyID, route string, limit int) ratelimit.Result {
	if page != nil {
		if page.counted {
			return ratelimit.Result{Allowed: true, Limit: limit}
		}
		page.counted = true
		route = "console"
	}
	return s.limiter.Allow(keyID+"|"+route, limit)
}
