package api

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/whoislookup"
	"github.com/periscope-oss/periscope/internal/whoisstore"
)

// WhoisService is the lookup behind /oem/whois/* (internal/whoislookup).
type WhoisService interface {
	Lookup(ctx context.Context, domain, tld string, noCache bool) (*whoislookup.Result, error)
	Search(ctx context.Context, f whoisstore.Filter) ([]whoislookup.Data, int, error)
}

const (
	whoisMaxText      = 256
	whoisDefaultLimit = 100
	whoisMaxLimit     = 1000
)

var errWhoisOff = periscope.Errorf(periscope.EUnavailable, "WHOIS lookups are not configured on this server.")

type whoisLookupBody struct {
	Domain  *string `json:"domain"`
	NoCache bool    `json:"no_cache"`
}

// handleWhoisLookup answers POST /oem/whois/lookup: RDAP first, port 43
// where the TLD has no RDAP, from the cache while fresh.
func (s *Server) handleWhoisLookup(w http.ResponseWriter, r *http.Request) error {
	if s.whois == nil {
		return errWhoisOff
	}
	var b whoisLookupBody
	if err := decode(r, &b); err != nil {
		return err
	}
	if b.Domain == nil || strings.TrimSpace(*b.Domain) == "" {
		return periscope.Errorf(periscope.EMissing, "domain is required.")
	}
	domain, tld, err := whoisDomain(*b.Domain)
	if err != nil {
		return err
	}
	// A lookup may query a registry: the credit first, so a request the
	// account cannot pay for queries nothing.
	if err := s.chargeBefore(w, r); err != nil {
		return err
	}
	res, err := s.whois.Lookup(r.Context(), domain, tld, b.NoCache)
	var un *whoislookup.UnavailableError
	if errors.As(err, &un) {
		s.logWarn(r, "whois upstream unavailable", "err", err.Error())
		after := int(math.Ceil(un.RetryAfter.Seconds()))
		return &retryError{err: periscope.Errorf(periscope.EUnavailable, "The registry could not be reached and no earlier answer is stored; retry later."), after: after}
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// whoisDomain validates and normalises a lookup's domain.
func whoisDomain(v string) (domain, tld string, err error) {
	if err := checkText("domain", v, whoisMaxText); err != nil {
		return "", "", err
	}
	v = strings.TrimSpace(v)
	if _, err := netip.ParseAddr(strings.Trim(v, "[]")); err == nil {
		return "", "", periscope.Errorf(periscope.EInvalid, "domain: %q is an IP address; WHOIS lookups take a registered domain name.", periscope.Clip(v, 64))
	}
	if strings.Contains(v, "://") || strings.ContainsAny(v, "/?#") {
		return "", "", periscope.Errorf(periscope.EInvalid, "domain: %q is a URL; send the bare domain name.", periscope.Clip(v, 64))
	}
	return whoislookup.Normalize(v)
}

type whoisSearchBody struct {
	Registrar     string `json:"registrar"`
	IANAID        string `json:"registrar_iana_id"`
	Nameserver    string `json:"nameserver"`
	TLD           string `json:"tld"`
	Status        string `json:"status"`
	RegistrantOrg string `json:"registrant_org"`
	Email         string `json:"registrant_email"`
	Country       string `json:"registrant_country"`
	ExpiresBefore string `json:"expires_before"`
	Limit         *int   `json:"limit"`
}

type whoisSearchResponse struct {
	Filters      map[string]any     `json:"filters"`
	TotalResults int                `json:"total_results"`
	Results      []whoislookup.Data `json:"results"`
}

// handleWhoisSearch answers POST /oem/whois/search over every record looked
// up or ingested (filters ANDed).
func (s *Server) handleWhoisSearch(w http.ResponseWriter, r *http.Request) error {
	if s.whois == nil {
		return errWhoisOff
	}
	var b whoisSearchBody
	if err := decode(r, &b); err != nil {
		return err
	}
	f, echo, err := whoisFilter(b)
	if err != nil {
		return err
	}
	results, total, err := s.whois.Search(r.Context(), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, whoisSearchResponse{Filters: echo, TotalResults: total, Results: results})
	return nil
}

// whoisFilter checks the search body and returns the filter and its echo.
func whoisFilter(b whoisSearchBody) (whoisstore.Filter, map[string]any, error) {
	echo := map[string]any{}
	f := whoisstore.Filter{Limit: whoisDefaultLimit}
	for _, fld := range []struct {
		name string
		v    string
		dst  *string
	}{{"registrar", b.Registrar, &f.Registrar}, {"registrar_iana_id", b.IANAID, &f.IANAID},
		{"nameserver", b.Nameserver, &f.NameServer}, {"tld", b.TLD, &f.TLD}, {"status", b.Status, &f.Status},
		{"registrant_org", b.RegistrantOrg, &f.RegistrantOrg}, {"registrant_email", b.Email, &f.Email},
		{"registrant_country", b.Country, &f.Country}} {
		v := strings.TrimSpace(fld.v)
		if v == "" {
			continue
		}
		if err := checkText(fld.name, v, whoisMaxText); err != nil {
			return f, nil, err
		}
		*fld.dst = v
		echo[fld.name] = v
	}
	f.TLD = strings.TrimPrefix(strings.ToLower(f.TLD), ".")
	if b.ExpiresBefore != "" {
		t, err := time.Parse("2006-01-02", b.ExpiresBefore)
		if err != nil {
			if t, err = time.Parse(time.RFC3339, b.ExpiresBefore); err != nil {
				return f, nil, periscope.Errorf(periscope.EInvalid, "expires_before must be a date, YYYY-MM-DD.")
			}
		}
		f.ExpiresBefore = t
		echo["expires_before"] = b.ExpiresBefore
	}
	if b.Limit != nil {
		if *b.Limit < 1 || *b.Limit > whoisMaxLimit {
			return f, nil, periscope.Errorf(periscope.EInvalid, "limit must be between 1 and %d.", whoisMaxLimit)
		}
		f.Limit = *b.Limit
	}
	echo["limit"] = f.Limit
	return f, echo, nil
}
