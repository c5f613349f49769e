package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/vuln"
	"github.com/periscope-oss/periscope/internal/vulnstore"
)

// Feed and search bounds (docs/api.md "Vulnerability intelligence", internal/api/openapi/vuln.json).
const (
	feedMaxDays        = 7
	feedDefaultPerPage = 20
	feedMaxPerPage     = 100
	feedMaxKeywords    = 20
	feedMaxPage        = 100000
	vulnSearchMax      = 50
	// vulnMaxText bounds a query, a keyword, a source, an ecosystem or a
	// package, so a huge query string is a clear 400.
	vulnMaxText = 512
)

// feedTypes maps accepted type values to the canonical one.
var feedTypes = map[string]string{
	"all": "all", "vulnerabilities": "vulnerabilities", "vulnerability": "vulnerabilities",
	"exploits": "exploits", "exploit": "exploits", "advisories": "advisories", "advisory": "advisories",
}

// feedParams are the feed's parameters, from the query string or a body.
type feedParams struct {
	Days, Page, PerPage        int
	Type                       string
	Keywords                   string
	Source, Ecosystem, Package string
	Severity                   string
	KEV, ExploitAvailable      bool
}

// vulnRecord is the wire form of a vulnerability (docs/api.md "Vulnerability intelligence" and internal/api/openapi/vuln.json); times are
// epoch seconds, 0 when unknown.
type vulnRecord struct {
	CVEID            string  `json:"cve_id"`
	Title            string  `json:"title"`
	Description      string  `json:"description"`
	PublishedDate    int64   `json:"published_date"`
	LastModifiedDate int64   `json:"last_modified_date"`
	CVSSV3Score      float64 `json:"cvss_v3_score"`
	CVSSV3Vector     string  `json:"cvss_v3_vector"`
	CVSSV2Score      float64 `json:"cvss_v2_score"`
	CVSSV2Vector     string  `json:"cvss_v2_vector"`
	// Severity is left out when no CVSS score gives one (a CVE known
	// only from KEV, or not scored yet): "" beside real values reads as
	// a value.
	Severity           string           `json:"severity,omitempty"`
	CWEs               []string         `json:"cwes"`
	CPEIDs             []string         `json:"cpe_ids"`
	EPSSScore          float64          `json:"epss_score"`
	EPSSPercentile     float64          `json:"epss_percentile"`
	IsExploitAvailable bool             `json:"is_exploit_available"`
	IsKEV              bool             `json:"is_kev"`
	VulnStatus         string           `json:"vuln_status"`
	SourceIdentifier   string           `json:"source_identifier"`
	CISAExploitAdd     int64            `json:"cisa_exploit_add"`
	CISAActionDue      int64            `json:"cisa_action_due"`
	CISARequiredAction string           `json:"cisa_required_action"`
	References         []vuln.Reference `json:"references"`
	// Extensions.
	CVSSV4Score  float64  `json:"cvss_v4_score"`
	CVSSV4Vector string   `json:"cvss_v4_vector"`
	Advisories   []string `json:"advisories"`
}

type exploitRecord struct {
	EDBID         int      `json:"edb_id"`
	CVEID         string   `json:"cve_id"`
	Title         string   `json:"title"`
	Author        string   `json:"author"`
	Type          string   `json:"type"`
	Platform      string   `json:"platform"`
	DatePublished int64    `json:"date_published"`
	DateAdded     int64    `json:"date_added"`
	DateUpdated   int64    `json:"date_updated"`
	Verified      bool     `json:"verified"`
	Codes         string   `json:"codes"`
	SourceURL     string   `json:"source_url"`
	CVEIDs        []string `json:"cve_ids"` // extension: every CVE in codes
	// From the record's CVE (cve_id): its EPSS score and KEV listing.
	EPSSScore float64 `json:"epss_score"`
	IsKEV     bool    `json:"is_kev"`
	// Exploit-DB's columns; empty when the input lacks them.
	FilePath       string `json:"file_path"`
	Aliases        string `json:"aliases"`
	ApplicationURL string `json:"application_url"`
	ScreenshotURL  string `json:"screenshot_url"`
}

