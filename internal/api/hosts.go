package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/periscope-oss/periscope/internal/asset"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hostquery"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/whoislookup"
)

// Global search bounds (docs/api.md "Internet host index" and internal/api/openapi/hosts.json).
const (
	searchDefaultLimit = 50
	searchMaxLimit     = 200
)

type globalSearchResponse struct {
	Status            int                        `json:"status"`
	Message           string                     `json:"message"`
	Results           []host.Host                `json:"results"`
	Query             map[string]json.RawMessage `json:"query"`
	TotalQueryResults int                        `json:"total_query_results"`
	TotalPages        int                        `json:"total_pages"`
	Page              int                        `json:"page"`
	PageSize          int                        `json:"page_size"`
	// TotalIsExact is false when the count stopped at hoststore.CountCap
	// (only queries testing host rows over many hosts do).
	TotalIsExact bool `json:"total_is_exact"`
	// Sort is FullHunt's sort name: ours is always "natural" (hosts in
	// the order they were first stored); we keep no asset score.
	Sort string `json:"sort"`
	// Credits is the account's balance after this request's charge.
	Credits int64 `json:"credits"`
}

// handleGlobalSearch answers POST /global/search.
func (s *Server) handleGlobalSearch(w http.ResponseWriter, r *http.Request) error {
	var body map[string]json.RawMessage
	if err := decode(r, &body); err != nil {
		return err
	}
	page, limit := 1, searchDefaultLimit
	filters := map[string]json.RawMessage{}
	var query *hoststore.Expr
	for k, v := range body {
		switch k {
		case "query":
			var text string
			if err := json.Unmarshal(v, &text); err != nil {
				return periscope.Errorf(periscope.EInvalid, "query must be a string: a host query (see docs/search.md).")
			}
			if strings.TrimSpace(text) == "" {
				continue
			}
			e, err := hostquery.ParsePlan(text)
			if err != nil {
				return err
			}
			query = e
		case "page":
			if err := intParam(k, v, &page); err != nil {
				return err
			}
		case "limit":
			if err := intParam(k, v, &limit); err != nil {
				return err
			}
		default:
			filters[k] = v
		}
	}
	if err := checkRange("page", page, 1, 0); err != nil {
		return err
	}
	if err := checkRange("limit", limit, 1, searchMaxLimit); err != nil {
		return err
	}
	size := min(limit, max(principalOf(r).Account.MaxResultsPerRequest, 1))
	if page > (1<<31)/size {
		return periscope.Errorf(periscope.EInvalid, "page is too large (got %d).", page)
	}
	var res hoststore.HostPage
	if query != nil {
		var err error
		if res, err = s.searchQuery(r, query, filters, (page-1)*size, size); err != nil {
			return err
		}
		filters["query"] = body["query"]
	} else {
		q, err := hostQuery(filters)
		if err != nil {
			return err
		}
		q.Limit, q.Offset = size, (page-1)*size
		if res, err = s.hosts.SearchHosts(r.Context(), q); err != nil {
			return err
		}
	}
	s.writeWithCredits(w, r, func(balance int64) any {
		return globalSearchResponse{
			Status: http.StatusOK, Results: res.Hosts, Query: filters,
			TotalQueryResults: res.Total, TotalPages: (res.Total + size - 1) / size,
			Page: page, PageSize: size, TotalIsExact: res.Exact, Sort: "natural", Credits: balance,
		}
	})
	return nil
}

// searchQuery answers a global search with a query: the query ANDed with
// the filters, evaluated exactly (hostsearch.go).
func (s *Server) searchQuery(r *http.Request, query *hoststore.Expr, filters map[string]json.RawMessage, offset, limit int) (hoststore.HostPage, error) {
	conds, err := filterConds(filters)
	if err != nil {
		return hoststore.HostPage{}, err
	}
	e := &hoststore.Expr{Op: hoststore.OpAnd, Kids: []*hoststore.Expr{query}}
	for _, c := range conds {
		e.Kids = append(e.Kids, &hoststore.Expr{Op: hoststore.OpCond, Cond: c})
	}
	m, err := s.hosts.MatchHosts(r.Context(), e)
	if err != nil {
		return hoststore.HostPage{}, err
	}
	hs, err := m.Page(r.Context(), offset, limit)
	if err != nil {
		return hoststore.HostPage{}, err
	}
	return hoststore.HostPage{Hosts: hs, Total: m.Count(), Exact: true}, nil
}

