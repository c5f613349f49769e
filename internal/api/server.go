// Package api serves Periscope's HTTP API under /api/v1 (see routes.go for
// the whole map). Every route goes through one wrapper that authenticates,
// rate-limits, checks entitlements, bounds the body, reserves credits, and
// records OEM requests in the audit trail, so handlers only parse, call the
// store and write.
package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/netip"
	"path"
	"strings"
	"sync/atomic"
	"time"

	"github.com/periscope-oss/periscope/internal/accesslog"
	"github.com/periscope-oss/periscope/internal/asset"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/ratelimit"
)

// Config holds the API's settings.
type Config struct {
	// RateLimit is the general per-key limit in requests per minute (each
	// route counts on its own): the limit of every route at FullHunt's
	// general rate, and the scale of the routes FullHunt documents at
	// another rate (routeLimit); an account's own rate takes its place.
	// 0 turns per-key limiting off.
	RateLimit int
	// AuthFailLimit is how many failed authentications a client IP may make
	// per minute before it gets 429s.
	AuthFailLimit int
	// MaxBodyBytes bounds request bodies (413 beyond).
	MaxBodyBytes int64
	// RangeLimits caps organization IP-range sizes.
	RangeLimits asset.Limits
	// Version is reported by /healthz.
	Version string
	// TrustedProxies are the networks of reverse proxies whose
	// X-Forwarded-For is believed when finding the client's address (for
	// the failed-authentication limit and the log). Empty: the peer address.
	TrustedProxies []netip.Prefix
	// AssetChangeLimit is how many organization and asset changes (create,
	// delete, add or remove a domain or range) an account may make per
	// minute; 0 turns it off.
	AssetChangeLimit int
	// WebhookPorts are the ports a webhook URL may name (the ports the
	// dispatcher's dialer allows); nil allows any (--allow-private-targets).
	WebhookPorts []int
	// AlertBaseline is how long after an asset's first data its changes
	// are a silent baseline (serve --alert-baseline), said where an asset
	// is added; 0 says nothing.
	AlertBaseline time.Duration
}

// DefaultConfig returns FullHunt's published limits.
func DefaultConfig() Config {
	return Config{RateLimit: generalRate, AuthFailLimit: 30, MaxBodyBytes: 1 << 20,
		RangeLimits: asset.DefaultLimits, Version: "dev", AssetChangeLimit: 30}
}

// Deps are the API's collaborators (see stores.go for what each group
// needs). Capabilities add theirs here.
type Deps struct {
	Accounts Accounts
	Orgs     Orgs
	Hosts    Hosts
	Vulns    Vulns
	Listings BrandListings
	Log      *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Ready, when set, adds checks to /readyz (e.g. feed sync status).
	Ready []func(context.Context) error
	// Brand is the running brand-protection monitor behind the OEM
	// phishing and typosquatting searches (required).
	Brand BrandWatcher
	// Whois is the WHOIS/RDAP lookup behind /oem/whois/*; nil answers 503.
	Whois WhoisService
	// WhoisRecords are the stored WHOIS records shown as whois_data beside
	// domain listings; nil answers whois_data null.
	WhoisRecords WhoisRecords
	// AssetsChanged, when set, is called after an organization's domains
	// or IP ranges change or an organization is deleted (the brand
	// monitor reconciles at once instead of at its next poll).
	AssetsChanged func()
	// Limits and AuthFailures count the per-key (and per-account) limits
	// and the failed authentications per client IP; nil means in-process
	// counters (one instance). Several instances share a ratelimit.Redis.
	Limits, AuthFailures ratelimit.Counter
	// Alerts serves the change ledger, alerts and webhooks (alerts.Service).
	Alerts AlertService
	// Scans is active monitoring (domain verification and on-demand
	// scans); nil answers those routes 503.
	Scans ScanService
	// Darkweb is the breach store behind the dark-web routes; nil answers
	// them 503.
	Darkweb Darkweb
	// Claims are the organizations' domain claims and which are verified,
	// for the dark-web disclosure policy; nil shows no record's secrets
	// but to accounts allowed all of them.
	Claims DomainClaims
	// AccessLog, when set, receives the access log (one JSON line a
	// request, in the shape of Log's JSON lines; serve writes both through
	// it); nil sends the access log through Log.
	AccessLog *accesslog.Writer
	// Enrich, when set, describes addresses for /nexus/ip-lookup (without
	// it the lookup answers from the host index alone).
	Enrich IPEnricher
	// History reads the change ledger back into past host states (the
	// host history routes); nil answers them 503.
	History History
	// Tor is the stored Tor exit list (/nexus/tor/check-ip); nil answers
	// it 503.
	Tor TorExits
	// OrgProfiles builds the organization profiles of the organizations
	// database routes.
	OrgProfiles OrgProfiles
	// Domains is the Nexus domain collection.
	Domains DomainCollection
	// AuditKey seals the audit records of requests that name a person
	// (the OEM dark-web search) for their account; without it such a
	// request cannot be audited and fails with 503.
	AuditKey AuditKey
}

