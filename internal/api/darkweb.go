package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/breach"
	"github.com/periscope-oss/periscope/internal/darkwebstore"
	"github.com/periscope-oss/periscope/internal/periscope"
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

// darkwebRecord is a breach record on the wire: FullHunt's fields, then ours.
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
	// character and the length).
	Masked        bool        `json:"masked"`
	Vulnerability *vulnRecord `json:"vulnerability,omitempty"`
}

// disclosure decides whether a caller sees a record's secrets in clear:
// accounts allowed with --reveal-secrets see all; others only records
// under a domain one of their organizations claims.
type disclosure struct {
	all     bool
	domains []string
}

func (s *Server) disclosure(ctx context.Context, accountID string) (disclosure, error) {
	all, err := s.darkweb.Reveal(ctx, accountID)
	if err != nil {
		return disclosure{}, err
	}
	doms, err := s.accountDomains(ctx, accountID)
	return disclosure{all: all, domains: doms}, err
}

// accountDomains lists the domains of the account's organizations.
func (s *Server) accountDomains(ctx context.Context, accountID string) ([]string, error) {
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
				out = append(out, strings.ToLower(a.Value))
			}
		}
	}
	return out, nil
}

// under reports whether host is one of domains or below one.
func under(host string, domains []string) bool {
	host = strings.ToLower(host)
	for _, d := range domains {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}

// clear reports whether r's secrets may be shown.
func (d disclosure) clear(r *breach.Record) bool {
	if d.all {
		return true
	}
	var hosts []string
	if _, h, ok := strings.Cut(r.Email, "@"); ok {
		hosts = append(hosts, h)
	}
	if r.Domain != "" {
		hosts = append(hosts, r.Domain)
	}
	if h := breach.URLHost(r.URL); h != "" {
		hosts = append(hosts, h)
	}
	for _, h := range hosts {
		if under(h, d.domains) {
			return true
		}
	}
	return false
}

func toDarkwebRecord(res darkwebstore.Result, d disclosure) darkwebRecord {
	r := res.Record
	out := darkwebRecord{
		ID: res.ID, Email: r.Email, Username: r.Username, Password: r.Password, HashedPassword: r.HashedPassword,
		HashType: r.HashType, Name: r.Name, Phone: r.Phone, Address: r.Address, IPAddress: r.IP, VIN: r.VIN,
		Domain: r.Domain, DatabaseName: r.Breach, BreachDate: r.BreachDate, DateAdded: res.DateAdded,
		Hostname: r.Hostname, MACAddress: r.MAC, OrgAlias: r.OrgAlias, BIN: r.BIN, URL: r.URL, Source: r.Source,
	}
	if out.Domain == "" {
		_, out.Domain, _ = strings.Cut(r.Email, "@")
	}
	if out.HashedPassword == nil {
		out.HashedPassword = []string{}
	}
	if !d.clear(&r) {
		out.Masked = true
		out.Password = breach.Mask(out.Password)
		hs := make([]string, len(out.HashedPassword))
		for i, h := range out.HashedPassword {
			hs[i] = breach.Mask(h)
		}
		out.HashedPassword = hs
	}
	return out
}

// darkwebSearchBody is the body of POST /oem/darkweb/search (README "Dark-web breach intelligence").
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
	typ := breach.Email
	if b.Type != nil {
		t, ok := breach.ParseType(*b.Type)
		if !ok {
			return periscope.Errorf(periscope.EInvalid, "type must be one of username, name, email, hostname, mac_address, ip_address, org_alias, bin, cve, domain, password, hashed_password, vin, address, phone (got %q).", periscope.Clip(*b.Type, 32))
		}
		typ = t
	}
	if b.Query == nil || strings.TrimSpace(*b.Query) == "" {
		return periscope.Errorf(periscope.EMissing, "query is required: the value to search for as the type %s.", typ)
	}
	// Passwords are searched exactly, spaces and all; other types trim.
	if err := checkText("query", *b.Query, breach.MaxField); err != nil {
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
		if _, nerr := (breach.Normalizer{}).Normalize(typ, *b.Query); nerr != nil {
			return periscope.Errorf(periscope.EInvalid, "query is not a valid %s: %v.", typ, nerr)
		}
		return err
	}
	d, err := s.disclosure(r.Context(), acct.ID)
	if err != nil {
		return err
	}
	out := make([]darkwebRecord, len(found))
	for i, f := range found {
		out[i] = toDarkwebRecord(f, d)
	}
	if typ == breach.CVE && len(out) > 0 {
		if vs, err := s.vulns.SearchVulns(r.Context(), vulnstore.VulnSearch{Query: strings.ToUpper(strings.TrimSpace(*b.Query)), Limit: 1}); err == nil && len(vs) > 0 {
			v := toVulnRecords(vs)[0]
			for i := range out {
				out[i].Vulnerability = &v
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"response": out})
	return nil
}

// darkwebListing reads the enterprise listings' parameters and the
// caller's scope. ok is false when the caller has no domain (or the
// query is outside them): the listing is then empty.
func (s *Server) darkwebListing(r *http.Request) (q darkwebstore.ListQuery, page int, query string, ok bool, err error) {
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
	doms, err := s.accountDomains(r.Context(), acct.ID)
	if err != nil {
		return
	}
	q.Domains = doms
	if query != "" {
		host := strings.ToLower(query)
		if strings.Contains(query, "@") {
			var e string
			if e, err = (breach.Normalizer{}).Normalize(breach.Email, query); err != nil {
				err = periscope.Errorf(periscope.EInvalid, "query must be an email address or a domain of your organizations.")
				return
			}
			q.Email = e
			_, host, _ = strings.Cut(e, "@")
		} else {
			q.Domains = []string{host}
		}
		if !under(host, doms) {
			return q, page, query, false, nil
		}
	}
	return q, page, query, len(doms) > 0, nil
}

// handleCompromisedCredentials answers GET
// /enterprise/darkweb/compromised-credentials: records with a password or
// hash under the caller's organizations' domains, newest first.
func (s *Server) handleCompromisedCredentials(w http.ResponseWriter, r *http.Request) error {
	if s.darkweb == nil {
		return errDarkwebOff
	}
	q, page, query, ok, err := s.darkwebListing(r)
	if err != nil {
		return err
	}
	out := []darkwebRecord{}
	total, all := 0, 0
	if ok {
		found, n, err := s.darkweb.Credentials(r.Context(), q)
		if err != nil {
			return err
		}
		total, all = n, n
		if q.Email != "" || len(q.Domains) == 1 || q.From > 0 || q.To > 0 {
			doms, _ := s.accountDomains(r.Context(), principalOf(r).Account.ID)
			if _, all, err = s.darkweb.Credentials(r.Context(), darkwebstore.ListQuery{Domains: doms, Limit: 1}); err != nil {
				return err
			}
		}
		// Records under the caller's own domains: secrets in clear.
		d := disclosure{all: true}
		for _, f := range found {
			out = append(out, toDarkwebRecord(f, d))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_results": all, "page": page, "query": query, "total_query_results": total, "results": out})
	return nil
}

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
	q, page, query, ok, err := s.darkwebListing(r)
	if err != nil {
		return err
	}
	items := []discoveredEmail{}
	total := 0
	if ok {
		rows, n, err := s.darkweb.Emails(r.Context(), q)
		if err != nil {
			return err
		}
		total = n
		for _, e := range rows {
			items = append(items, discoveredEmail{ID: e.ID, Email: e.Email, Domain: e.Domain, DateAdded: e.LastSeen, BreachDate: e.BreachDate,
				Breaches: e.Breaches, FirstSeen: e.FirstSeen, LastSeen: e.LastSeen})
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": http.StatusOK, "query": query, "total_query_results": total,
		"results": listingResults[discoveredEmail]{Items: items, Total: total, Page: page, PerPage: q.Limit, Pages: (total + q.Limit - 1) / max(q.Limit, 1)}})
	return nil
}