// intParam decodes a JSON integer parameter; a float or a string is an
// error naming the parameter.
func intParam(name string, raw json.RawMessage, dst *int) error {
	if err := json.Unmarshal(raw, dst); err != nil || bytes.ContainsAny(raw, ".eE") {
		return periscope.Errorf(periscope.EInvalid, "%s must be an integer.", name)
	}
	return nil
}

// hostQuery turns global-search filters into a store query: unknown names
// and wrong types are errors naming the filter, and at least one filter is
// required. What each filter means is hostquery.Leaf's (the query language
// shares it).
func hostQuery(filters map[string]json.RawMessage) (hoststore.HostQuery, error) {
	var q hoststore.HostQuery
	conds, err := filterConds(filters)
	if err != nil {
		return q, err
	}
	if len(conds) == 0 {
		return q, errNoFilter
	}
	for _, c := range conds {
		addCond(&q, c)
	}
	return q, nil
}

var errNoFilter = periscope.Errorf(periscope.EMissing, "Give at least one search filter (for example {\"country\": \"US\"} or {\"port\": 443}) or a query.")

// filterConds returns the conditions of global-search filters (all
// ANDed), in filter-name order.
func filterConds(filters map[string]json.RawMessage) ([]hoststore.Cond, error) {
	names := make([]string, 0, len(filters))
	for k := range filters {
		names = append(names, k)
	}
	slices.Sort(names)
	var conds []hoststore.Cond
	for _, name := range names {
		raw := filters[name]
		if name == "query_tags" {
			continue
		}
		f, ok := hostquery.Fields[name]
		if !ok || !hostquery.IsGlobalFilter(name) {
			return nil, periscope.Errorf(periscope.EInvalid, "%q is not a search filter (see the global search filters in the API documentation).", periscope.Clip(name, 64))
		}
		if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			continue
		}
		var vals []string
		var err error
		switch f.Kind {
		case hostquery.KindBool:
			var b bool
			if err := json.Unmarshal(raw, &b); err != nil {
				return nil, periscope.Errorf(periscope.EInvalid, "%s must be true or false.", name)
			}
			vals = []string{strconv.FormatBool(b)}
		case hostquery.KindInt:
			vals, err = intValues(name, raw)
		default:
			vals, err = stringValues(name, raw)
		}
		if err != nil {
			return nil, err
		}
		for _, v := range vals {
			c, err := hostquery.Leaf(name, v)
			if err != nil {
				return nil, err
			}
			conds = append(conds, c)
		}
	}
	return conds, nil
}

// addCond adds a filter's condition to a store query (all ANDed).
func addCond(q *hoststore.HostQuery, c hoststore.Cond) {
	switch c.Kind {
	case hoststore.CondName:
		q.Name = c.Text
	case hoststore.CondUnder:
		q.Under = c.Text
	case hoststore.CondTitle:
		q.TitleContains = c.Text
	case hoststore.CondIPRange:
		q.IPRange = c.Prefix
	default:
		q.Terms = append(q.Terms, c.Term)
	}
}

// addStringFilter adds one value of a string filter to a store query.
func addStringFilter(q *hoststore.HostQuery, name, _ string, v string) error {
	c, err := hostquery.Leaf(name, v)
	if err != nil {
		return err
	}
	addCond(q, c)
	return nil
}

// maxFilterText bounds a global search value (the longest DNS name, with
// room for TXT records and titles).
const maxFilterText = 1024

// stringValues decodes a string or an array of non-empty strings, each
// UTF-8 text without control characters.
func stringValues(name string, raw json.RawMessage) ([]string, error) {
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		if strings.TrimSpace(one) == "" {
			return nil, periscope.Errorf(periscope.EInvalid, "%s must not be empty.", name)
		}
		if err := checkText(name, one, maxFilterText); err != nil {
			return nil, err
		}
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil || len(many) == 0 {
		return nil, periscope.Errorf(periscope.EInvalid, "%s must be a string or a non-empty array of strings.", name)
	}
	for _, v := range many {
		if strings.TrimSpace(v) == "" {
			return nil, periscope.Errorf(periscope.EInvalid, "%s must not hold empty strings.", name)
		}
		if err := checkText(name, v, maxFilterText); err != nil {
			return nil, err
		}
	}
	return many, nil
}