type advisoryRecord struct {
	ID         string          `json:"id"`
	Aliases    []string        `json:"aliases"`
	Source     string          `json:"source"`
	Summary    string          `json:"summary"`
	Details    string          `json:"details"`
	Severity   string          `json:"severity"`
	Published  int64           `json:"published"`
	Modified   int64           `json:"modified"`
	Affected   []vuln.Affected `json:"affected"`
	References []string        `json:"references"`
	// Extensions: the CVSS vector the severity comes from and its score,
	// and when the database withdrew the advisory (0: it stands).
	CVSSVector string  `json:"cvss_vector"`
	CVSSScore  float64 `json:"cvss_score"`
	Withdrawn  int64   `json:"withdrawn"`
}

func epoch(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func toVulnRecords(vs []vuln.Vulnerability) []vulnRecord {
	out := make([]vulnRecord, len(vs))
	for i, v := range vs {
		refs := make([]vuln.Reference, len(v.References))
		for j, r := range v.References {
			r.Tags = orEmpty(r.Tags)
			refs[j] = r
		}
		out[i] = vulnRecord{
			CVEID: v.CVEID, Title: vulnTitle(v), Description: v.Description,
			PublishedDate: epoch(v.Published), LastModifiedDate: epoch(v.LastModified),
			CVSSV3Score: v.CVSSV3Score, CVSSV3Vector: v.CVSSV3Vector, CVSSV2Score: v.CVSSV2Score, CVSSV2Vector: v.CVSSV2Vector,
			Severity: v.Severity, CWEs: orEmpty(v.CWEs), CPEIDs: orEmpty(v.CPEIDs),
			EPSSScore: v.EPSSScore, EPSSPercentile: v.EPSSPercentile,
			IsExploitAvailable: v.IsExploitAvailable, IsKEV: v.IsKEV, VulnStatus: v.VulnStatus, SourceIdentifier: v.SourceIdentifier,
			CISAExploitAdd: epoch(v.CISAExploitAdd), CISAActionDue: epoch(v.CISAActionDue), CISARequiredAction: v.CISARequiredAction,
			References: refs, CVSSV4Score: v.CVSSV4Score, CVSSV4Vector: v.CVSSV4Vector, Advisories: orEmpty(v.Advisories),
		}
	}
	return out
}

// vulnTitle is the record's title: CISA's vulnerability name when it has
// one, else the first sentence of the description, at most 120 characters.
func vulnTitle(v vuln.Vulnerability) string {
	if v.Title != "" {
		return v.Title
	}
	d := strings.Join(strings.Fields(v.Description), " ")
	if i := strings.Index(d, ". "); i > 0 {
		d = d[:i+1]
	}
	if r := []rune(d); len(r) > 120 {
		d = strings.TrimSpace(string(r[:119])) + "…"
	}
	return d
}

// exploitRecords converts exploits to their wire records, with the EPSS
// score and KEV flag of each one's CVE.
func (s *Server) exploitRecords(ctx context.Context, xs []vuln.Exploit) ([]exploitRecord, error) {
	var cves []string
	for _, x := range xs {
		if x.CVEID != "" {
			cves = append(cves, x.CVEID)
		}
	}
	scores, err := s.vulns.CVEScores(ctx, cves)
	if err != nil {
		return nil, err
	}
	out := make([]exploitRecord, len(xs))
	for i, x := range xs {
		sc := scores[x.CVEID]
		out[i] = exploitRecord{
			EDBID: x.EDBID, CVEID: x.CVEID, Title: x.Title, Author: x.Author, Type: x.Type, Platform: x.Platform,
			DatePublished: epoch(x.DatePublished), DateAdded: epoch(x.DateAdded), DateUpdated: epoch(x.DateUpdated),
			Verified: x.Verified, Codes: x.Codes, SourceURL: x.SourceURL, CVEIDs: orEmpty(x.CVEIDs),
			EPSSScore: sc.EPSS, IsKEV: sc.IsKEV, FilePath: x.File, Aliases: x.Aliases,
			ApplicationURL: x.ApplicationURL, ScreenshotURL: x.ScreenshotURL,
		}
	}
	return out, nil
}

func toAdvisoryRecords(as []vuln.Advisory) []advisoryRecord {
	out := make([]advisoryRecord, len(as))
	for i, a := range as {
		aff := make([]vuln.Affected, len(a.Affected))
		for j, x := range a.Affected {
			x.Versions = orEmpty(x.Versions)
			x.Ranges = orEmpty(x.Ranges)
			for k := range x.Ranges {
				x.Ranges[k].Events = orEmpty(x.Ranges[k].Events)
			}
			aff[j] = x
		}
		out[i] = advisoryRecord{
			ID: a.ID, Aliases: orEmpty(a.Aliases), Source: a.Source, Summary: a.Summary, Details: a.Details,
			Severity: a.Severity, Published: epoch(a.Published), Modified: epoch(a.Modified),
			Affected: aff, References: orEmpty(a.References), CVSSVector: a.CVSSVector, CVSSScore: a.CVSSScore,
			Withdrawn: epoch(a.Withdrawn),
		}
	}
	return out
}

type feedMetadata struct {
	TotalResults         int      `json:"total_results"`
	TotalVulnerabilities int      `json:"total_vulnerabilities"`
	TotalExploits        int      `json:"total_exploits"`
	TotalAdvisories      int      `json:"total_advisories"`
	Page                 int      `json:"page"`
	PerPage              int      `json:"per_page"`
	Days                 int      `json:"days"`
	CutoffEpoch          int64    `json:"cutoff_epoch"`
	Type                 string   `json:"type"`
	Keywords             []string `json:"keywords"`
	Source               string   `json:"source"`
	Ecosystem            string   `json:"ecosystem"`
	Package              string   `json:"package"`
	// The OEM feed's extra filters, echoed there only.
	Severity         *string `json:"severity,omitempty"`
	KEV              *bool   `json:"kev,omitempty"`
	ExploitAvailable *bool   `json:"exploit_available,omitempty"`
}

type feedResponse struct {
	Status          int              `json:"status"`
	Message         string           `json:"message"`
	Metadata        feedMetadata     `json:"metadata"`
	Vulnerabilities []vulnRecord     `json:"vulnerabilities"`
	Exploits        []exploitRecord  `json:"exploits"`
	Advisories      []advisoryRecord `json:"advisories"`
}

// handleVulnFeed answers GET /vulnerability-intelligence/feed.
func (s *Server) handleVulnFeed(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	p := feedParams{Type: q.Get("type"), Keywords: q.Get("keywords"), Source: q.Get("source"), Ecosystem: q.Get("ecosystem"), Package: q.Get("package")}
	var err error
	if p.Days, err = queryInt(r, "days", 1, 1, feedMaxDays); err != nil {
		return err
	}
	if p.Page, err = queryInt(r, "page", 1, 1, feedMaxPage); err != nil {
		return err
	}
	if p.PerPage, err = queryInt(r, "per_page", feedDefaultPerPage, 1, feedMaxPerPage); err != nil {
		return err
	}
	return s.serveFeed(w, r, p, false)
}

// oemFeedBody is the JSON body of POST /oem/vulnerability-intelligence/feed.
type oemFeedBody struct {
	Days             json.RawMessage `json:"days"`
	Page             json.RawMessage `json:"page"`
	PerPage          json.RawMessage `json:"per_page"`
	Type             string          `json:"type"`
	Keywords         json.RawMessage `json:"keywords"`
	Source           string          `json:"source"`
	Ecosystem        string          `json:"ecosystem"`
	Package          string          `json:"package"`
	Severity         string          `json:"severity"`
	KEV              bool            `json:"kev"`
	ExploitAvailable bool            `json:"exploit_available"`
}

// handleOEMVulnFeed answers POST /oem/vulnerability-intelligence/feed.
func (s *Server) handleOEMVulnFeed(w http.ResponseWriter, r *http.Request) error {
	var b oemFeedBody
	if err := decode(r, &b); err != nil {
		return err
	}
	p := feedParams{Days: 1, Page: 1, PerPage: feedDefaultPerPage, Type: b.Type, Source: b.Source, Ecosystem: b.Ecosystem,
		Package: b.Package, Severity: b.Severity, KEV: b.KEV, ExploitAvailable: b.ExploitAvailable}
	for _, f := range []struct {
		name   string
		raw    json.RawMessage
		dst    *int
		lo, hi int
	}{{"days", b.Days, &p.Days, 1, feedMaxDays}, {"page", b.Page, &p.Page, 1, feedMaxPage}, {"per_page", b.PerPage, &p.PerPage, 1, feedMaxPerPage}} {
		if len(f.raw) == 0 || string(bytes.TrimSpace(f.raw)) == "null" {
			continue
		}
		if err := intParam(f.name, f.raw, f.dst); err != nil {
			return err
		}
		if err := checkRange(f.name, *f.dst, f.lo, f.hi); err != nil {
			return err
		}
	}
	kw, err := keywordsText(b.Keywords)
	if err != nil {
		return err
	}
	p.Keywords = kw
	return s.serveFeed(w, r, p, true)
}

// keywordsText accepts keywords as a comma-separated string or an array
// of strings.
func keywordsText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return one, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return "", periscope.Errorf(periscope.EInvalid, "keywords must be a comma-separated string or an array of strings.")
	}
	return strings.Join(many, ","), nil
}

