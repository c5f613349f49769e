package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/brand"
	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/brandwatch"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/periscope"
	"golang.org/x/net/idna"
)

// Kinds of findings, as the routes and items name them.
const (
	kindPhishing = brand.PotentialPhishing
	kindTypo     = brand.TypoSquatting
)

// Page sizes of the enterprise listings (FullHunt's), and the bound of the
// per_page extension.
const (
	phishingPageSize = 1000
	typoPageSize     = 10
	certPageSize     = 10
	maxPerPage       = 1000
	// oemSearchLimit caps the items of one OEM phishing or typosquatting
	// search (max_results_per_request clips it further).
	oemSearchLimit = 1000
)

type listingResults[T any] struct {
	Items   []T `json:"items"`
	Total   int `json:"total"`
	Page    int `json:"page"`
	PerPage int `json:"per_page"`
	Pages   int `json:"pages"`
}

type listingResponse[T any] struct {
	Status            int               `json:"status"`
	Query             string            `json:"query"`
	Page              int               `json:"page"`
	TotalResults      int               `json:"total_results"`
	TotalQueryResults int               `json:"total_query_results"`
	Results           listingResults[T] `json:"results"`
}

type dnsHistoryJSON struct {
	Date      string   `json:"date"`
	DNS       host.DNS `json:"dns"`
	Timestamp int64    `json:"timestamp"`
}

type findingJSON struct {
	Domain         string          `json:"domain"`
	BaseDomain     string          `json:"base_domain"`
	Type           string          `json:"type"`
	DNS            json.RawMessage `json:"dns"`
	DNSHistory     json.RawMessage `json:"dns_history"`
	LastSeen       int64           `json:"last_seen"`
	DateAdded      int64           `json:"date_added"`
	OrganizationID string          `json:"organization_id"`
	Fuzzer         string          `json:"fuzzer"`
	Score          int             `json:"score"`
	Reason         string          `json:"reason"`
}

// toFindingJSON shapes a finding; orgID is shown only when the caller owns
// the organization. Findings listed with their stored JSON pass it through.
func toFindingJSON(f brandstore.Finding, accountID string) findingJSON {
	out := findingJSON{Domain: f.Domain, BaseDomain: f.BaseDomain, Type: f.Kind, DNS: f.RawDNS, DNSHistory: f.RawDNSHistory,
		LastSeen: f.LastSeen, DateAdded: f.DateAdded, Fuzzer: f.Fuzzer, Score: f.Score, Reason: f.Reason}
	if f.AccountID == accountID {
		out.OrganizationID = f.OrganizationID
	}
	if out.DNS == nil {
		out.DNS, _ = json.Marshal(f.DNS.NonNil())
	}
	if out.DNSHistory == nil {
		hist := make([]dnsHistoryJSON, len(f.DNSHistory))
		for i, h := range f.DNSHistory {
			hist[i] = dnsHistoryJSON{Date: h.Date, DNS: h.DNS.NonNil(), Timestamp: h.Timestamp}
		}
		out.DNSHistory, _ = json.Marshal(hist)
	}
	return out
}

type certificateJSON struct {
	ID                 string   `json:"id"`
	DomainName         string   `json:"domain_name"`
	DateAdded          string   `json:"date_added"`
	LastSeen           string   `json:"last_seen"`
	Type               string   `json:"type"`
	OrganizationID     string   `json:"organization_id"`
	Issuer             string   `json:"issuer"`
	IssuerCommonName   string   `json:"issuer_common_name"`
	IssuerOrganization string   `json:"issuer_organization"`
	Subject            string   `json:"subject"`
	SubjectCommonName  string   `json:"subject_common_name"`
	SubjectOrg         string   `json:"subject_organization"`
	NotBefore          string   `json:"not_before"`
	NotAfter           string   `json:"not_after"`
	SerialNumber       string   `json:"serial_number"`
	SHA256Fingerprint  string   `json:"sha256_fingerprint"`
	SHA1Fingerprint    string   `json:"sha1_fingerprint"`
	DNSNames           []string `json:"dns_names"`
	IPAddresses        []string `json:"ip_addresses"`
	IsPrecertificate   bool     `json:"is_precertificate"`
	SignatureAlgorithm string   `json:"signature_algorithm"`
	FirstSeen          string   `json:"first_seen"`
}

