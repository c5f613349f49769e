package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/orgprofile"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// GET /enterprise/suggested-domains: domains that likely belong to the
// account's organizations but are not yet among their assets
// (orgprofile.Suggest: a shared WHOIS registrant e-mail or organization,
// name servers with the same registrant, or hosts whose certificates name
// the same subject organization).

// DomainSuggester finds suggested domains (*orgprofile.Service).
type DomainSuggester interface {
	Suggest(ctx context.Context, owned []string) ([]orgprofile.Suggestion, error)
}

// suggestedPageSize is FullHunt's page.
const suggestedPageSize = 1000

type suggestionJSON struct {
	SuggestedDomain      string         `json:"suggested_domain"`
	IdentificationMethod string         `json:"identification_method"`
	DiscoveryData        map[string]any `json:"discovery_data"`
}

// handleSuggestedDomains answers GET /enterprise/suggested-domains (query:
// a substring of the domain; page; from and to, DD/MM/YYYY, on when the
// evidence was recorded).
func (s *Server) handleSuggestedDomains(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	query := strings.ToLower(strings.TrimSpace(q.Get("query")))
	if err := checkText("query", query, 253); err != nil {
		return err
	}
	page, err := queryInt(r, "page", 1, 1, 1<<20)
	if err != nil {
		return err
	}
	from, err := listingDate("from", q.Get("from"), false)
	if err != nil {
		return err
	}
	to, err := listingDate("to", q.Get("to"), true)
	if err != nil {
		return err
	}
	acct := principalOf(r).Account.ID
	owned, err := s.ownedDomains(r.Context(), acct)
	if err != nil {
		return err
	}
	all, err := s.orgProfiles.Suggest(r.Context(), owned)
	if err != nil {
		return err
	}
	results := []suggestionJSON{}
	matched := 0
	for _, sg := range all {
		if query != "" && !strings.Contains(sg.Domain, query) || from > 0 && sg.Found < from || to > 0 && sg.Found > to {
			continue
		}
		matched++
		if matched <= (page-1)*suggestedPageSize || len(results) >= suggestedPageSize {
			continue
		}
		d := map[string]any{"owned_domain": sg.OwnedDomain, "matched": sg.Matched, "found": sg.Found,
			"date_found": time.Unix(sg.Found, 0).UTC().Format("02/01/2006")}
		if sg.Host != "" {
			d["host"] = sg.Host
		}
		results = append(results, suggestionJSON{SuggestedDomain: sg.Domain, IdentificationMethod: sg.Method, DiscoveryData: d})
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_results": len(all), "page": page, "per_page": suggestedPageSize,
		"total_pages": (matched + suggestedPageSize - 1) / suggestedPageSize, "query": query, "total_query_results": matched, "results": results})
	return nil
}

// ownedDomains lists the domains of every organization of the account.
func (s *Server) ownedDomains(ctx context.Context, accountID string) ([]string, error) {
	orgs, err := s.orgs.Organizations(ctx, accountID)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, o := range orgs {
		as, err := s.orgs.Assets(ctx, accountID, o.ID)
		if err != nil {
			return nil, err
		}
		for _, a := range as {
			if a.Kind == periscope.AssetDomain {
				out = append(out, a.Value)
			}
		}
	}
	return out, nil
}
