package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/darkwebstore"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/scanstore"
	"github.com/periscope-oss/periscope/internal/vulnstore"
)

// Darkweb is the breach store behind the dark-web routes
// (*darkwebstore.Store, unlocked).
type Darkweb interface {
	Search(ctx context.Context, q darkwebstore.Query) ([]darkwebstore.Result, error)
	Credentials(ctx context.Context, q darkwebstore.ListQuery) ([]darkwebstore.Result, int, error)
	Emails(ctx context.Context, q darkwebstore.ListQuery) ([]darkwebstore.EmailRow, int, error)
	Reveal(ctx context.Context, accountID string) (bool, error)
}

const (
	// darkwebSearchMax caps one OEM dark-web search (max_results_per_request
	// clips it further).
	darkwebSearchMax = 1000
	// darkwebPageSize is FullHunt's page of the enterprise listings.
	darkwebPageSize = 1000
)

var errDarkwebOff = periscope.Errorf(periscope.EUnavailable, "Dark-web data is not configured on this server (start it with --darkweb-key-file).")

// darkwebRecord is a breach record on the wire: FullHunt's fields, then
// ours. The answers are written by appendDarkwebRecord (darkweb_json.go),
// which must give what encoding/json gives for this type.
type darkwebRecord struct {
	ID             string   `json:"id"`
	Email          string   `json:"email"`
	Username       string   `json:"username"`
	Password       string   `json:"password"`
	HashedPassword []string `json:"hashed_password"`
	HashType       string   `json:"hash_type"`
	Name           string   `json:"name"`
	Phone          string   `json:"phone"`
	Address        string   `json:"address"`
	IPAddress      string   `json:"ipaddress"`
	VIN            string   `json:"vin"`
	Domain         string   `json:"domain"`
	DatabaseName   string   `json:"database_name"`
	BreachDate     string   `json:"breach_date"`
	DateAdded      int64    `json:"date_added"`
	Hostname       string   `json:"hostname"`
	MACAddress     string   `json:"mac_address"`
	OrgAlias       string   `json:"org_alias"`
	BIN            string   `json:"bin"`
	URL            string   `json:"url"`
	Source         string   `json:"source"`
	// Masked says the password and hashes are masked (first and last
	// character and the length); MaskedReason says why
	// (darkweb.MaskedNotVerified, darkweb.MaskedNotClaimed).
	Masked        bool        `json:"masked"`
	MaskedReason  string      `json:"masked_reason,omitempty"`
	Vulnerability *vulnRecord `json:"vulnerability,omitempty"`
}

// DomainClaims reads which domains an account's organizations claim and
// which of them are verified (*scanstore.Store): what the dark-web
// disclosure policy goes by.
type DomainClaims interface {
	DomainClaims(ctx context.Context, accountID string) ([]scanstore.DomainClaim, error)
}

// disclosure returns the dark-web disclosure policy for an account (see
// darkweb.Disclosure): two queries, whatever its number of organizations.
func (s *Server) disclosure(ctx context.Context, accountID string) (darkweb.Disclosure, error) {
	all, err := s.darkweb.Reveal(ctx, accountID)
	if err != nil {
		return darkweb.Disclosure{}, err
	}
	if s.claims == nil {
		return darkweb.NewDisclosure(all, nil), nil
	}
	cs, err := s.claims.DomainClaims(ctx, accountID)
	if err != nil {
		return darkweb.Disclosure{}, err
	}
	claims := make([]darkweb.Claim, len(cs))
	for i, c := range cs {
		claims[i] = darkweb.Claim{Domain: c.Domain, Verified: c.Verified}
	}
	return darkweb.NewDisclosure(all, claims), nil
}

// darkwebSearchBody is the body of POST /oem/darkweb/search (docs/api.md "Dark-web breach data").
type darkwebSearchBody struct {
	Query   *string `json:"query"`
	Type    *string `json:"type"`
	NoCache bool    `json:"no_cache"`
	From    string  `json:"from"`
	To      string  `json:"to"`
}

// darkwebDate parses a DD-MM-YYYY date; end selects the day's last second.
func darkwebDate(name, v string, end bool) (int64, error) {
	if v == "" {
		return 0, nil
	}
	t, err := time.Parse("02-01-2006", v)
	if err != nil || t.Year() < 1970 {
		return 0, periscope.Errorf(periscope.EInvalid, "%s must be a date as DD-MM-YYYY on or after 01-01-1970 (got %q).", name, periscope.Clip(v, 32))
	}
	if end {
		t = t.Add(24*time.Hour - time.Second)
	}
	return t.Unix(), nil
}

