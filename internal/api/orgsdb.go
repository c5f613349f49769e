package api

import (
	"context"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/periscope-oss/periscope/internal/asset"
	"github.com/periscope-oss/periscope/internal/orgprofile"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// FullHunt's organizations database (GET /organizations-db/search, POST
// /oem/organizations/search), answered with profiles built from what we
// hold (orgprofile): WHOIS registrants, certificate subjects and ASN
// organizations, the domains and hosts under them, and dark-web record
// counts, each field with its sources. Subsidiaries and stock data are not
// held: they are always empty.

// OrgProfiles builds organization profiles (*orgprofile.Service).
type OrgProfiles interface {
	Search(ctx context.Context, typ, query string, limit int) ([]orgprofile.Profile, error)
	DomainSuggester
}

// orgProfilesMax caps the profiles of one answer.
const orgProfilesMax = 25

type orgDomainJSON struct {
	Domain        string   `json:"domain"`
	Sources       []string `json:"sources"`
	Hosts         int      `json:"hosts"`
	BreachRecords int      `json:"breach_records"`
}

type orgASNJSON struct {
	ASN          int    `json:"asn"`
	Organization string `json:"organization"`
}

type orgProfileJSON struct {
	Domain        string              `json:"domain"`
	CompanyName   string              `json:"company_name"`
	OtherNames    []string            `json:"other_names"`
	Subsidiaries  []struct{}          `json:"subsidiaries"`
	StockInfo     map[string]string   `json:"stock_info"`
	OtherDomains  []string            `json:"other_domains"`
	Domains       []orgDomainJSON     `json:"domains"`
	ASNs          []orgASNJSON        `json:"asns"`
	HostsCount    int                 `json:"hosts_count"`
	BreachRecords int                 `json:"breach_records"`
	Sources       map[string][]string `json:"sources"`
}

func orgProfilesJSON(ps []orgprofile.Profile) []orgProfileJSON {
	out := make([]orgProfileJSON, len(ps))
	for i, p := range ps {
		j := orgProfileJSON{CompanyName: p.Name, OtherNames: p.OtherNames, Subsidiaries: []struct{}{},
			StockInfo: map[string]string{"stock_symbol": "", "exchange": ""}, OtherDomains: []string{},
			Domains: make([]orgDomainJSON, len(p.Domains)), ASNs: make([]orgASNJSON, len(p.ASNs)),
			HostsCount: p.Hosts, BreachRecords: p.BreachRecords, Sources: p.Sources}
		for k, d := range p.Domains {
			j.Domains[k] = orgDomainJSON{Domain: d.Domain, Sources: d.Sources, Hosts: d.Hosts, BreachRecords: d.BreachRecords}
			if k == 0 {
				j.Domain = d.Domain
			} else {
				j.OtherDomains = append(j.OtherDomains, d.Domain)
			}
		}
		for k, a := range p.ASNs {
			j.ASNs[k] = orgASNJSON{ASN: a.ASN, Organization: a.Organization}
		}
		out[i] = j
	}
	return out
}

// orgQuery checks a query (3 to 100 characters) and its type: domain or
// organization, inferred from the query when typ is "".
func orgQuery(query, typ string) (string, string, error) {
	query = strings.TrimSpace(query)
	if query == "" {
		return "", "", periscope.Errorf(periscope.EMissing, "Missing required parameter: query")
	}
	if err := checkText("query", query, 100); err != nil {
		return "", "", err
	}
	if n := utf8.RuneCountInString(query); n < 3 {
		return "", "", periscope.Errorf(periscope.EInvalid, "query must be 3 to 100 characters (got %d).", n)
	}
	if typ == "" {
		typ = "organization"
		if strings.Contains(query, ".") && !strings.Contains(query, " ") {
			if _, err := asset.Domain(query); err == nil {
				typ = "domain"
			}
		}
	}
	switch typ {
	case "organization":
		return typ, query, nil
	case "domain":
		d, err := asset.Domain(query)
		if err != nil {
			return "", "", err
		}
		return typ, d, nil
	}
	return "", "", periscope.Errorf(periscope.EInvalid, "type must be domain or organization (got %q).", periscope.Clip(typ, 32))
}

// handleOrganizationsDB answers GET /organizations-db/search?query=: a
// domain or an organization's name (inferred).
func (s *Server) handleOrganizationsDB(w http.ResponseWriter, r *http.Request) error {
	typ, q, err := orgQuery(r.URL.Query().Get("query"), "")
	if err != nil {
		return err
	}
	ps, err := s.orgProfiles.Search(r.Context(), typ, q, orgProfilesMax)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"response": orgProfilesJSON(ps)})
	return nil
}

// handleOEMOrganizations answers POST /oem/organizations/search {type,
// query}: type (domain or organization) is required, as FullHunt's.
func (s *Server) handleOEMOrganizations(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Type  *string `json:"type"`
		Query string  `json:"query"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	if in.Type == nil || *in.Type == "" {
		return periscope.Errorf(periscope.EMissing, "type is required: domain or organization.")
	}
	typ, q, err := orgQuery(in.Query, *in.Type)
	if err != nil {
		return err
	}
	ps, err := s.orgProfiles.Search(r.Context(), typ, q, orgProfilesMax)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"response": orgProfilesJSON(ps)})
	return nil
}