// parsePackage checks ecosystem and package ("ecosystem/name") and
// returns the ecosystem and name to filter on.
func parsePackage(ecosystem, pkg string) (eco, name string, err error) {
	eco = strings.TrimSpace(ecosystem)
	for _, f := range []struct{ name, v string }{{"ecosystem", ecosystem}, {"package", pkg}} {
		if err := checkText(f.name, f.v, vulnMaxText); err != nil {
			return "", "", err
		}
	}
	pkg = strings.TrimSpace(pkg)
	if pkg == "" {
		return eco, "", nil
	}
	pe, pn, ok := strings.Cut(pkg, "/")
	pe, pn = strings.TrimSpace(pe), strings.TrimSpace(pn)
	if !ok || pe == "" || pn == "" {
		return "", "", periscope.Errorf(periscope.EInvalid, "package must be ecosystem/name, such as PyPI/django or Go/golang.org/x/net (got %q).", periscope.Clip(pkg, 64))
	}
	if eco != "" && !strings.EqualFold(eco, pe) {
		return "", "", periscope.Errorf(periscope.EInvalid, "package %q is not in ecosystem %q.", periscope.Clip(pkg, 64), periscope.Clip(eco, 64))
	}
	return pe, pn, nil
}

// feedFilter validates p and builds the store filter.
func (s *Server) feedFilter(r *http.Request, p *feedParams) (vulnstore.VulnFilter, []string, error) {
	var f vulnstore.VulnFilter
	t := strings.ToLower(strings.TrimSpace(p.Type))
	if t == "" {
		t = "all"
	}
	canon, ok := feedTypes[t]
	if !ok {
		return f, nil, periscope.Errorf(periscope.EInvalid, "type must be vulnerabilities, exploits, advisories or all (got %q).", periscope.Clip(p.Type, 32))
	}
	p.Type = canon
	switch sev := strings.ToLower(strings.TrimSpace(p.Severity)); sev {
	case "", "critical", "high", "medium", "low":
		p.Severity = sev
	default:
		return f, nil, periscope.Errorf(periscope.EInvalid, "severity must be critical, high, medium or low (got %q).", periscope.Clip(p.Severity, 32))
	}
	if err := checkText("source", p.Source, vulnMaxText); err != nil {
		return f, nil, err
	}
	eco, name, err := parsePackage(p.Ecosystem, p.Package)
	if err != nil {
		return f, nil, err
	}
	keywords := []string{}
	for _, k := range strings.Split(p.Keywords, ",") {
		if k = strings.TrimSpace(k); k != "" {
			keywords = append(keywords, k)
		}
	}
	if len(keywords) > feedMaxKeywords {
		return f, nil, periscope.Errorf(periscope.EInvalid, "keywords holds %d keywords; at most %d are allowed.", len(keywords), feedMaxKeywords)
	}
	for _, k := range keywords {
		if err := checkText("each keyword", k, vulnMaxText); err != nil {
			return f, nil, err
		}
		// Advisory ids stay terms: the store tells a stored id of any
		// database from text, spelt as stored (vulnstore.resolveFeedIDs).
		if id, ok := vuln.CanonicalID(k); ok && vuln.IsCVE(id) {
			f.IDs = append(f.IDs, id)
			continue
		}
		if n, err := strconv.Atoi(strings.TrimPrefix(strings.ToUpper(k), "EDB-")); err == nil && strings.HasPrefix(strings.ToUpper(k), "EDB-") && n > 0 {
			f.IDs = append(f.IDs, "EDB-"+strconv.Itoa(n))
			continue
		}
		if !vulnstore.HasSearchableText(k) {
			return f, nil, periscope.Errorf(periscope.EInvalid, "keyword %q has no letters or digits.", periscope.Clip(k, 32))
		}
		f.Terms = append(f.Terms, k)
	}
	// max_results_per_request caps the whole response: with type=all it
	// is shared by the three lists.
	lists := 1
	if p.Type == "all" {
		lists = 3
	}
	size := min(p.PerPage, max(principalOf(r).Account.MaxResultsPerRequest/lists, 1))
	p.PerPage = size
	f.Cutoff = s.now().Add(-time.Duration(p.Days) * 24 * time.Hour).Unix()
	f.Source, f.Ecosystem, f.Package = strings.TrimSpace(p.Source), eco, name
	f.Severity, f.KEV, f.Exploit = p.Severity, p.KEV, p.ExploitAvailable
	f.Limit, f.Offset = size, (p.Page-1)*size
	return f, keywords, nil
}