// handleDarkwebSearch answers POST /oem/darkweb/search: an exact match
// through the blind index of the search type, newest first.
func (s *Server) handleDarkwebSearch(w http.ResponseWriter, r *http.Request) error {
	if s.darkweb == nil {
		return errDarkwebOff
	}
	var b darkwebSearchBody
	if err := decode(r, &b); err != nil {
		return err
	}
	typ := darkweb.Email
	if b.Type != nil {
		t, ok := darkweb.ParseType(*b.Type)
		if !ok {
			return periscope.Errorf(periscope.EInvalid, "type must be one of username, name, email, hostname, mac_address, ip_address, org_alias, bin, cve, domain, password, hashed_password, vin, address, phone (got %q).", periscope.Clip(*b.Type, 32))
		}
		typ = t
	}
	if b.Query == nil || strings.TrimSpace(*b.Query) == "" {
		return periscope.Errorf(periscope.EMissing, "query is required: the value to search for as the type %s.", typ)
	}
	// Passwords are searched exactly, spaces and all; other types trim.
	if err := checkText("query", *b.Query, darkweb.MaxField); err != nil {
		return err
	}
	from, err := darkwebDate("from", b.From, false)
	if err != nil {
		return err
	}
	to, err := darkwebDate("to", b.To, true)
	if err != nil {
		return err
	}
	if from > 0 && to > 0 && from > to {
		return periscope.Errorf(periscope.EInvalid, "from must not be after to.")
	}
	acct := principalOf(r).Account
	limit := min(darkwebSearchMax, max(acct.MaxResultsPerRequest, 1))
	found, err := s.darkweb.Search(r.Context(), darkwebstore.Query{Type: typ, Value: *b.Query, From: from, To: to, Limit: limit, NoCache: b.NoCache})
	if err != nil {
		var pe *periscope.Error
		if errors.As(err, &pe) || errors.Is(err, context.Canceled) {
			return err
		}
		if _, nerr := (darkweb.Normalizer{}).Normalize(typ, *b.Query); nerr != nil {
			return periscope.Errorf(periscope.EInvalid, "query is not a valid %s: %v.", typ, nerr)
		}
		return err
	}
	d, err := s.disclosure(r.Context(), acct.ID)
	if err != nil {
		return err
	}
	var vuln []byte
	if typ == darkweb.CVE && len(found) > 0 {
		if vs, err := s.vulns.SearchVulns(r.Context(), vulnstore.VulnSearch{Query: strings.ToUpper(strings.TrimSpace(*b.Query)), Limit: 1}); err == nil && len(vs) > 0 {
			if vuln, err = appendJSONValue(nil, toVulnRecords(vs)[0]); err != nil {
				return err
			}
		}
	}
	// {"response":[records]}, as encoding/json wrote the map before.
	body := make([]byte, 0, 16+len(found)*(darkwebRecordBytes+len(vuln)))
	body = append(body, `{"response":`...)
	body = appendDarkwebRecords(body, found, &d, vuln)
	writeJSONBody(w, http.StatusOK, append(body, '}'))
	return nil
}

// darkwebListing reads the enterprise listings' parameters and the
// caller's scope: every domain its organizations claim (records under a
// domain not verified are listed with their secrets masked, as d
// decides). ok is false when the caller has no domain (or the query is
// outside them): the listing is then empty.
func (s *Server) darkwebListing(r *http.Request) (q darkwebstore.ListQuery, d darkweb.Disclosure, page int, query string, ok bool, err error) {
	qs := r.URL.Query()
	query = strings.TrimSpace(qs.Get("query"))
	if query == "" {
		query = strings.TrimSpace(qs.Get("q"))
	}
	if err = checkText("query", query, 320); err != nil {
		return
	}
	if page, err = queryInt(r, "page", 1, 1, 1<<20); err != nil {
		return
	}
	size, err := queryInt(r, "per_page", darkwebPageSize, 1, maxPerPage)
	if err != nil {
		return
	}
	if q.From, err = listingDate("from", qs.Get("from"), false); err != nil {
		return
	}
	if q.To, err = listingDate("to", qs.Get("to"), true); err != nil {
		return
	}
	if q.From > 0 && q.To > 0 && q.From > q.To {
		err = periscope.Errorf(periscope.EInvalid, "from must not be after to.")
		return
	}
	acct := principalOf(r).Account
	size = min(size, max(acct.MaxResultsPerRequest, 1))
	q.Limit, q.Offset = size, (page-1)*size
	if d, err = s.disclosure(r.Context(), acct.ID); err != nil {
		return
	}
	doms := d.Claimed()
	q.Domains = doms
	if query != "" {
		host := strings.ToLower(query)
		if strings.Contains(query, "@") {
			var e string
			if e, err = (darkweb.Normalizer{}).Normalize(darkweb.Email, query); err != nil {
				err = periscope.Errorf(periscope.EInvalid, "query must be an email address or a domain of your organizations.")
				return
			}
			q.Email = e
			_, host, _ = strings.Cut(e, "@")
		} else {
			q.Domains = []string{host}
		}
		if !darkweb.Under(host, doms) {
			return q, d, page, query, false, nil
		}
	}
	return q, d, page, query, len(doms) > 0, nil
}

