package alerts

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/vulnstore"
)

// Finding is one vulnerability on one host of an organization: a row of
// the evidence of a new_vulnerability alert (a KEV-listed or critical CVE
// whose CPE names a product seen on the host), with the CVE's record.
type Finding struct {
	CVE            string
	Title          string
	Description    string
	Severity       string // the CVE's (critical, high, medium, low, none)
	CVSS           float64
	KEV            bool
	KEVDateAdded   int64
	EPSS           float64
	RequiredAction string // CISA's, for KEV-listed CVEs
	Host           string
	Domain         string
	Product        string
	Version        string
	CPE            string
	VersionCheck   string // listed, not_checked or unknown
	Asset          string // the organization's asset the host is under
	OrganizationID string
	AlertID        string
	State          string // the alert's: open, acknowledged, resolved, suppressed
	FirstSeen      int64
	LastSeen       int64
}

// FindingQuery selects the findings of an account: of one organization,
// and of one host, the hosts of a registrable domain, or the hosts whose
// address is in a block (at most one of Host, Domain and Range).
type FindingQuery struct {
	AccountID      string
	OrganizationID string // "" = every organization of the account
	Host           string
	Domain         string
	Range          netip.Prefix // zero = any
	// HostAddress resolves a host's address for Range (the host index);
	// required with Range.
	HostAddress func(ctx context.Context, names []string) (map[string]host.Host, error)
	Limit       int
}

// maxFindingAlerts bounds the alerts read for one answer.
const maxFindingAlerts = 100000

// VulnFindings returns the account's vulnerability findings, most
// recently seen first, at most q.Limit, and how many match.
func (s *Service) VulnFindings(ctx context.Context, q FindingQuery) ([]Finding, int, error) {
	als, err := s.Alerts(ctx, alertstore.AlertQuery{AccountID: q.AccountID, OrganizationID: q.OrganizationID,
		Type: TypeNewVulnerability, Limit: maxFindingAlerts})
	if err != nil {
		return nil, 0, err
	}
	all := []Finding{}
	for _, al := range als {
		all = append(all, findingsOf(al)...)
	}
	if all, err = filterFindings(ctx, q, all); err != nil {
		return nil, 0, err
	}
	total := len(all)
	if q.Limit > 0 && len(all) > q.Limit {
		all = all[:q.Limit]
	}
	if err := s.describe(ctx, all); err != nil {
		return nil, 0, err
	}
	return all, total, nil
}

// findingsOf expands an alert's evidence into one finding per host.
func findingsOf(al alertstore.Alert) []Finding {
	var ev struct {
		CVE          string     `json:"vulnerability"`
		Title        string     `json:"title"`
		CVSS         float64    `json:"cvss"`
		KEV          bool       `json:"kev"`
		KEVDateAdded int64      `json:"kev_date_added"`
		Asset        string     `json:"asset"`
		Hosts        []VulnHost `json:"hosts"`
	}
	if json.Unmarshal(al.Evidence, &ev) != nil || ev.CVE == "" {
		return nil
	}
	out := make([]Finding, 0, len(ev.Hosts))
	for _, h := range ev.Hosts {
		f := Finding{CVE: ev.CVE, Title: ev.Title, CVSS: ev.CVSS, KEV: ev.KEV, KEVDateAdded: ev.KEVDateAdded,
			Host: h.Host, Product: h.Product, Version: h.Version, CPE: h.CPE, VersionCheck: h.Check, Asset: ev.Asset,
			OrganizationID: al.OrganizationID, AlertID: al.ID, State: al.State, FirstSeen: al.FirstSeen, LastSeen: al.LastSeen}
		if n, err := host.Normalize(h.Host); err == nil {
			f.Domain = n.Domain
		}
		out = append(out, f)
	}
	return out
}

func filterFindings(ctx context.Context, q FindingQuery, fs []Finding) ([]Finding, error) {
	switch {
	case q.Host != "":
		return slices.DeleteFunc(fs, func(f Finding) bool { return f.Host != q.Host }), nil
	case q.Domain != "":
		return slices.DeleteFunc(fs, func(f Finding) bool { return f.Domain != q.Domain }), nil
	case q.Range.IsValid():
		var names []string
		for _, f := range fs {
			names = append(names, f.Host)
		}
		slices.Sort(names)
		hs, err := q.HostAddress(ctx, slices.Compact(names))
		if err != nil {
			return nil, err
		}
		return slices.DeleteFunc(fs, func(f Finding) bool {
			a, err := netip.ParseAddr(f.Host)
			if err != nil {
				a, err = netip.ParseAddr(hs[f.Host].IPAddress)
			}
			return err != nil || !q.Range.Contains(a.Unmap())
		}), nil
	}
	return fs, nil
}

// describe fills in each finding's CVE record: description, severity,
// EPSS and CISA's required action.
func (s *Service) describe(ctx context.Context, fs []Finding) error {
	vs := vulnstore.New(s.DB)
	seen := map[string]int{} // CVE → index of the first finding describing it
	for i := range fs {
		f := &fs[i]
		if j, ok := seen[f.CVE]; ok {
			o := fs[j]
			f.Description, f.Severity, f.EPSS, f.RequiredAction = o.Description, o.Severity, o.EPSS, o.RequiredAction
			continue
		}
		seen[f.CVE] = i
		recs, err := vs.SearchVulns(ctx, vulnstore.VulnSearch{Query: f.CVE, Limit: 1})
		if err != nil {
			return fmt.Errorf("describe %s: %w", f.CVE, err)
		}
		if len(recs) == 1 && recs[0].CVEID == f.CVE {
			v := recs[0]
			f.Description, f.Severity, f.EPSS, f.RequiredAction = v.Description, v.Severity, v.EPSSScore, v.CISARequiredAction
		}
		if f.Severity == "" {
			f.Severity = severityOf(f.CVSS)
		}
	}
	return nil
}

// severityOf is the CVSS v3 rating of a score.
func severityOf(score float64) string {
	switch {
	case score >= 9:
		return "critical"
	case score >= 7:
		return "high"
	case score >= 4:
		return "medium"
	case score > 0:
		return "low"
	}
	return "none"
}

// Impact says what a finding means, from its record.
func (f Finding) Impact() string {
	var parts []string
	if f.CVSS > 0 {
		parts = append(parts, fmt.Sprintf("CVSS %.1f (%s)", f.CVSS, f.Severity))
	}
	if f.KEV {
		k := "known exploited: in CISA KEV"
		if f.KEVDateAdded > 0 {
			k += " since " + time.Unix(f.KEVDateAdded, 0).UTC().Format("2006-01-02")
		}
		parts = append(parts, k)
	}
	if f.EPSS > 0 {
		parts = append(parts, fmt.Sprintf("EPSS %.3f", f.EPSS))
	}
	return strings.Join(parts, "; ")
}

// Recommendation is CISA's required action when the CVE is KEV-listed,
// else the advice that follows from the match.
func (f Finding) Recommendation() string {
	if f.RequiredAction != "" {
		return f.RequiredAction
	}
	p := f.Product
	if f.Version != "" {
		p += " " + f.Version
	}
	return fmt.Sprintf("Update %s on %s to a release the vendor's advisory for %s lists as fixed, or take it off the internet.", p, f.Host, f.CVE)
}
