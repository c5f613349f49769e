package api

import (
	"net/http"
	"net/netip"
	"strings"

	"github.com/periscope-oss/periscope/internal/asset"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// FullHunt's enterprise read routes (fullhunt/fullhunt-skill,
// fullhunt/references/endpoints.md, "Enterprise read"): the entities
// (domains and IP ranges) of the caller's organizations, and the host
// objects under one of them. Free, scoped to the caller's account.

// entity is one row of GET /enterprise/entities.
type entity struct {
	Asset string `json:"asset"`
	Type  string `json:"type"` // domain or ip-range
}

// entityType is FullHunt's name of an asset kind.
func entityType(kind string) string {
	if kind == periscope.AssetDomain {
		return "domain"
	}
	return "ip-range"
}

// handleEntities answers GET /enterprise/entities: the assets of the
// organization org (its id or its name), or of every organization of the
// account when org is absent; 404 for an organization that is not the
// caller's.
func (s *Server) handleEntities(w http.ResponseWriter, r *http.Request) error {
	acct := principalOf(r).Account.ID
	org := strings.TrimSpace(r.URL.Query().Get("org"))
	if err := checkText("org", org, 256); err != nil {
		return err
	}
	orgs, err := s.orgs.Organizations(r.Context(), acct)
	if err != nil {
		return err
	}
	out := []entity{}
	found := org == ""
	for _, o := range orgs {
		if org != "" && o.ID != org && !strings.EqualFold(o.Name, org) {
			continue
		}
		found = true
		as, err := s.orgs.Assets(r.Context(), acct, o.ID)
		if err != nil {
			return err
		}
		for _, a := range as {
			out = append(out, entity{Asset: a.Value, Type: entityType(a.Kind)})
		}
	}
	if !found {
		return periscope.Errorf(periscope.ENotFound, "No organization %q in this account.", periscope.Clip(org, 64))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// handleEntityAssets answers GET /enterprise/assets?entity=: the host
// objects under one of the account's domains or IP ranges, at most
// max_results_per_request of them (a domain's most recently seen first).
// 422 without entity; 404 when it is not one of the caller's entities.
func (s *Server) handleEntityAssets(w http.ResponseWriter, r *http.Request) error {
	acct := principalOf(r).Account
	raw := strings.TrimSpace(r.URL.Query().Get("entity"))
	if raw == "" {
		return periscope.Errorf(periscope.EUnprocessable, "entity is required: one of the account's domains or IP ranges (GET /api/v1/enterprise/entities lists them).")
	}
	if err := checkText("entity", raw, 256); err != nil {
		return unprocessable(err)
	}
	want := strings.TrimSuffix(strings.ToLower(raw), ".")
	if p, err := netip.ParsePrefix(raw); err == nil {
		want = p.Masked().String()
	} else if a, err := netip.ParseAddr(raw); err == nil {
		want = netip.PrefixFrom(a, a.BitLen()).String()
	} else if d, err := asset.Domain(raw); err == nil {
		want = d
	}
	orgs, err := s.orgs.Organizations(r.Context(), acct.ID)
	if err != nil {
		return err
	}
	var match *periscope.Asset
	for _, o := range orgs {
		as, err := s.orgs.Assets(r.Context(), acct.ID, o.ID)
		if err != nil {
			return err
		}
		for i := range as {
			if as[i].Value == want {
				match = &as[i]
				break
			}
		}
		if match != nil {
			break
		}
	}
	if match == nil {
		return periscope.Errorf(periscope.ENotFound, "%q is not an entity of this account.", periscope.Clip(raw, 64))
	}
	limit := max(acct.MaxResultsPerRequest, 1)
	var hs []host.Host
	if match.Kind == periscope.AssetDomain {
		hs, err = s.hosts.RecentUnder(r.Context(), match.Value, false, limit, 0)
	} else {
		var p netip.Prefix
		if p, err = netip.ParsePrefix(match.Value); err != nil {
			return err
		}
		var res hoststore.HostPage
		res, err = s.hosts.SearchHosts(r.Context(), hoststore.HostQuery{IPRange: p, Limit: limit})
		hs = res.Hosts
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, hs)
	return nil
}