func isoTime(epoch int64) string { return time.Unix(epoch, 0).UTC().Format(time.RFC3339) }

// dn writes a distinguished name from its common name and organization.
func dn(cn, org string) string {
	var parts []string
	if cn != "" {
		parts = append(parts, "CN="+cn)
	}
	if org != "" {
		parts = append(parts, "O="+org)
	}
	return strings.Join(parts, ", ")
}

func toCertificateJSON(c brandstore.OrgCertificate) certificateJSON {
	out := certificateJSON{
		ID: c.SHA256, DomainName: c.Domain, DateAdded: isoTime(c.DateAdded), LastSeen: isoTime(c.LinkLastSeen),
		Type: "Certificate", OrganizationID: c.OrganizationID,
		Issuer: dn(c.IssuerCN, c.IssuerOrg), IssuerCommonName: c.IssuerCN, IssuerOrganization: c.IssuerOrg,
		Subject: dn(c.SubjectCN, c.SubjectOrg), SubjectCommonName: c.SubjectCN, SubjectOrg: c.SubjectOrg,
		NotBefore: isoTime(c.NotBefore), NotAfter: isoTime(c.NotAfter), SerialNumber: c.Serial,
		SHA256Fingerprint: c.SHA256, SHA1Fingerprint: c.SHA1, DNSNames: c.DNSNames, IPAddresses: c.IPAddresses,
		IsPrecertificate: c.IsPrecert, SignatureAlgorithm: c.SignatureAlgorithm, FirstSeen: isoTime(c.FirstSeen),
	}
	if out.DNSNames == nil {
		out.DNSNames = []string{}
	}
	if out.IPAddresses == nil {
		out.IPAddresses = []string{}
	}
	return out
}

// listingDate parses an enterprise-listing date: DD/MM/YYYY, or ISO
// YYYY-MM-DD. end selects the last second of the day (the bounds are
// inclusive).
func listingDate(name, v string, end bool) (int64, error) {
	if v == "" {
		return 0, nil
	}
	var t time.Time
	var err error
	for _, layout := range []string{"02/01/2006", "2006-01-02"} {
		if t, err = time.Parse(layout, v); err == nil {
			break
		}
	}
	if err != nil {
		return 0, periscope.Errorf(periscope.EInvalid, "%s must be a date as DD/MM/YYYY or YYYY-MM-DD (got %q).", name, periscope.Clip(v, 32))
	}
	if t.Year() < 1970 {
		return 0, periscope.Errorf(periscope.EInvalid, "%s must be on or after 01/01/1970 (got %q).", name, periscope.Clip(v, 32))
	}
	if end {
		t = t.Add(24*time.Hour - time.Second)
	}
	return t.Unix(), nil
}

// listingQuery reads q, page, per_page, from and to.
func listingQuery(r *http.Request, defaultSize int) (brandstore.ListQuery, int, error) {
	var q brandstore.ListQuery
	qs := r.URL.Query()
	q.Q = strings.TrimSpace(qs.Get("q"))
	if err := checkText("q", q.Q, 253); err != nil {
		return q, 0, err
	}
	// Names are stored in ASCII: a Unicode filter (bücher) looks for its
	// punycode form (xn--bcher-kva).
	if a, err := idna.ToASCII(strings.ToLower(q.Q)); err == nil && a != strings.ToLower(q.Q) {
		q.Q = a
	}
	page, err := queryInt(r, "page", 1, 1, 1<<20)
	if err != nil {
		return q, 0, err
	}
	size, err := queryInt(r, "per_page", defaultSize, 1, maxPerPage)
	if err != nil {
		return q, 0, err
	}
	if q.From, err = listingDate("from", qs.Get("from"), false); err != nil {
		return q, 0, err
	}
	if q.To, err = listingDate("to", qs.Get("to"), true); err != nil {
		return q, 0, err
	}
	if q.From > 0 && q.To > 0 && q.From > q.To {
		return q, 0, periscope.Errorf(periscope.EInvalid, "from must not be after to.")
	}
	size = min(size, max(principalOf(r).Account.MaxResultsPerRequest, 1))
	q.AccountID = principalOf(r).Account.ID
	q.Limit, q.Offset = size, (page-1)*size
	return q, page, nil
}

