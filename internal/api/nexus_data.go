package api

import (
	"context"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/asset"
	"github.com/periscope-oss/periscope/internal/domaincollection"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/torstore"
)

// FullHunt's Nexus lookups over data we keep: the Tor Project's exit list
// (ingested or synced) and the stored WHOIS records. Failures are real
// statuses (422 bad input), never charged.

// TorExits is the stored Tor exit list (*torstore.Store).
type TorExits interface {
	Exit(ctx context.Context, ip netip.Addr) (torstore.Exit, error)
	Loaded(ctx context.Context) (time.Time, error)
}

type torCheckData struct {
	IPAddress   string `json:"ip_address"`
	FirstSeen   int64  `json:"first_seen"`
	LastSeen    int64  `json:"last_seen"`
	Fingerprint string `json:"fingerprint"`
}

// handleTorCheckIP answers GET /nexus/tor/check-ip?ip=: whether the Tor
// Project's lists ever named the address as an exit ({status, error,
// data{ip_address, first_seen}, count}, count 1 when they did).
// list_loaded says when a list was last loaded (0: never, so every answer
// is count 0).
func (s *Server) handleTorCheckIP(w http.ResponseWriter, r *http.Request) error {
	v := strings.TrimSpace(r.URL.Query().Get("ip"))
	if v == "" {
		return periscope.Errorf(periscope.EUnprocessable, "ip is required: an IPv4 or IPv6 address.")
	}
	ip, err := netip.ParseAddr(v)
	if err != nil || ip.Zone() != "" {
		return periscope.Errorf(periscope.EUnprocessable, "ip must be an IPv4 or IPv6 address (got %q).", periscope.Clip(v, 64))
	}
	if s.tor == nil {
		return periscope.Errorf(periscope.EUnavailable, "The Tor exit list is not served by this server.")
	}
	loaded, err := s.tor.Loaded(r.Context())
	if err != nil {
		return err
	}
	data, count := torCheckData{IPAddress: ip.Unmap().String()}, 0
	e, err := s.tor.Exit(r.Context(), ip)
	switch {
	case err == nil:
		data.FirstSeen, data.LastSeen, data.Fingerprint, count = e.FirstSeen, e.LastSeen, e.Fingerprint, 1
	case periscope.ErrorCode(err) != periscope.ENotFound:
		return err
	}
	listLoaded := int64(0)
	if !loaded.IsZero() {
		listLoaded = loaded.Unix()
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": http.StatusOK, "error": "", "data": data, "count": count, "list_loaded": listLoaded})
	return nil
}

// handleNexusWhoisLookup answers GET /nexus/whois/lookup?domain=: the
// stored WHOIS record of the registered domain, whois_data null when none
// is stored yet. Nothing is asked of a registry (/oem/whois/lookup does).
func (s *Server) handleNexusWhoisLookup(w http.ResponseWriter, r *http.Request) error {
	v := strings.TrimSpace(r.URL.Query().Get("domain"))
	if v == "" {
		return periscope.Errorf(periscope.EUnprocessable, "domain is required.")
	}
	domain, _, err := whoisDomain(v)
	if err != nil {
		return unprocessable(err)
	}
	if s.whoisRec == nil {
		return errWhoisOff
	}
	data, err := s.whoisRec.StoredWhois(r.Context(), domain)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"domain": domain, "whois_data": data})
	return nil
}

// nexusWhoisMaxLimit is FullHunt's cap on the Nexus WHOIS search.
const nexusWhoisMaxLimit = 10

