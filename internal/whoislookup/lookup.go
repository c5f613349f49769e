package whoislookup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/periscope-oss/periscope/internal/rdap"
	"github.com/periscope-oss/periscope/internal/whois"
	"github.com/periscope-oss/periscope/internal/whoisstore"
	"golang.org/x/sync/singleflight"
)

// Cache lifetimes (issue 13): answers a day, "not registered" an hour.
const (
	DefaultCacheTTL    = 24 * time.Hour
	DefaultNotFoundTTL = time.Hour
	upstreamTimeout    = 20 * time.Second
)

// UnavailableError means no upstream answered and nothing is cached: the
// API answers 503 with Retry-After.
type UnavailableError struct {
	RetryAfter time.Duration
	Err        error
}

func (e *UnavailableError) Error() string { return "whois upstream unavailable: " + e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }

// Service answers lookups.
type Service struct {
	Store       *whoisstore.Store
	RDAP        *rdap.Client // its Bootstrap is set by New to the service's registries
	WHOIS       *whois.Client
	Limiter     *Limiter
	Now         func() time.Time
	CacheTTL    time.Duration
	NotFoundTTL time.Duration

	bootstrap   atomic.Pointer[rdap.Bootstrap]
	dnsOverride *rdap.Registry
	group       singleflight.Group
}

// Config builds a Service.
type Config struct {
	Store   *whoisstore.Store
	RDAP    *rdap.Client
	WHOIS   *whois.Client
	Limiter *Limiter
	Now     func() time.Time
	// DNSBootstrap, when set (--rdap-bootstrap), replaces the dns registry
	// and is never overwritten by the daily refresh.
	DNSBootstrap *rdap.Registry
}

// New wires a Service: the RDAP and WHOIS clients wait on the limiter and
// read the service's bootstrap registries.
func New(c Config) *Service {
	s := &Service{Store: c.Store, RDAP: c.RDAP, WHOIS: c.WHOIS, Limiter: c.Limiter, Now: c.Now,
		CacheTTL: DefaultCacheTTL, NotFoundTTL: DefaultNotFoundTTL, dnsOverride: c.DNSBootstrap}
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Limiter == nil {
		s.Limiter = NewLimiter(30, 5, 10*time.Second, time.Now)
	}
	b := rdap.Bundled()
	if c.DNSBootstrap != nil {
		b.DNS = c.DNSBootstrap
	}
	s.bootstrap.Store(b)
	if s.RDAP != nil {
		s.RDAP.Bootstrap = s.bootstrap.Load
		if s.Limiter != nil {
			s.RDAP.Wait = s.Limiter.Wait
		}
	}
	if s.WHOIS != nil && s.Limiter != nil {
		s.WHOIS.Wait = s.Limiter.Wait
	}
	return s
}

// Result is the lookup's answer in the shape of docs/api.md "WHOIS and RDAP", plus Cached
// and Stale.
type Result struct {
	Domain    string `json:"domain"`
	Cached    bool   `json:"cached"`
	Stale     bool   `json:"stale"`
	WhoisData Data   `json:"whois_data"`
}

// Data is whois_data.
type Data struct {
	Domain     string          `json:"domain"`
	TLD        string          `json:"tld"`
	Registered bool            `json:"registered"`
	QueriedAt  string          `json:"queried_at"`
	RDAP       json.RawMessage `json:"rdap"`
	WHOIS      *WhoisView      `json:"whois"`
}

// WhoisView is whois_data.whois: the port-43 answer, parsed, with its text.
type WhoisView struct {
	Source      string   `json:"source"`
	Registrar   string   `json:"registrar"`
	IANAID      string   `json:"registrar_iana_id,omitempty"`
	Status      []string `json:"status"`
	CreatedAt   *string  `json:"created_at"`
	UpdatedAt   *string  `json:"updated_at"`
	ExpiresAt   *string  `json:"expires_at"`
	Nameservers []string `json:"nameservers"`
	DNSSEC      string   `json:"dnssec,omitempty"`
	Registrant  *Contact `json:"registrant"`
	Raw         string   `json:"raw"`
}

// Contact is the registrant where a registry publishes it.
type Contact struct {
	Org     string `json:"org,omitempty"`
	Email   string `json:"email,omitempty"`
	Country string `json:"country,omitempty"`
}

// RDAPView is whois_data.rdap.
type RDAPView struct {
	rdap.Summary
	CreatedAt *string `json:"created_at"`
	UpdatedAt *string `json:"updated_at"`
	ExpiresAt *string `json:"expires_at"`
}

