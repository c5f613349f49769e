package api

import (
	"context"
	"net/http"
	"net/netip"
	"strings"

	"github.com/periscope-oss/periscope/internal/alerts"
	"github.com/periscope-oss/periscope/internal/asset"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// FullHunt's platform-discovered vulnerabilities (GET
// /enterprise/vulnerabilities, POST /oem/vulnerabilities/search), answered
// from our vulnerability matching: the evidence of the account's
// new_vulnerability alerts (a KEV-listed or critical CVE whose CPE names a
// product seen on an organization's host), one row per CVE and host, in
// FullHunt's field names plus ours.

// maxVulnFindings caps both answers (FullHunt: enterprise 100,000, OEM
// 10,000).
const (
	maxVulnFindings    = 100000
	maxOEMVulnFindings = 10000
)

type vulnFindingJSON struct {
	VulnerabilityID     string  `json:"vulnerability_id"`
	VulnerabilityType   string  `json:"vulnerability_type"`
	Severity            string  `json:"severity"`
	Status              string  `json:"status"`
	AffectedLocation    string  `json:"affected_location"`
	Description         string  `json:"description"`
	Impact              string  `json:"impact"`
	Recommendation      string  `json:"recommendation"`
	AutomatedValidation string  `json:"automated_vulnerability_validation_status"`
	Title               string  `json:"title"`
	Host                string  `json:"host"`
	Domain              string  `json:"domain"`
	Product             string  `json:"product"`
	Version             string  `json:"version"`
	CPE                 string  `json:"cpe"`
	VersionCheck        string  `json:"version_check"`
	CVSSScore           float64 `json:"cvss_score"`
	IsKEV               bool    `json:"is_kev"`
	EPSSScore           float64 `json:"epss_score"`
	Asset               string  `json:"asset"`
	OrganizationID      string  `json:"organization_id"`
	AlertID             string  `json:"alert_id"`
	FirstSeen           int64   `json:"first_seen"`
	LastSeen            int64   `json:"last_seen"`
}

func vulnFindingsJSON(fs []alerts.Finding) []vulnFindingJSON {
	out := make([]vulnFindingJSON, len(fs))
	for i, f := range fs {
		out[i] = vulnFindingJSON{VulnerabilityID: f.CVE, VulnerabilityType: "cve", Severity: f.Severity, Status: f.State,
			AffectedLocation: f.Host, Description: f.Description, Impact: f.Impact(), Recommendation: f.Recommendation(),
			// Matching reads products and versions; nothing is probed to
			// confirm a finding.
			AutomatedValidation: "not_validated",
			Title:               f.Title, Host: f.Host, Domain: f.Domain, Product: f.Product, Version: f.Version, CPE: f.CPE,
			VersionCheck: f.VersionCheck, CVSSScore: f.CVSS, IsKEV: f.KEV, EPSSScore: f.EPSS, Asset: f.Asset,
			OrganizationID: f.OrganizationID, AlertID: f.AlertID, FirstSeen: f.FirstSeen, LastSeen: f.LastSeen}
	}
	return out
}

// handleEnterpriseVulnerabilities answers GET /enterprise/vulnerabilities:
// FullHunt's bare array, not paged, of one organization's findings (org:
// its id or name) or of every organization of the account.
func (s *Server) handleEnterpriseVulnerabilities(w http.ResponseWriter, r *http.Request) error {
	acct := principalOf(r).Account.ID
	q := alerts.FindingQuery{AccountID: acct, Limit: maxVulnFindings}
	org := strings.TrimSpace(r.URL.Query().Get("org"))
	if org != "" {
		o, err := s.orgByIDOrName(r.Context(), acct, org)
		if err != nil {
			return err
		}
		q.OrganizationID = o.ID
	}
	fs, _, err := s.alerts.VulnFindings(r.Context(), q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, vulnFindingsJSON(fs))
	return nil
}

// handleOEMVulnerabilities answers POST /oem/vulnerabilities/search: the
// caller's findings on a host, a domain's hosts or an IP range's hosts,
// {query{type, value}, total_results, results[]}.
func (s *Server) handleOEMVulnerabilities(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Query *string `json:"query"`
		Type  string  `json:"type"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	switch in.Type {
	case "", "host", "domain", "ip_range":
	default:
		return periscope.Errorf(periscope.EInvalid, "type must be host, domain or ip_range (got %q).", periscope.Clip(in.Type, 32))
	}
	acct := principalOf(r).Account
	q := alerts.FindingQuery{AccountID: acct.ID, Limit: min(max(acct.MaxResultsPerRequest, 1), maxOEMVulnFindings)}
	typ, value := in.Type, ""
	if in.Query != nil && (typ == "ip_range" || typ == "" && looksLikeRange(*in.Query)) {
		p, err := asset.IPRange(strings.TrimSpace(*in.Query), s.cfg.RangeLimits)
		if err != nil {
			return err
		}
		typ, value, q.Range, q.HostAddress = "ip_range", p.String(), p, s.hostsNamed
	} else {
		var err error
		if typ, value, err = hostOrDomain(in.Query, in.Type); err != nil {
			return err
		}
		if typ == "host" {
			q.Host = value
		} else {
			q.Domain = value
		}
	}
	fs, total, err := s.alerts.VulnFindings(r.Context(), q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"query": map[string]string{"type": typ, "value": value},
		"total_results": total, "results": vulnFindingsJSON(fs)})
	return nil
}

// looksLikeRange reports whether a query is a CIDR or a bare IP address.
func looksLikeRange(v string) bool {
	v = strings.TrimSpace(v)
	if _, err := netip.ParsePrefix(v); err == nil {
		return true
	}
	_, err := netip.ParseAddr(v)
	return err == nil
}

// hostsNamed reads the index's record of each name (for their addresses).
func (s *Server) hostsNamed(ctx context.Context, names []string) (map[string]host.Host, error) {
	out := make(map[string]host.Host, len(names))
	for _, n := range names {
		h, err := s.hosts.Host(ctx, n)
		if periscope.ErrorCode(err) == periscope.ENotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[n] = h
	}
	return out, nil
}

// orgByIDOrName finds one of the account's organizations by id or name
// (any case); 404 otherwise, the same for another account's.
func (s *Server) orgByIDOrName(ctx context.Context, accountID, org string) (periscope.Organization, error) {
	if err := checkText("org", org, 256); err != nil {
		return periscope.Organization{}, err
	}
	orgs, err := s.orgs.Organizations(ctx, accountID)
	if err != nil {
		return periscope.Organization{}, err
	}
	for _, o := range orgs {
		if o.ID == org || strings.EqualFold(o.Name, org) {
			return o, nil
		}
	}
	return periscope.Organization{}, periscope.Errorf(periscope.ENotFound, "No organization %q in this account.", periscope.Clip(org, 64))
}