// handleCompromisedCredentials answers GET
// /enterprise/darkweb/compromised-credentials: records with a password or
// hash under the caller's organizations' domains, newest first.
func (s *Server) handleCompromisedCredentials(w http.ResponseWriter, r *http.Request) error {
	if s.darkweb == nil {
		return errDarkwebOff
	}
	q, d, page, query, ok, err := s.darkwebListing(r)
	if err != nil {
		return err
	}
	var found []darkwebstore.Result
	total, all := 0, 0
	if ok {
		var n int
		if found, n, err = s.darkweb.Credentials(r.Context(), q); err != nil {
			return err
		}
		total, all = n, n
		if query != "" || q.From > 0 || q.To > 0 {
			// Narrowed (to an email, a domain or dates): total_results
			// is the caller's whole listing, counted apart.
			if _, all, err = s.darkweb.Credentials(r.Context(), darkwebstore.ListQuery{Domains: d.Claimed(), Limit: 1}); err != nil {
				return err
			}
		}
	}
	// The keys in the order encoding/json gave the map before (sorted).
	// Secrets in clear only under the caller's verified domains.
	body := make([]byte, 0, 128+len(query)+len(found)*darkwebRecordBytes)
	body = append(body, `{"page":`...)
	body = strconv.AppendInt(body, int64(page), 10)
	body = append(body, `,"query":`...)
	body = appendJSONString(body, query)
	body = append(body, `,"results":`...)
	body = appendDarkwebRecords(body, found, &d, nil)
	body = append(body, `,"total_query_results":`...)
	body = strconv.AppendInt(body, int64(total), 10)
	body = append(body, `,"total_results":`...)
	body = strconv.AppendInt(body, int64(all), 10)
	writeJSONBody(w, http.StatusOK, append(body, '}'))
	return nil
}

// discoveredEmail is an item of the discovered-emails listing on the wire
// (written by appendDiscoveredEmail, which must match it).
type discoveredEmail struct {
	ID         string   `json:"id"`
	Email      string   `json:"email"`
	Domain     string   `json:"domain"`
	DateAdded  int64    `json:"date_added"`
	BreachDate string   `json:"breach_date"`
	Breaches   []string `json:"breaches"`
	FirstSeen  int64    `json:"first_seen"`
	LastSeen   int64    `json:"last_seen"`
}

// handleDiscoveredEmails answers GET /enterprise/darkweb/discovered-emails:
// the distinct emails under the caller's organizations' domains.
func (s *Server) handleDiscoveredEmails(w http.ResponseWriter, r *http.Request) error {
	if s.darkweb == nil {
		return errDarkwebOff
	}
	q, _, page, query, ok, err := s.darkwebListing(r)
	if err != nil {
		return err
	}
	var rows []darkwebstore.EmailRow
	total := 0
	if ok {
		if rows, total, err = s.darkweb.Emails(r.Context(), q); err != nil {
			return err
		}
	}
	// {"query","results":listingResults[discoveredEmail],"status",
	// "total_query_results"}: the map's keys sorted, as encoding/json
	// wrote them before.
	body := make([]byte, 0, 256+len(query)+len(rows)*256)
	body = append(body, `{"query":`...)
	body = appendJSONString(body, query)
	body = append(body, `,"results":{"items":[`...)
	for i := range rows {
		if i > 0 {
			body = append(body, ',')
		}
		body = appendDiscoveredEmail(body, &rows[i])
	}
	body = append(body, `],"total":`...)
	body = strconv.AppendInt(body, int64(total), 10)
	body = append(body, `,"page":`...)
	body = strconv.AppendInt(body, int64(page), 10)
	body = append(body, `,"per_page":`...)
	body = strconv.AppendInt(body, int64(q.Limit), 10)
	body = append(body, `,"pages":`...)
	body = strconv.AppendInt(body, int64((total+q.Limit-1)/max(q.Limit, 1)), 10)
	body = append(body, `},"status":`...)
	body = strconv.AppendInt(body, http.StatusOK, 10)
	body = append(body, `,"total_query_results":`...)
	body = strconv.AppendInt(body, int64(total), 10)
	writeJSONBody(w, http.StatusOK, append(body, '}'))
	return nil
}