func timeText(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339)
	return &s
}

// Lookup answers for domain (already Normalize'd, with its tld): from the
// cache while fresh unless noCache, else upstream; when upstream fails, the
// stored answer marked stale, else an *UnavailableError.
func (s *Service) Lookup(ctx context.Context, domain, tld string, noCache bool) (*Result, error) {
	if !noCache {
		rec, err := s.Store.Get(ctx, domain)
		if err == nil && s.Now().Before(rec.CacheExpires) {
			return view(rec, true, false), nil
		}
		if err != nil && !errors.Is(err, whoisstore.ErrNotFound) {
			return nil, err
		}
	}
	// One upstream query per domain at a time; the others share its answer.
	// It runs detached from the first caller's context so a client that
	// hangs up does not fail the rest.
	v, err, _ := s.group.Do(domain, func() (any, error) {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), upstreamTimeout)
		defer cancel()
		return s.refresh(fctx, domain, tld)
	})
	if err != nil {
		return s.stale(ctx, domain, err)
	}
	return view(v.(whoisstore.Record), false, false), nil
}

// stale answers from the stored record after an upstream failure.
func (s *Service) stale(ctx context.Context, domain string, upErr error) (*Result, error) {
	rec, err := s.Store.Get(ctx, domain)
	if err == nil {
		return view(rec, true, true), nil
	}
	retry := time.Minute
	var th *ThrottledError
	var lim *rdap.LimitedError
	switch {
	case errors.As(upErr, &th):
		retry = th.RetryAfter
	case errors.As(upErr, &lim):
		retry = lim.RetryAfter
	}
	return nil, &UnavailableError{RetryAfter: max(retry, time.Second), Err: upErr}
}

// refresh asks upstream and stores the answer.
func (s *Service) refresh(ctx context.Context, domain, tld string) (whoisstore.Record, error) {
	now := s.Now()
	rec, err := s.ask(ctx, domain, tld)
	if err != nil {
		return whoisstore.Record{}, err
	}
	rec.Domain, rec.TLD, rec.QueriedAt, rec.Source = domain, tld, now.UTC().Truncate(time.Second), "lookup"
	ttl := s.CacheTTL
	if rec.NotFound {
		ttl = s.NotFoundTTL
	}
	rec.CacheExpires = rec.QueriedAt.Add(ttl)
	if err := s.Store.Put(ctx, rec); err != nil {
		return whoisstore.Record{}, err
	}
	return rec, nil
}

// ask tries RDAP, then port 43 when the TLD has no RDAP server or RDAP
// failed for another reason than a rate limit.
func (s *Service) ask(ctx context.Context, domain, tld string) (whoisstore.Record, error) {
	var rdapErr error
	if s.RDAP != nil {
		ans, err := s.RDAP.Domain(ctx, domain)
		switch {
		case err == nil:
			return s.fromRDAP(ans), nil
		case errors.Is(err, rdap.ErrNotFound):
			return whoisstore.Record{NotFound: true, RDAPSource: "rdap"}, nil
		}
		var lim *rdap.LimitedError
		if errors.As(err, &lim) {
			s.Limiter.Backoff(lim.Host, lim.RetryAfter)
		}
		if !errors.Is(err, rdap.ErrNoServer) {
			rdapErr = err
		}
	}
	if s.WHOIS == nil {
		return whoisstore.Record{}, errors.Join(rdapErr, errors.New("no whois client"))
	}
	ans, err := s.WHOIS.Lookup(ctx, domain, tld)
	if err != nil {
		var lim *whois.LimitedError
		if errors.As(err, &lim) {
			s.Limiter.Backoff(lim.Server, 0)
		}
		if rdapErr != nil {
			return whoisstore.Record{}, fmt.Errorf("rdap: %w; whois: %w", rdapErr, err)
		}
		return whoisstore.Record{}, err
	}
	s.Limiter.OK(ans.Server)
	return FromWhois(ans.Raw, ans.RegistryRaw, ans.Server), nil
}

func (s *Service) fromRDAP(ans rdap.Answer) whoisstore.Record {
	sum := rdap.Summarize(ans.URL, ans.Object, ans.Registrar)
	return FromRDAPSummary(sum)
}