// intValues decodes an integer or an array of integers (as decimal text).
func intValues(name string, raw json.RawMessage) ([]string, error) {
	bad := periscope.Errorf(periscope.EInvalid, "%s must be an integer or an array of integers.", name)
	raw = bytes.TrimSpace(raw)
	var nums []json.Number
	if len(raw) > 0 && raw[0] == '[' {
		if err := json.Unmarshal(raw, &nums); err != nil || len(nums) == 0 {
			return nil, bad
		}
	} else {
		var one json.Number
		if len(raw) == 0 || raw[0] == '"' || json.Unmarshal(raw, &one) != nil {
			return nil, bad
		}
		nums = []json.Number{one}
	}
	out := make([]string, len(nums))
	for i, n := range nums {
		v, err := n.Int64()
		if err != nil || v < 0 || v > 1<<32 {
			return nil, bad
		}
		out[i] = n.String()
	}
	return out, nil
}

// subdomainsMetadata is FullHunt's metadata object; every number an integer.
type subdomainsMetadata struct {
	AllResultsCount         int    `json:"all_results_count"`
	AvailableResultsForUser int    `json:"available_results_for_user"`
	Domain                  string `json:"domain"`
	LastScanned             int64  `json:"last_scanned"`
	MaxResultsForUser       int    `json:"max_results_for_user"`
	Timestamp               int64  `json:"timestamp"`
	UserPlan                string `json:"user_plan"`
}

type subdomainsResponse struct {
	Status   int                `json:"status"`
	Message  string             `json:"message"`
	Domain   string             `json:"domain"`
	Hosts    []string           `json:"hosts"`
	Metadata subdomainsMetadata `json:"metadata"`
	// WhoisData is the stored WHOIS record, null when none (whois_data.go).
	WhoisData *whoislookup.Data `json:"whois_data"`
}

// subdomainCountCap bounds the count of a domain's hosts.
const subdomainCountCap = 1_000_000

// pathDomain validates the {domain} of a route: a domain name, not an IP,
// without scheme, port or path.
func pathDomain(r *http.Request) (string, error) {
	return asset.Domain(r.PathValue("domain"))
}

// handleSubdomains answers GET /domain/{domain}/subdomains.
func (s *Server) handleSubdomains(w http.ResponseWriter, r *http.Request) error {
	domain, err := pathDomain(r)
	if err != nil {
		return err
	}
	resolvable, err := queryBool(r, "resolvable_only")
	if err != nil {
		return err
	}
	acct := principalOf(r).Account
	limit := max(acct.MaxResultsPerRequest, 1)
	l, err := s.hosts.Listing(r.Context(), domain, resolvable, limit, subdomainCountCap)
	if err != nil {
		return err
	}
	md := s.domainMetadata(r, domain, l, len(l.Names))
	wd, err := s.storedWhois(r, domain)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, subdomainsResponse{Status: http.StatusOK, Domain: domain, Hosts: l.Names, Metadata: md, WhoisData: wd})
	return nil
}

// domainMetadata is the metadata of a domain listing of which returned
// items are in the response.
func (s *Server) domainMetadata(r *http.Request, domain string, l hoststore.DomainListing, returned int) subdomainsMetadata {
	acct := principalOf(r).Account
	return subdomainsMetadata{
		AllResultsCount: l.Total, AvailableResultsForUser: returned, Domain: domain, LastScanned: l.LastSeen,
		MaxResultsForUser: acct.MaxResultsPerRequest, Timestamp: s.now().Unix(), UserPlan: acct.Plan,
	}
}

type domainDetailsResponse struct {
	Status   int                `json:"status"`
	Message  string             `json:"message"`
	Domain   string             `json:"domain"`
	Hosts    []host.Host        `json:"hosts"`
	Metadata subdomainsMetadata `json:"metadata"`
	// WhoisData is the stored WHOIS record, null when none (whois_data.go).
	WhoisData *whoislookup.Data `json:"whois_data"`
}