// Server is the HTTP API. It implements http.Handler.
type Server struct {
	cfg         Config
	accounts    Accounts
	orgs        Orgs
	hosts       Hosts
	vulns       Vulns
	listings    BrandListings
	log         *slog.Logger
	now         func() time.Time
	limiter     ratelimit.Counter
	failures    ratelimit.Counter
	metrics     *metrics
	mux         *http.ServeMux
	routes      []route
	ready       []func(context.Context) error
	openapi     []byte
	draining    atomic.Bool
	brand       BrandWatcher
	changed     func()
	whois       WhoisService
	whoisRec    WhoisRecords
	alerts      AlertService
	scans       ScanService
	darkweb     Darkweb
	claims      DomainClaims
	enrich      IPEnricher
	access      *accesslog.Writer
	history     History
	mcp         *mcpServer
	tor         TorExits
	orgProfiles OrgProfiles
	domains     DomainCollection
	auditKey    AuditKey
}

// NewServer returns the API with every route registered.
func NewServer(cfg Config, d Deps) *Server {
	s := &Server{cfg: cfg, accounts: d.Accounts, orgs: d.Orgs, hosts: d.Hosts, vulns: d.Vulns, listings: d.Listings, log: d.Log, now: d.Now, ready: d.Ready, mux: http.NewServeMux(),
		brand: d.Brand, changed: d.AssetsChanged, whois: d.Whois, alerts: d.Alerts, scans: d.Scans, darkweb: d.Darkweb, claims: d.Claims, enrich: d.Enrich, whoisRec: d.WhoisRecords, access: d.AccessLog,
		history: d.History, tor: d.Tor, orgProfiles: d.OrgProfiles, domains: d.Domains, auditKey: d.AuditKey}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.limiter, s.failures = d.Limits, d.AuthFailures
	if s.limiter == nil {
		l := ratelimit.New()
		l.Now, s.limiter = s.now, l
	}
	if s.failures == nil {
		l := ratelimit.New()
		l.Now, s.failures = s.now, l
	}
	s.metrics = newMetrics()
	s.registerRoutes()
	s.mux.HandleFunc("/", s.notFound)
	doc, err := buildOpenAPI()
	if err != nil {
		// The document is embedded and tested; failing here is a build defect.
		panic("api: embedded OpenAPI document: " + err.Error())
	}
	s.openapi = doc
	if s.mcp, err = newMCPServer(s, doc); err != nil {
		// The catalog and the document are both built in; a mismatch is a
		// build defect the tests catch.
		panic("api: MCP tools: " + err.Error())
	}
	return s
}

// Drain makes the server answer 503 to new API requests (shutdown begun)
// while in-flight ones finish.
func (s *Server) Drain() { s.draining.Store(true) }