func newListing[T any](r *http.Request, q brandstore.ListQuery, page, all, total int, items []T) listingResponse[T] {
	return listingResponse[T]{
		Status: http.StatusOK, Query: strings.TrimSpace(r.URL.Query().Get("q")), Page: page, TotalResults: all, TotalQueryResults: total,
		Results: listingResults[T]{Items: items, Total: total, Page: page, PerPage: q.Limit, Pages: (total + q.Limit - 1) / q.Limit},
	}
}

// filtered reports whether q narrows the listing (so the unfiltered total
// needs its own count).
func filtered(q brandstore.ListQuery) bool { return q.Q != "" || q.From > 0 || q.To > 0 }

// handlePhishingFindings answers GET /enterprise/darkweb/potential-phishing.
func (s *Server) handlePhishingFindings(w http.ResponseWriter, r *http.Request) error {
	return s.findingsListing(w, r, kindPhishing, phishingPageSize)
}

// handleTyposquattingFindings answers GET /enterprise/darkweb/typosquatting.
func (s *Server) handleTyposquattingFindings(w http.ResponseWriter, r *http.Request) error {
	return s.findingsListing(w, r, kindTypo, typoPageSize)
}

// findingsListing writes the caller's organizations' findings of one kind,
// the most convincing first.
func (s *Server) findingsListing(w http.ResponseWriter, r *http.Request, kind string, pageSize int) error {
	q, page, err := listingQuery(r, pageSize)
	if err != nil {
		return err
	}
	q.Kind, q.RawJSON = kind, true
	fs, total, err := s.listings.Findings(r.Context(), q)
	if err != nil {
		return err
	}
	all := total
	if filtered(q) {
		if _, all, err = s.listings.Findings(r.Context(), brandstore.ListQuery{AccountID: q.AccountID, Kind: kind}); err != nil {
			return err
		}
	}
	items := make([]findingJSON, len(fs))
	for i, f := range fs {
		items[i] = toFindingJSON(f, q.AccountID)
	}
	writeJSON(w, http.StatusOK, newListing(r, q, page, all, total, items))
	return nil
}

// handleCertificates answers GET /enterprise/certificates: the certificates
// covering the caller's organizations' domains, newest first.
func (s *Server) handleCertificates(w http.ResponseWriter, r *http.Request) error {
	q, page, err := listingQuery(r, certPageSize)
	if err != nil {
		return err
	}
	cs, total, err := s.listings.OrgCertificates(r.Context(), q)
	if err != nil {
		return err
	}
	all := total
	if filtered(q) {
		if _, all, err = s.listings.OrgCertificates(r.Context(), brandstore.ListQuery{AccountID: q.AccountID}); err != nil {
			return err
		}
	}
	items := make([]certificateJSON, len(cs))
	for i, c := range cs {
		items[i] = toCertificateJSON(c)
	}
	writeJSON(w, http.StatusOK, newListing(r, q, page, all, total, items))
	return nil
}

// handlePhishingSearch answers POST /oem/potential-phishing/search.
func (s *Server) handlePhishingSearch(w http.ResponseWriter, r *http.Request) error {
	return s.brandSearch(w, r, kindPhishing, "potential_phishing_domains")
}

// handleTyposquattingSearch answers POST /oem/typosquatting/search.
func (s *Server) handleTyposquattingSearch(w http.ResponseWriter, r *http.Request) error {
	return s.brandSearch(w, r, kindTypo, "typosquatting_domains")
}

// brandSearch writes the findings of one kind for a base domain, stored when
// it is monitored, computed on demand otherwise, under listName.
func (s *Server) brandSearch(w http.ResponseWriter, r *http.Request, kind, listName string) error {
	var in struct {
		Query *string `json:"query"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	if in.Query == nil {
		return periscope.Errorf(periscope.EMissing, "query is required: a base domain such as example.com.")
	}
	base, err := brandwatch.BaseDomain(*in.Query)
	if err != nil {
		return err
	}
	acct := principalOf(r).Account
	fs, err := s.brand.Search(r.Context(), acct.ID, base, kind, min(oemSearchLimit, max(acct.MaxResultsPerRequest, 1)))
	if err != nil {
		return err
	}
	items := make([]findingJSON, len(fs))
	for i, f := range fs {
		items[i] = toFindingJSON(f, acct.ID)
	}
	writeJSON(w, http.StatusOK, map[string]any{"base_domain": base, "total": len(items), listName: items})
	return nil
}
