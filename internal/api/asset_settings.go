package api

import (
	"net/http"
	"strings"

	"github.com/periscope-oss/periscope/internal/asset"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
)

// FullHunt's asset settings (PUT .../domains/settings and
// .../ip-ranges/settings): stored, and honoured where they mean something
// here. Continuous scans off keeps the asset out of scheduled active
// monitoring (on-demand scans still cover it); notifications off keeps its
// changes from raising alerts; the community-platform redaction is kept
// and has no effect (there is no community platform). organization_id
// moves the asset to another of the account's organizations.

type assetSettingsBody struct {
	Domain         string `json:"domain"`
	IPRange        string `json:"ip_range"`
	OrganizationID string `json:"organization_id"`
	Continuous     *bool  `json:"is_global_continuous_scans_enabled"`
	Notifications  *bool  `json:"is_global_target_notifications_enabled"`
	Redacted       *bool  `json:"is_redacted_from_community_platform"`
}

// handleDomainSettings answers PUT /enterprise/organizations/{org_id}/domains/settings.
func (s *Server) handleDomainSettings(w http.ResponseWriter, r *http.Request) error {
	return s.assetSettings(w, r, periscope.AssetDomain)
}

// handleIPRangeSettings answers PUT /enterprise/organizations/{org_id}/ip-ranges/settings.
func (s *Server) handleIPRangeSettings(w http.ResponseWriter, r *http.Request) error {
	return s.assetSettings(w, r, periscope.AssetIPRange)
}

func (s *Server) assetSettings(w http.ResponseWriter, r *http.Request, kind string) error {
	var in assetSettingsBody
	if err := decode(r, &in); err != nil {
		return err
	}
	a := periscope.Asset{AccountID: principalOf(r).Account.ID, OrganizationID: r.PathValue("org_id"), Kind: kind}
	var err error
	if kind == periscope.AssetDomain {
		if strings.TrimSpace(in.Domain) == "" {
			return periscope.Errorf(periscope.EMissing, "domain is required.")
		}
		a.Value, err = asset.Domain(in.Domain)
	} else {
		if strings.TrimSpace(in.IPRange) == "" {
			return periscope.Errorf(periscope.EMissing, "ip_range is required.")
		}
		pfx, perr := asset.IPRange(in.IPRange, s.cfg.RangeLimits)
		a.Value, err = pfx.String(), perr
	}
	if err != nil {
		return err
	}
	if err := checkText("organization_id", in.OrganizationID, 64); err != nil {
		return err
	}
	if _, err := s.orgs.Organization(r.Context(), a.AccountID, a.OrganizationID); err != nil {
		return err
	}
	set, err := s.orgs.AssetSettings(r.Context(), a)
	if err != nil {
		return err
	}
	if in.OrganizationID != "" && in.OrganizationID != a.OrganizationID {
		if err := s.orgs.MoveAsset(r.Context(), a, in.OrganizationID); err != nil {
			return err
		}
		a.OrganizationID = in.OrganizationID
	}
	for _, f := range []struct {
		v   *bool
		dst *bool
	}{{in.Continuous, &set.ContinuousScans}, {in.Notifications, &set.Notifications}, {in.Redacted, &set.Redacted}} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	if err := s.orgs.SetAssetSettings(r.Context(), a, set); err != nil {
		return err
	}
	if s.changed != nil {
		s.changed()
	}
	typ := "dns"
	if kind == periscope.AssetIPRange {
		typ = "ip-range"
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "success", "asset": a.Value, "type": typ, "organization_id": a.OrganizationID,
		"settings": settingsJSON(set)})
	return nil
}

func settingsJSON(set store.AssetSettings) map[string]bool {
	return map[string]bool{"is_global_continuous_scans_enabled": set.ContinuousScans,
		"is_global_target_notifications_enabled": set.Notifications, "is_redacted_from_community_platform": set.Redacted}
}