// serveFeed runs the feed for both routes.
func (s *Server) serveFeed(w http.ResponseWriter, r *http.Request, p feedParams, oem bool) error {
	f, keywords, err := s.feedFilter(r, &p)
	if err != nil {
		return err
	}
	resp := feedResponse{Status: http.StatusOK, Vulnerabilities: []vulnRecord{}, Exploits: []exploitRecord{}, Advisories: []advisoryRecord{}}
	md := &resp.Metadata
	ctx := r.Context()
	// The lists take their items, in order, while max_results_per_request
	// lasts: with type=all and a cap below three, a list may get none.
	budget := max(principalOf(r).Account.MaxResultsPerRequest, 1)
	take := func(n int) int {
		k := min(n, budget)
		budget -= k
		return k
	}
	if p.Type == "all" || p.Type == "vulnerabilities" {
		vs, n, err := s.vulns.FeedVulns(ctx, f)
		if err != nil {
			return err
		}
		resp.Vulnerabilities, md.TotalVulnerabilities = toVulnRecords(vs[:take(len(vs))]), n
	}
	if p.Type == "all" || p.Type == "exploits" {
		xs, n, err := s.vulns.FeedExploits(ctx, f)
		if err != nil {
			return err
		}
		recs, err := s.exploitRecords(ctx, xs[:take(len(xs))])
		if err != nil {
			return err
		}
		resp.Exploits, md.TotalExploits = recs, n
	}
	if p.Type == "all" || p.Type == "advisories" {
		as, n, err := s.vulns.FeedAdvisories(ctx, f)
		if err != nil {
			return err
		}
		resp.Advisories, md.TotalAdvisories = toAdvisoryRecords(as[:take(len(as))]), n
	}
	md.TotalResults = md.TotalVulnerabilities + md.TotalExploits + md.TotalAdvisories
	md.Page, md.PerPage, md.Days, md.CutoffEpoch, md.Type, md.Keywords = p.Page, p.PerPage, p.Days, f.Cutoff, p.Type, keywords
	md.Source, md.Ecosystem, md.Package = strings.TrimSpace(p.Source), strings.TrimSpace(p.Ecosystem), strings.TrimSpace(p.Package)
	if oem {
		md.Severity, md.KEV, md.ExploitAvailable = &p.Severity, &p.KEV, &p.ExploitAvailable
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// searchBody is the body of the searches (docs/api.md "Vulnerability intelligence" and internal/api/openapi/vuln.json).
type searchBody struct {
	Query     *string `json:"query"`
	Ecosystem *string `json:"ecosystem"`
	Package   *string `json:"package"`
	NoCache   bool    `json:"no_cache"`
}

// searchParams reads a search from the query string and, on POST, the
// JSON body or the form fields (whose values win).
//
// The advisory searches (filtersSuffice) take any one of query, ecosystem
// and package, as FullHunt's reference documents (fullhunt/fullhunt-skill,
// fullhunt/references/endpoints.md): ecosystem=npm&package=npm/lodash alone
// lists that package's advisories. The others need a query.
func (s *Server) searchParams(r *http.Request, filtersSuffice bool) (vulnstore.VulnSearch, error) {
	q := r.URL.Query()
	query, ecosystem, pkg := q.Get("query"), q.Get("ecosystem"), q.Get("package")
	if query == "" {
		query = q.Get("q")
	}
	if fields, ok := formFields(r); ok {
		for _, f := range []struct {
			name string
			dst  *string
		}{{"q", &query}, {"query", &query}, {"ecosystem", &ecosystem}, {"package", &pkg}} {
			if v := fields.Get(f.name); v != "" {
				*f.dst = v
			}
		}
	} else if r.Method == http.MethodPost {
		var b searchBody
		if err := decode(r, &b); err != nil {
			return vulnstore.VulnSearch{}, err
		}
		if b.Query != nil {
			query = *b.Query
		}
		if b.Ecosystem != nil {
			ecosystem = *b.Ecosystem
		}
		if b.Package != nil {
			pkg = *b.Package
		}
	}
	query = strings.TrimSpace(query)
	eco, name, err := parsePackage(ecosystem, pkg)
	if err != nil {
		return vulnstore.VulnSearch{}, err
	}
	switch {
	case query == "" && filtersSuffice && (eco != "" || name != ""):
		// A listing by ecosystem or package alone.
	case query == "" && filtersSuffice:
		return vulnstore.VulnSearch{}, periscope.Errorf(periscope.EMissing, "query is required when neither ecosystem nor package is given: an id (GHSA-…), a CPE string, search text, or ecosystem/package such as npm and npm/lodash.")
	case query == "":
		return vulnstore.VulnSearch{}, periscope.Errorf(periscope.EMissing, "query is required: an id (CVE-…, GHSA-…), a CPE string or search text.")
	case len([]rune(query)) < 2:
		return vulnstore.VulnSearch{}, periscope.Errorf(periscope.EInvalid, "query must be at least 2 characters.")
	}
	if err := checkText("query", query, vulnMaxText); err != nil {
		return vulnstore.VulnSearch{}, err
	}
	limit := min(vulnSearchMax, max(principalOf(r).Account.MaxResultsPerRequest, 1))
	return vulnstore.VulnSearch{Query: query, Ecosystem: eco, Package: name, Limit: limit}, nil
}

type vulnSearchResponse struct {
	Response []vulnRecord `json:"response"`
}

type advisorySearchResponse struct {
	Response []advisoryRecord `json:"response"`
}

type exploitSearchResponse struct {
	Response []exploitRecord `json:"response"`
}

// handleVulnSearch answers the vulnerability searches.
func (s *Server) handleVulnSearch(w http.ResponseWriter, r *http.Request) error {
	q, err := s.searchParams(r, false)
	if err != nil {
		return err
	}
	vs, err := s.vulns.SearchVulns(r.Context(), q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, vulnSearchResponse{Response: toVulnRecords(vs)})
	return nil
}

// handleAdvisorySearch answers the advisory searches.
func (s *Server) handleAdvisorySearch(w http.ResponseWriter, r *http.Request) error {
	q, err := s.searchParams(r, true)
	if err != nil {
		return err
	}
	as, err := s.vulns.SearchAdvisories(r.Context(), q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, advisorySearchResponse{Response: toAdvisoryRecords(as)})
	return nil
}

// handleExploitSearch answers the exploit searches.
func (s *Server) handleExploitSearch(w http.ResponseWriter, r *http.Request) error {
	q, err := s.searchParams(r, false)
	if err != nil {
		return err
	}
	xs, err := s.vulns.SearchExploits(r.Context(), q)
	if err != nil {
		return err
	}
	recs, err := s.exploitRecords(r.Context(), xs)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, exploitSearchResponse{Response: recs})
	return nil
}