// detailsMaxLimit bounds the limit parameter; the account's
// max_results_per_request clips it further.
const detailsMaxLimit = 100000

// handleDomainDetails answers GET /domain/{domain}/details: the host
// objects of the domain, most recently seen first, as many as the
// account's max_results_per_request allows (FullHunt's tier cap), paged
// with the extensions page and limit.
func (s *Server) handleDomainDetails(w http.ResponseWriter, r *http.Request) error {
	domain, err := pathDomain(r)
	if err != nil {
		return err
	}
	page, err := queryInt(r, "page", 1, 1, 1<<20)
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit", max(principalOf(r).Account.MaxResultsPerRequest, 1), 1, detailsMaxLimit)
	if err != nil {
		return err
	}
	resolvable, err := queryBool(r, "resolvable_only")
	if err != nil {
		return err
	}
	res, md, err := s.domainHosts(r, domain, resolvable, page, limit)
	if err != nil {
		return err
	}
	wd, err := s.storedWhois(r, domain)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, domainDetailsResponse{Status: http.StatusOK, Domain: domain, Hosts: res, Metadata: md, WhoisData: wd})
	return nil
}

// domainHosts returns a page of the host objects of domain (clipped to the
// account's max_results_per_request), most recently seen first, and the
// metadata of the listing.
func (s *Server) domainHosts(r *http.Request, domain string, resolvable bool, page, limit int) ([]host.Host, subdomainsMetadata, error) {
	size := min(limit, max(principalOf(r).Account.MaxResultsPerRequest, 1))
	hs, err := s.hosts.RecentUnder(r.Context(), domain, resolvable, size, (page-1)*size)
	if err != nil {
		return nil, subdomainsMetadata{}, err
	}
	l, err := s.hosts.Listing(r.Context(), domain, resolvable, 0, subdomainCountCap)
	if err != nil {
		return nil, subdomainsMetadata{}, err
	}
	return hs, s.domainMetadata(r, domain, l, len(hs)), nil
}

// handleHost answers GET /host/{host}: one host object with raw, our
// stored document for it; 404 when unknown.
func (s *Server) handleHost(w http.ResponseWriter, r *http.Request) error {
	name, err := pathHost(r)
	if err != nil {
		return err
	}
	if r.URL.Query().Has("at") {
		return s.hostAt(w, r, name)
	}
	h, err := s.hosts.Host(r.Context(), name)
	if err != nil {
		return err
	}
	// raw is FullHunt's untransformed database document; ours is the host
	// object itself, which is what the index stores (its canonical JSON).
	doc, err := h.CanonicalJSON()
	if err != nil {
		return err
	}
	body := append(doc[:len(doc)-1:len(doc)-1], `,"raw":`...)
	body = append(append(body, doc...), '}')
	writeJSON(w, http.StatusOK, json.RawMessage(body))
	return nil
}

// attackSurfaceLimits caps the blocks /oem/attack-surface/search accepts:
// a /16 of IPv4, a /48 of IPv6 (as for organization ranges).
var attackSurfaceLimits = asset.DefaultLimits

// attackSurfaceQuery is the body of the OEM attack-surface routes.
type attackSurfaceQuery struct {
	Query *string `json:"query"`
	Type  string  `json:"type"`
}

