// Package domaincollection answers FullHunt's Nexus domain collection from
// the host index: what a domain's web pages say of the site (the title,
// and the site name, description, logo and social-network links the httpx
// ingest keeps from a page's HTML), and a text search of sites by name.
package domaincollection

import (
	"context"
	"strings"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/scan"
)

// Hosts is the host index (*hoststore.Store).
type Hosts interface {
	Host(ctx context.Context, name string) (host.Host, error)
	SearchHosts(ctx context.Context, q hoststore.HostQuery) (hoststore.HostPage, error)
}

// Service reads the domain collection.
type Service struct {
	Hosts Hosts
}

// Site is what a domain's page says of it.
type Site struct {
	Domain      string
	Host        string // the host whose page it is
	CompanyName string
	// CompanyNameSource says where the name came from: the page's site
	// name, or the subject organization of the host's certificate.
	CompanyNameSource string
	Title             string
	Description       string
	LogoURL           string
	Social            []string
}

// Lookup returns the site of a registrable domain: the page of the domain
// itself or of www under it, whichever says more; not found when neither
// host has a page the index knows.
func (s *Service) Lookup(ctx context.Context, domain string) (Site, error) {
	best, score := Site{}, 0
	for _, name := range []string{domain, "www." + domain} {
		h, err := s.Hosts.Host(ctx, name)
		if periscope.ErrorCode(err) == periscope.ENotFound {
			continue
		}
		if err != nil {
			return Site{}, err
		}
		site := siteOf(domain, h)
		if n := site.facts(); n > score {
			best, score = site, n
		}
	}
	if score == 0 {
		return Site{}, periscope.Errorf(periscope.ENotFound, "No page of %s is in the host index.", domain)
	}
	return best, nil
}

func siteOf(domain string, h host.Host) Site {
	get := func(kind string) string {
		if v := h.Extracted[kind]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	st := Site{Domain: domain, Host: h.Host, Title: h.HTTPTitle, Description: get(scan.ExtractDescription),
		LogoURL: get(scan.ExtractLogo), Social: append([]string{}, h.Extracted[scan.ExtractSocial]...)}
	switch {
	case get(scan.ExtractSiteName) != "":
		st.CompanyName, st.CompanyNameSource = get(scan.ExtractSiteName), "page_site_name"
	case h.Cert.SubjectOrg != "":
		st.CompanyName, st.CompanyNameSource = h.Cert.SubjectOrg, "certificate_subject"
	}
	return st
}

// facts counts what the site says.
func (s Site) facts() int {
	n := len(s.Social)
	for _, v := range []string{s.Title, s.Description, s.LogoURL, s.CompanyName} {
		if v != "" {
			n++
		}
	}
	return n
}

// Company is a search result: a site's name and domain.
type Company struct {
	CompanyName string
	Domain      string
	Host        string
}

// Companies returns up to limit sites whose page title contains query
// (any case), one per domain.
func (s *Service) Companies(ctx context.Context, query string, limit int) ([]Company, error) {
	page, err := s.Hosts.SearchHosts(ctx, hoststore.HostQuery{TitleContains: query, Limit: limit * 10})
	if err != nil {
		return nil, err
	}
	out := []Company{}
	for _, h := range page.Hosts {
		if len(out) == limit {
			break
		}
		if h.Domain == "" || containsDomain(out, h.Domain) {
			continue
		}
		name := siteOf(h.Domain, h).CompanyName
		if name == "" {
			name = strings.TrimSpace(h.HTTPTitle)
		}
		out = append(out, Company{CompanyName: name, Domain: h.Domain, Host: h.Host})
	}
	return out, nil
}

func containsDomain(cs []Company, d string) bool {
	for _, c := range cs {
		if c.Domain == d {
			return true
		}
	}
	return false
}
