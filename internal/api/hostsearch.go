package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hostquery"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// The host query routes (docs/search.md): /hosts/search pages the matches
// of a query with facets, /hosts/count counts them for free, /hosts/export
// streams them all.

// hostsSearchResponse is Shodan's search envelope; matches are host
// objects as /host/{host} documents them.
type hostsSearchResponse struct {
	Query        string                            `json:"query"`
	Total        int                               `json:"total"`
	TotalIsExact bool                              `json:"total_is_exact"`
	Page         int                               `json:"page"`
	Limit        int                               `json:"limit"`
	Matches      []host.Host                       `json:"matches"`
	Facets       map[string][]hostquery.FacetValue `json:"facets"`
}

type hostsCountResponse struct {
	Query        string                            `json:"query"`
	Total        int                               `json:"total"`
	TotalIsExact bool                              `json:"total_is_exact"`
	Facets       map[string][]hostquery.FacetValue `json:"facets"`
}

// hostsQuery reads and plans the query parameter and the facets.
func hostsQuery(r *http.Request) (string, *hoststore.Expr, []hostquery.Facet, error) {
	text := r.URL.Query().Get("query")
	if strings.TrimSpace(text) == "" {
		return "", nil, nil, periscope.Errorf(periscope.EMissing, "query is required: a host query such as country:US port:443 (see docs/search.md).")
	}
	e, err := hostquery.ParsePlan(text)
	if err != nil {
		return "", nil, nil, err
	}
	facets, err := hostquery.ParseFacets(r.URL.Query().Get("facets"))
	if err != nil {
		return "", nil, nil, err
	}
	return text, e, facets, nil
}

// countFacets counts the requested facets over the matches.
func countFacets(r *http.Request, m *hoststore.Matches, facets []hostquery.Facet) (map[string][]hostquery.FacetValue, error) {
	out := make(map[string][]hostquery.FacetValue, len(facets))
	for _, f := range facets {
		vals, err := m.Facet(r.Context(), f.Term, f.Limit)
		if err != nil {
			return nil, err
		}
		out[f.Name] = f.Display(vals)
	}
	return out, nil
}

// handleHostsSearch answers GET /hosts/search: a page of the matches of a
// query, their exact total and the facets asked for. It costs a credit,
// as global search.
func (s *Server) handleHostsSearch(w http.ResponseWriter, r *http.Request) error {
	text, e, facets, err := hostsQuery(r)
	if err != nil {
		return err
	}
	page, err := queryInt(r, "page", 1, 1, 1<<20)
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit", searchDefaultLimit, 1, searchMaxLimit)
	if err != nil {
		return err
	}
	size := min(limit, max(principalOf(r).Account.MaxResultsPerRequest, 1))
	m, err := s.hosts.MatchHosts(r.Context(), e)
	if err != nil {
		return err
	}
	hs, err := m.Page(r.Context(), (page-1)*size, size)
	if err != nil {
		return err
	}
	fv, err := countFacets(r, m, facets)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, hostsSearchResponse{Query: text, Total: m.Count(), TotalIsExact: true,
		Page: page, Limit: size, Matches: hs, Facets: fv})
	return nil
}

// handleHostsCount answers GET /hosts/count: the exact total and facets of
// a query, without a credit (as Shodan's count), rate-limited as every
// route.
func (s *Server) handleHostsCount(w http.ResponseWriter, r *http.Request) error {
	text, e, facets, err := hostsQuery(r)
	if err != nil {
		return err
	}
	m, err := s.hosts.MatchHosts(r.Context(), e)
	if err != nil {
		return err
	}
	fv, err := countFacets(r, m, facets)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, hostsCountResponse{Query: text, Total: m.Count(), TotalIsExact: true, Facets: fv})
	return nil
}

// exportCredits is what an export of total hosts costs: what paging
// through them at the account's max_results_per_request would, one credit
// a started page (at least one).
func exportCredits(total, perRequest int) int64 {
	perRequest = max(perRequest, 1)
	return max(1, int64((total+perRequest-1)/perRequest))
}

// handleHostsExport answers GET /hosts/export: every match of a query,
// streamed (ndjson: one host object a line; csv: hostquery.CSVHeader's
// columns; ips: the address of each match that has one), read a chunk at
// a time so memory stays flat. The charge (exportCredits) is reserved
// before the first byte is sent; a request it cannot pay for is refused
// with nothing sent.
func (s *Server) handleHostsExport(w http.ResponseWriter, r *http.Request) error {
	_, e, _, err := hostsQuery(r)
	if err != nil {
		return err
	}
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "ndjson"
	}
	if err := hostquery.CheckFormat(format); err != nil {
		return err
	}
	m, err := s.hosts.MatchHosts(r.Context(), e)
	if err != nil {
		return err
	}
	acct := principalOf(r).Account
	cost := exportCredits(m.Count(), acct.MaxResultsPerRequest)
	if _, err := s.accounts.Reserve(r.Context(), acct.ID, periscope.PoolMonthly, cost); err != nil {
		return err
	}
	s.metrics.credits.WithLabelValues(poolName(periscope.PoolMonthly)).Add(float64(cost))
	h := w.Header()
	h.Set("Content-Type", hostquery.ExportFormats[format])
	h.Set("X-Total-Count", strconv.Itoa(m.Count()))
	h.Set("X-Credits-Charged", strconv.FormatInt(cost, 10))
	w.WriteHeader(http.StatusOK)
	if _, err := hostquery.Export(r.Context(), w, m, format); err != nil {
		// The status is sent: the stream ends short, and the log says why.
		s.log.WarnContext(r.Context(), "export ended early", "request_id", requestID(r.Context()), "err", err)
	}
	return nil
}