// handleAttackSurfaceSearch answers POST /oem/attack-surface/search: the
// hosts of a domain or of an IP range (type inferred when absent).
func (s *Server) handleAttackSurfaceSearch(w http.ResponseWriter, r *http.Request) error {
	var in attackSurfaceQuery
	if err := decode(r, &in); err != nil {
		return err
	}
	if in.Query == nil || strings.TrimSpace(*in.Query) == "" {
		return periscope.Errorf(periscope.EMissing, "query is required: a domain or an IP range.")
	}
	query := strings.TrimSpace(*in.Query)
	typ := in.Type
	if typ == "" {
		typ = "domain"
		if _, err := netip.ParsePrefix(query); err == nil {
			typ = "ip_range"
		} else if _, err := netip.ParseAddr(query); err == nil {
			typ = "ip_range"
		}
	}
	limit := max(principalOf(r).Account.MaxResultsPerRequest, 1)
	switch typ {
	case "domain":
		domain, err := asset.Domain(query)
		if err != nil {
			return err
		}
		hosts, md, err := s.domainHosts(r, domain, false, 1, limit)
		if err != nil {
			return err
		}
		wd, err := s.storedWhois(r, domain)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]any{"response": map[string]any{"domain": domain, "hosts": hosts, "metadata": md, "whois_data": wd}})
	case "ip_range":
		p, err := ipRangeQuery(query)
		if err != nil {
			return err
		}
		res, err := s.hosts.SearchHosts(r.Context(), hoststore.HostQuery{IPRange: p, Limit: limit})
		if err != nil {
			return err
		}
		acct := principalOf(r).Account
		writeJSON(w, http.StatusOK, map[string]any{"response": map[string]any{
			"ip_range": p.String(), "hosts": res.Hosts,
			"metadata": map[string]any{
				"all_results_count": res.Total, "total_is_exact": res.Exact,
				"available_results_for_user": len(res.Hosts), "ip_range": p.String(),
				"max_results_for_user": acct.MaxResultsPerRequest, "timestamp": s.now().Unix(), "user_plan": acct.Plan,
			},
		}})
	default:
		return periscope.Errorf(periscope.EInvalid, "type must be domain or ip_range (got %q).", periscope.Clip(typ, 32))
	}
	return nil
}

// ipRangeQuery parses an IP or CIDR and enforces the size cap.
func ipRangeQuery(s string) (netip.Prefix, error) {
	var p netip.Prefix
	if a, err := netip.ParseAddr(s); err == nil {
		p = netip.PrefixFrom(a, a.BitLen())
	} else if p, err = netip.ParsePrefix(s); err != nil {
		return p, periscope.Errorf(periscope.EInvalid, "query must be an IP address or a CIDR block (got %q).", periscope.Clip(s, 64))
	}
	if p.Addr().Zone() != "" {
		return p, periscope.Errorf(periscope.EInvalid, "query must not carry an IPv6 zone.")
	}
	if a := p.Addr(); a.Is4In6() {
		if p.Bits() < 96 {
			return p, periscope.Errorf(periscope.EInvalid, "query %s mixes IPv4-mapped and plain IPv6 space.", p)
		}
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	p = p.Masked()
	if p.Addr().Is4() && p.Bits() < attackSurfaceLimits.MinPrefixV4 || p.Addr().Is6() && p.Bits() < attackSurfaceLimits.MinPrefixV6 {
		return p, periscope.Errorf(periscope.EInvalid, "query %s is too large: the largest block is /%d for IPv4 and /%d for IPv6.",
			p, attackSurfaceLimits.MinPrefixV4, attackSurfaceLimits.MinPrefixV6)
	}
	return p, nil
}

// handleAttackSurfaceHost answers POST /oem/attack-surface/host: one host
// object, 404 when unknown.
func (s *Server) handleAttackSurfaceHost(w http.ResponseWriter, r *http.Request) error {
	var in attackSurfaceQuery
	if err := decode(r, &in); err != nil {
		return err
	}
	if in.Query == nil || strings.TrimSpace(*in.Query) == "" {
		return periscope.Errorf(periscope.EMissing, "query is required: a host name or IP address.")
	}
	if in.Type != "" && in.Type != "host" && in.Type != "ip" && in.Type != "domain" {
		return periscope.Errorf(periscope.EInvalid, "type must be host, domain or ip (got %q).", periscope.Clip(in.Type, 32))
	}
	n, err := host.Normalize(*in.Query)
	if err != nil {
		return periscope.Errorf(periscope.EInvalid, "query must be a host name or IP address (got %q).", periscope.Clip(*in.Query, 64))
	}
	h, err := s.hosts.Host(r.Context(), n.Host)
	if err != nil {
		return err
	}
	acct := principalOf(r).Account
	writeJSON(w, http.StatusOK, map[string]any{"response": map[string]any{
		"host": n.Host, "data": h,
		"metadata": map[string]any{"timestamp": s.now().Unix(), "user_plan": acct.Plan, "last_seen": h.LastSeen},
	}})
	return nil
}
