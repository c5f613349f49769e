package api

import (
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/periscope-oss/periscope/internal/asset"
	"github.com/periscope-oss/periscope/internal/periscope"
)

type orgJSON struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	IsDefault   bool   `json:"is_default"`
	CreatedAt   int64  `json:"created_at"`
}

func toOrgJSON(o periscope.Organization) orgJSON {
	return orgJSON{ID: o.ID, Name: o.Name, Description: o.Description, IsDefault: o.IsDefault, CreatedAt: o.CreatedAt.Unix()}
}

// handleCreateOrganization answers POST /enterprise/organizations.
func (s *Server) handleCreateOrganization(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Name        *string `json:"name"`
		Description string  `json:"description"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
		return periscope.Errorf(periscope.EMissing, "name is required.")
	}
	name := strings.TrimSpace(*in.Name)
	if utf8.RuneCountInString(name) > 200 || utf8.RuneCountInString(in.Description) > 2000 {
		return periscope.Errorf(periscope.EInvalid, "name must be at most 200 characters and description at most 2000.")
	}
	// A name is one line of text; a description may have line breaks and
	// tabs, but no other control character (NUL is refused for every
	// request before this: PostgreSQL cannot store it).
	if strings.ContainsFunc(name, unicode.IsControl) {
		return periscope.Errorf(periscope.EInvalid, "name must not contain control characters.")
	}
	if strings.ContainsFunc(in.Description, func(c rune) bool { return unicode.IsControl(c) && c != '\n' && c != '\r' && c != '\t' }) {
		return periscope.Errorf(periscope.EInvalid, "description must not contain control characters other than line breaks and tabs.")
	}
	o := periscope.Organization{AccountID: principalOf(r).Account.ID, Name: name, Description: in.Description}
	if err := s.orgs.CreateOrganization(r.Context(), &o); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, toOrgJSON(o))
	return nil
}

// handleGetOrganization answers GET /enterprise/organizations/{org_id}: the
// organization with its assets.
func (s *Server) handleGetOrganization(w http.ResponseWriter, r *http.Request) error {
	acct := principalOf(r).Account.ID
	o, err := s.orgs.Organization(r.Context(), acct, r.PathValue("org_id"))
	if err != nil {
		return err
	}
	assets, err := s.orgs.Assets(r.Context(), acct, o.ID)
	if err != nil {
		return err
	}
	domains, ranges := []string{}, []string{}
	for _, a := range assets {
		if a.Kind == periscope.AssetDomain {
			domains = append(domains, a.Value)
		} else {
			ranges = append(ranges, a.Value)
		}
	}
	out := orgDetailJSON{orgJSON: toOrgJSON(o), Domains: domains, IPRanges: ranges}
	if err := s.addVerification(r.Context(), &out); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

type orgDetailJSON struct {
	orgJSON
	Domains  []string `json:"domains"`
	IPRanges []string `json:"ip_ranges"`
	// Set when active monitoring is on (scans.go).
	VerificationToken string           `json:"verification_token,omitempty"`
	Assets            []assetStateJSON `json:"assets,omitempty"`
}

// handleDeleteOrganization answers DELETE /enterprise/organizations/{org_id}.
func (s *Server) handleDeleteOrganization(w http.ResponseWriter, r *http.Request) error {
	if err := s.orgs.DeleteOrganization(r.Context(), principalOf(r).Account.ID, r.PathValue("org_id")); err != nil {
		return err
	}
	s.assetsChanged()
	writeJSON(w, http.StatusOK, map[string]string{"status": "success"})
	return nil
}

type assetResponse struct {
	Status string `json:"status"`
	Asset  string `json:"asset"`
	Type   string `json:"type"`
	// AlertBaseline says, where an asset is added, how long its first
	// data stays silent (Periscope's addition; absent when alerts are off).
	AlertBaseline *alertBaselineJSON `json:"alert_baseline,omitempty"`
}

// alertBaselineJSON is the alert baseline of a newly added asset.
type alertBaselineJSON struct {
	Seconds int64  `json:"seconds"`
	Message string `json:"message"`
}

// alertBaseline describes the baseline of an added asset, nil when alerts
// are off.
func (s *Server) alertBaseline() *alertBaselineJSON {
	b := s.cfg.AlertBaseline
	if b <= 0 {
		return nil
	}
	return &alertBaselineJSON{Seconds: int64(b / time.Second),
		Message: fmt.Sprintf("Changes in the first %s after this asset's first data are its baseline: stored, not alerted. Alerts start after that.", humanDuration(b))}
}

// humanDuration writes d as "1 hour", "30 minutes", "90 seconds".
func humanDuration(d time.Duration) string {
	unit := func(n int64, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %ss", n, one)
	}
	switch {
	case d%time.Hour == 0:
		return unit(int64(d/time.Hour), "hour")
	case d%time.Minute == 0:
		return unit(int64(d/time.Minute), "minute")
	}
	return unit(int64(d/time.Second), "second")
}

// assetFromRequest reads and normalises the domain or ip_range of the body.
func (s *Server) assetFromRequest(r *http.Request, kind string) (periscope.Asset, error) {
	var in struct {
		Domain  string `json:"domain"`
		IPRange string `json:"ip_range"`
	}
	a := periscope.Asset{OrganizationID: r.PathValue("org_id"), AccountID: principalOf(r).Account.ID, Kind: kind}
	if err := decode(r, &in); err != nil {
		return a, err
	}
	// Resolve the organization first: an unknown or foreign org is a 404
	// whatever the body holds.
	if _, err := s.orgs.Organization(r.Context(), a.AccountID, a.OrganizationID); err != nil {
		return a, err
	}
	if kind == periscope.AssetDomain {
		d, err := asset.Domain(in.Domain)
		a.Value = d
		return a, err
	}
	p, err := asset.IPRange(in.IPRange, s.cfg.RangeLimits)
	if err == nil {
		a.Value = p.String()
	}
	return a, err
}

// handleAddDomain answers POST /enterprise/organizations/{org_id}/domains.
func (s *Server) handleAddDomain(w http.ResponseWriter, r *http.Request) error {
	return s.addAsset(w, r, periscope.AssetDomain)
}

// handleRemoveDomain answers DELETE /enterprise/organizations/{org_id}/domains.
func (s *Server) handleRemoveDomain(w http.ResponseWriter, r *http.Request) error {
	return s.removeAsset(w, r, periscope.AssetDomain)
}

// handleAddIPRange answers POST /enterprise/organizations/{org_id}/ip-ranges.
func (s *Server) handleAddIPRange(w http.ResponseWriter, r *http.Request) error {
	return s.addAsset(w, r, periscope.AssetIPRange)
}

// handleRemoveIPRange answers DELETE /enterprise/organizations/{org_id}/ip-ranges.
func (s *Server) handleRemoveIPRange(w http.ResponseWriter, r *http.Request) error {
	return s.removeAsset(w, r, periscope.AssetIPRange)
}

// addAsset adds a domain or IP range to one of the caller's organizations:
// 201 when new, 200 when it was already there.
func (s *Server) addAsset(w http.ResponseWriter, r *http.Request, kind string) error {
	a, err := s.assetFromRequest(r, kind)
	if err != nil {
		return err
	}
	created, err := s.orgs.AddAsset(r.Context(), a)
	if err != nil {
		return err
	}
	if created && kind == periscope.AssetDomain { // the brand watcher watches domains only
		s.assetsChanged()
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, assetResponse{Status: "success", Asset: a.Value, Type: kind, AlertBaseline: s.alertBaseline()})
	return nil
}

// removeAsset removes a domain or IP range from one of the caller's
// organizations.
func (s *Server) removeAsset(w http.ResponseWriter, r *http.Request, kind string) error {
	a, err := s.assetFromRequest(r, kind)
	if err != nil {
		return err
	}
	if err := s.orgs.RemoveAsset(r.Context(), a); err != nil {
		return err
	}
	if kind == periscope.AssetDomain {
		s.assetsChanged()
	}
	writeJSON(w, http.StatusOK, assetResponse{Status: "success", Asset: a.Value, Type: kind})
	return nil
}

// assetsChanged tells the collaborators watching organizations' assets.
func (s *Server) assetsChanged() {
	if s.changed != nil {
		s.changed()
	}
}