// ServeHTTP runs the outer middleware: request id, recovery, access log and
// metrics, then the mux.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := r.Header.Get("X-Request-Id") // canonical spelling: Get then allocates nothing
	if !validRequestID(id) {
		id = newRequestID()
	}
	// One context value a request: the inner layers fill in the principal,
	// route and key for the log instead of deriving contexts of their own.
	// The request's state and its response recorder in one allocation.
	st := &struct {
		info requestInfo
		rec  recorder
	}{info: requestInfo{id: id}, rec: recorder{ResponseWriter: w}}
	info, rec := &st.info, &st.rec
	r = r.WithContext(context.WithValue(r.Context(), ctxInfo, info))
	rec.Header().Set("X-Request-Id", id)
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("panic", "request_id", id, "path", r.URL.Path, "panic", v)
			if rec.status == 0 {
				s.writeError(rec, r, errInternal(v))
			}
		}
		s.observe(r, rec, info, time.Since(start))
	}()
	if !cleanPath(r.URL.Path) {
		// ServeMux would answer a 301/307 HTML redirect to the cleaned
		// path; no route has such a path, so it is a JSON 404.
		s.writeError(rec, r, errNotFound)
		return
	}
	if s.draining.Load() && strings.HasPrefix(r.URL.Path, "/api/") {
		s.writeError(rec, r, errUnavailable)
		return
	}
	s.mux.ServeHTTP(rec, r)
}

func (s *Server) observe(r *http.Request, rec *recorder, info *requestInfo, d time.Duration) {
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	route := info.route
	if route == "" {
		route = "unmatched"
	}
	s.metrics.observe(route, r.Method, status, d)
	e := accesslog.Entry{Time: time.Now(), RequestID: info.id, Method: r.Method,
		Path:  r.URL.Path, // never the query: a key pasted there must not be logged
		Route: route, Status: status, Bytes: rec.bytes, DurationUS: d.Microseconds()}
	if info.keyPrefix != "" {
		e.Key, e.Account = info.keyPrefix, info.accountID
	}
	if s.access != nil {
		e.Remote = s.clientIP(r)
		if err := s.access.Log(&e); err != nil {
			s.log.Warn("access log not written", "err", err)
		}
		return
	}
	// Without an access-log writer the line goes through Log's handler,
	// straight: Logger.LogAttrs would walk the stack for a source position
	// the access log never prints.
	h := s.log.Handler()
	if !h.Enabled(r.Context(), slog.LevelInfo) {
		return
	}
	e.Remote = s.clientIP(r)
	line := slog.NewRecord(e.Time, slog.LevelInfo, "request", 0)
	line.AddAttrs(e.Attrs()...)
	_ = h.Handle(r.Context(), line)
}

type ctxKey int

const (
	ctxInfo ctxKey = iota
	ctxBody
	ctxForm
)

// requestInfo is the request's state shared by the layers: its id, and
// what inner layers fill in for the outer log and metrics and for the
// handlers (the authenticated principal).
type requestInfo struct {
	id        string
	principal periscope.Principal // valid when authenticated
	authed    bool
	// session: a console page's call (Call); principal is its session's.
	session bool
	// page is the console page request a call is made from (nil for an
	// API request); counted is set on it once a call has taken the key's
	// rate-limit token for the page.
	page      *requestInfo
	counted   bool
	route     string
	keyPrefix string
	accountID string
}

func info(ctx context.Context) *requestInfo {
	if i, ok := ctx.Value(ctxInfo).(*requestInfo); ok {
		return i
	}
	return &requestInfo{}
}

func requestID(ctx context.Context) string {
	if i, ok := ctx.Value(ctxInfo).(*requestInfo); ok {
		return i.id
	}
	return ""
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

func newRequestID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// clientIP is the client's address: the peer address, or, when the peer is
// a trusted proxy, the right-most X-Forwarded-For address that is not a
// trusted proxy (the left part of the header is whatever the client wrote).
func (s *Server) clientIP(r *http.Request) string {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		host := r.RemoteAddr
		if i := strings.LastIndexByte(host, ':'); i >= 0 {
			host = host[:i]
		}
		return strings.Trim(host, "[]")
	}
	addr := peer.Addr().Unmap()
	if !s.trusted(addr) {
		return addr.String()
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break // a malformed hop: stop at the last address we can vouch for
		}
		addr = hop.Unmap()
		if !s.trusted(addr) {
			break
		}
	}
	return addr.String()
}

func (s *Server) trusted(a netip.Addr) bool {
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// cleanPath reports whether p is already in the form ServeMux routes (no
// ".", ".." or empty segments); the mux redirects any other.
func cleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}

// recorder remembers the status and size written.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