// handleNexusWhoisSearch answers GET /nexus/whois/search: the stored
// records matching registrar, nameserver, status or expires_before (any of
// them: Nexus ORs them) and tld (ANDed); 422 without a filter.
func (s *Server) handleNexusWhoisSearch(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	b := whoisSearchBody{Registrar: q.Get("registrar"), Nameserver: q.Get("nameserver"), TLD: q.Get("tld"),
		Status: q.Get("status"), ExpiresBefore: strings.TrimSpace(q.Get("expires_before"))}
	limit, err := queryInt(r, "limit", nexusWhoisMaxLimit, 1, nexusWhoisMaxLimit)
	if err != nil {
		return unprocessable(err)
	}
	b.Limit = &limit
	f, echo, err := whoisFilter(b)
	if err != nil {
		return unprocessable(err)
	}
	if f.Registrar == "" && f.NameServer == "" && f.TLD == "" && f.Status == "" && f.ExpiresBefore.IsZero() {
		return periscope.Errorf(periscope.EUnprocessable, "Give at least one filter: registrar, nameserver, tld, status or expires_before.")
	}
	f.Any = true
	if s.whoisRec == nil {
		return errWhoisOff
	}
	results, total, err := s.whoisRec.Search(r.Context(), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, whoisSearchResponse{Filters: echo, TotalResults: total, Results: results})
	return nil
}

// DomainCollection is the Nexus domain collection (*domaincollection.Service).
type DomainCollection interface {
	Lookup(ctx context.Context, domain string) (domaincollection.Site, error)
	Companies(ctx context.Context, query string, limit int) ([]domaincollection.Company, error)
}

// socialKeys maps a social network's host to its *_urls field.
var socialKeys = map[string]string{"twitter.com": "twitter_urls", "x.com": "twitter_urls", "linkedin.com": "linkedin_urls",
	"facebook.com": "facebook_urls", "github.com": "github_urls", "instagram.com": "instagram_urls", "youtube.com": "youtube_urls",
	"mastodon.social": "mastodon_urls"}

// handleDomainCollectionLookup answers GET
// /nexus/domain-collection/lookup?domain=: what the domain's page says of
// the site, from the host index (the httpx ingest keeps it); 404 when no
// page of the domain is indexed.
func (s *Server) handleDomainCollectionLookup(w http.ResponseWriter, r *http.Request) error {
	v := strings.TrimSpace(r.URL.Query().Get("domain"))
	if v == "" {
		return periscope.Errorf(periscope.EUnprocessable, "domain is required.")
	}
	d, err := asset.Domain(v)
	if err != nil {
		return unprocessable(err)
	}
	site, err := s.domains.Lookup(r.Context(), d)
	if err != nil {
		return err
	}
	data := map[string]any{"company_name": site.CompanyName, "description": site.Description, "title": site.Title,
		"meta_logo_url": site.LogoURL, "domain": site.Domain, "host": site.Host, "company_name_source": site.CompanyNameSource}
	for _, k := range socialKeys {
		data[k] = []string{}
	}
	for _, u := range site.Social {
		if pu, err := url.Parse(u); err == nil {
			if k := socialKeys[strings.TrimPrefix(strings.ToLower(pu.Hostname()), "www.")]; k != "" {
				data[k] = append(data[k].([]string), u)
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": http.StatusOK, "data": data})
	return nil
}

// companyLookupMax is FullHunt's ten results.
const companyLookupMax = 10

// handleCompanyLookup answers GET
// /nexus/domain-collection/company-lookup?query=: sites whose page title
// contains the query (3 to 100 characters), one per domain.
func (s *Server) handleCompanyLookup(w http.ResponseWriter, r *http.Request) error {
	q := strings.TrimSpace(r.URL.Query().Get("query"))
	if q == "" {
		return periscope.Errorf(periscope.EUnprocessable, "query is required.")
	}
	if err := checkText("query", q, 100); err != nil {
		return unprocessable(err)
	}
	if len([]rune(q)) < 3 {
		return periscope.Errorf(periscope.EUnprocessable, "query must be at least 3 characters.")
	}
	cs, err := s.domains.Companies(r.Context(), q, companyLookupMax)
	if err != nil {
		return err
	}
	data := make([]map[string]string, len(cs))
	for i, c := range cs {
		data[i] = map[string]string{"company_name": c.CompanyName, "domain": c.Domain, "host": c.Host}
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": http.StatusOK, "data": data})
	return nil
}
