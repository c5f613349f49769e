package api

import (
	"net/http"
	"strings"
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
	o := periscope.Organization{AccountID: principalOf(r).Account.ID, Name: name, Description: in.Description}
	if err := s.store.CreateOrganization(r.Context(), &o); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, toOrgJSON(o))
	return nil
}

// handleListOrganizations answers GET /enterprise/organizations (a bare array).
func (s *Server) handleListOrganizations(w http.ResponseWriter, r *http.Request) error {
	orgs, err := s.store.Organizations(r.Context(), principalOf(r).Account.ID)
	if err != nil {
		return err
	}
	out := make([]orgJSON, len(orgs))
	for i, o := range orgs {
		out[i] = toOrgJSON(o)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// handleGetOrganization answers GET /enterprise/organizations/{org_id}: the
// organization with its assets.
func (s *Server) handleGetOrganization(w http.ResponseWriter, r *http.Request) error {
	acct := principalOf(r).Account.ID
	o, err := s.store.Organization(r.Context(), acct, r.PathValue("org_id"))
	if err != nil {
		return err
	}
	assets, err := s.store.Assets(r.Context(), acct, o.ID)
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
	if err := s.store.DeleteOrganization(r.Context(), principalOf(r).Account.ID, r.PathValue("org_id")); err != nil {
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
	if _, err := s.store.Organization(r.Context(), a.AccountID, a.OrganizationID); err != nil {
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

func (s *Server) addAsset(kind string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		a, err := s.assetFromRequest(r, kind)
		if err != nil {
			return err
		}
		created, err := s.store.AddAsset(r.Context(), a)
		if err != nil {
			return err
		}
		if created && kind == "dns" { // the monitor watches domains only
			s.assetsChanged()
		}
		status := http.StatusOK
		if created {
			status = http.StatusCreated
		}
		writeJSON(w, status, assetResponse{Status: "success", Asset: a.Value, Type: kind})
		return nil
	}
}

func (s *Server) removeAsset(kind string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		a, err := s.assetFromRequest(r, kind)
		if err != nil {
			return err
		}
		if err := s.store.RemoveAsset(r.Context(), a); err != nil {
			return err
		}
		if kind == "dns" {
			s.assetsChanged()
		}
		writeJSON(w, http.StatusOK, assetResponse{Status: "success", Asset: a.Value, Type: kind})
		return nil
	}
}

// assetsChanged tells the collaborators watching organizations' assets.
func (s *Server) assetsChanged() {
	if s.changed != nil {
		s.changed()
	}
}