// FromRDAPSummary turns an RDAP summary into a stored record (also used by
// ingest).
func FromRDAPSummary(sum rdap.Summary) whoisstore.Record {
	v := RDAPView{Summary: sum, CreatedAt: timeText(sum.CreatedAt), UpdatedAt: timeText(sum.UpdatedAt), ExpiresAt: timeText(sum.ExpiresAt)}
	b, _ := json.Marshal(v)
	rec := whoisstore.Record{Registrar: sum.Registrar, RegistrarIANAID: sum.IANAID, CreatedAt: sum.CreatedAt,
		UpdatedAt: sum.UpdatedAt, ExpiresAt: sum.ExpiresAt, Status: sum.Status, NameServers: sum.Nameservers,
		DNSSEC: sum.DNSSEC, RDAPSource: sum.Source, RDAPJSON: string(b)}
	if r := sum.Registrant; r != nil {
		rec.RegistrantOrg, rec.RegistrantEmail, rec.RegistrantCountry = r.Org, r.Email, r.Country
	}
	return rec
}

// FromWhois turns a port-43 answer (the registrar's, and the registry's
// when a referral was followed) into a stored record: the registrar's
// fields first, the registry's where the registrar is silent.
func FromWhois(raw, registryRaw, server string) whoisstore.Record {
	p := whois.Parse(raw)
	if registryRaw != "" {
		r := whois.Parse(registryRaw)
		fill := func(dst *string, v string) {
			if *dst == "" {
				*dst = v
			}
		}
		fill(&p.Registrar, r.Registrar)
		fill(&p.RegistrarIANAID, r.RegistrarIANAID)
		fill(&p.DNSSEC, r.DNSSEC)
		for _, pair := range [][2]*time.Time{{&p.CreatedAt, &r.CreatedAt}, {&p.UpdatedAt, &r.UpdatedAt}, {&p.ExpiresAt, &r.ExpiresAt}} {
			if pair[0].IsZero() {
				*pair[0] = *pair[1]
			}
		}
		if len(p.NameServers) == 0 {
			p.NameServers = r.NameServers
		}
		if len(p.Status) == 0 {
			p.Status = r.Status
		}
	}
	return whoisstore.Record{Registrar: p.Registrar, RegistrarIANAID: p.RegistrarIANAID, CreatedAt: p.CreatedAt,
		UpdatedAt: p.UpdatedAt, ExpiresAt: p.ExpiresAt, Status: p.Status, NameServers: p.NameServers, DNSSEC: p.DNSSEC,
		RegistrantOrg: p.RegistrantOrg, RegistrantEmail: p.RegistrantEmail, RegistrantCountry: p.RegistrantCountry,
		WhoisServer: server, WhoisRaw: p.Raw, NotFound: p.NotFound}
}

// view renders a stored record as the API answer.
func view(rec whoisstore.Record, cached, stale bool) *Result {
	d := Data{Domain: rec.Domain, TLD: rec.TLD, Registered: !rec.NotFound, QueriedAt: rec.QueriedAt.UTC().Format(time.RFC3339), RDAP: json.RawMessage("null")}
	if rec.RDAPJSON != "" {
		d.RDAP = json.RawMessage(rec.RDAPJSON)
	}
	if rec.WhoisRaw != "" {
		w := &WhoisView{Source: rec.WhoisServer, Registrar: rec.Registrar, IANAID: rec.RegistrarIANAID, Status: nonNil(rec.Status),
			CreatedAt: timeText(rec.CreatedAt), UpdatedAt: timeText(rec.UpdatedAt), ExpiresAt: timeText(rec.ExpiresAt),
			Nameservers: nonNil(rec.NameServers), DNSSEC: rec.DNSSEC, Raw: rec.WhoisRaw}
		if rec.RegistrantOrg != "" || rec.RegistrantEmail != "" || rec.RegistrantCountry != "" {
			w.Registrant = &Contact{Org: rec.RegistrantOrg, Email: rec.RegistrantEmail, Country: rec.RegistrantCountry}
		}
		d.WHOIS = w
	}
	return &Result{Domain: rec.Domain, Cached: cached, Stale: stale, WhoisData: d}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// SearchResult is /oem/whois/search's answer.
type SearchResult struct {
	Filters      map[string]any `json:"filters"`
	TotalResults int            `json:"total_results"`
	Results      []Data         `json:"results"`
}

// Search runs f over every stored record.
func (s *Service) Search(ctx context.Context, f whoisstore.Filter) ([]Data, int, error) {
	recs, total, err := s.Store.Search(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Data, 0, len(recs))
	for _, r := range recs {
		out = append(out, view(r, true, false).WhoisData)
	}
	return out, total, nil
}
