package console

import (
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"
)

// The read-only pages: each reads its sections through the API (visit.get,
// visit.fetch) and renders one template.

// overview is the data of the overview page.
type overview struct {
	Status     section // GET /auth/status: credits
	Orgs       section // GET /enterprise/organizations
	Alerts     section // GET /enterprise/alerts?state=open
	BySeverity []countOf
	Newest     []any
	// Chart is the alerts first seen on each of the last 30 days, for the
	// chart (console.js draws it with uPlot; the table beside it is the
	// same data without JavaScript).
	Chart chartData
}

type countOf struct {
	Name  string
	Count int
}

type chartData struct {
	Days   []int64  `json:"days"`
	Counts []int    `json:"counts"`
	Labels []string `json:"-"`
	Total  int      `json:"-"`
}

// handleOverview answers GET /: credits, organizations, open alerts by
// severity, the newest alerts and a 30-day chart.
func (c *Console) handleOverview(w http.ResponseWriter, v *visit) error {
	var o overview
	var err error
	if o.Status, err = v.fetch("/api/v1/auth/status"); err != nil {
		return err
	}
	if o.Orgs, err = v.fetch("/api/v1/enterprise/organizations"); err != nil {
		return err
	}
	if o.Alerts, err = v.fetch("/api/v1/enterprise/alerts?state=open"); err != nil {
		return err
	}
	list, _ := o.Alerts.Data.([]any)
	counts := map[string]int{}
	now := time.Now().UTC()
	start := now.Truncate(24*time.Hour).AddDate(0, 0, -29)
	o.Chart.Counts = make([]int, 30)
	for i := range 30 {
		d := start.AddDate(0, 0, i)
		o.Chart.Days = append(o.Chart.Days, d.Unix())
		o.Chart.Labels = append(o.Chart.Labels, d.Format("01-02"))
	}
	for _, a := range list {
		m, _ := a.(map[string]any)
		sev, _ := m["severity"].(string)
		counts[sev]++
		if n, ok := m["first_seen"].(json.Number); ok {
			if ts, err := n.Int64(); err == nil && ts >= start.Unix() {
				if day := int((ts - start.Unix()) / 86400); day < 30 {
					o.Chart.Counts[day]++
					o.Chart.Total++
				}
			}
		}
	}
	for _, s := range []string{"critical", "high", "medium", "low", "info"} {
		o.BySeverity = append(o.BySeverity, countOf{s, counts[s]})
	}
	if len(list) > 8 {
		list = list[:8]
	}
	o.Newest = list
	return c.render(w, v, "overview", "Overview", o)
}

// handleHost answers GET /hosts/{host}: the API's host record (a credit),
// and with ?history=1 its change history from the ledger (another).
func (c *Console) handleHost(w http.ResponseWriter, v *visit) error {
	name := v.r.PathValue("host")
	s, err := v.fetch("/api/v1/host/" + url.PathEscape(name))
	if err != nil {
		return err
	}
	data := map[string]any{"Name": name, "Host": s}
	if v.r.URL.Query().Get("history") == "1" {
		h, err := v.fetch("/api/v1/host/" + url.PathEscape(name) + "/history")
		if err != nil {
			return err
		}
		data["History"] = h
	}
	return c.render(w, v, "host", name, data)
}

// handleDomain answers GET /domains/{domain}: details (hosts, WHOIS) and
// the subdomain list, resolvable only when asked (two credits).
func (c *Console) handleDomain(w http.ResponseWriter, v *visit) error {
	name := v.r.PathValue("domain")
	resolvable := v.r.URL.Query().Get("resolvable") == "1"
	pageN := pageNumber(v.r.URL.Query())
	only := url.Values{}
	if resolvable {
		only.Set("resolvable_only", "true")
	}
	subs := "/api/v1/domain/" + url.PathEscape(name) + "/subdomains?" + only.Encode()
	only.Set("limit", "50")
	only.Set("page", strconv.Itoa(pageN))
	details, err := v.fetch("/api/v1/domain/" + url.PathEscape(name) + "/details?" + only.Encode())
	if err != nil {
		return err
	}
	subdomains, err := v.fetch(subs)
	if err != nil {
		return err
	}
	return c.render(w, v, "domain", name, map[string]any{"Name": name, "Details": details, "Subdomains": subdomains,
		"Resolvable": resolvable, "Page": pageN, "Prev": pageURL(v.r.URL, pageN-1), "Next": pageURL(v.r.URL, pageN+1)})
}

// handleVulnerabilities answers GET /vulnerabilities?q=: the vulnerability
// search (a credit), KEV and EPSS shown, and advisories of a package.
func (c *Console) handleVulnerabilities(w http.ResponseWriter, v *visit) error {
	q := v.r.URL.Query()
	data := map[string]any{"Q": q.Get("q"), "Ecosystem": q.Get("ecosystem"), "Package": q.Get("package")}
	if s := q.Get("q"); s != "" {
		sec, err := v.fetch("/api/v1/vulnerability-intelligence/vulnerability-search?query=" + url.QueryEscape(s))
		if err != nil {
			return err
		}
		data["Vulns"] = sec
	}
	if pkg := q.Get("package"); pkg != "" {
		target := "/api/v1/vulnerability-intelligence/advisories-search?package=" + url.QueryEscape(pkg)
		if eco := q.Get("ecosystem"); eco != "" {
			target += "&ecosystem=" + url.QueryEscape(eco)
		}
		sec, err := v.fetch(target)
		if err != nil {
			return err
		}
		data["Advisories"] = sec
	}
	return c.render(w, v, "vulnerabilities", "Vulnerabilities", data)
}

// dateRange passes the page's from and to on to the API (which checks
// them).
func dateRange(q url.Values) string {
	out := url.Values{}
	for _, k := range []string{"from", "to"} {
		if s := q.Get(k); s != "" {
			out.Set(k, s)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "?" + out.Encode()
}

// handleBrand answers GET /brand: potential phishing, typosquatting and
// certificates of the account's domains, with a date filter.
func (c *Console) handleBrand(w http.ResponseWriter, v *visit) error {
	q := v.r.URL.Query()
	rng := dateRange(q)
	data := map[string]any{"From": q.Get("from"), "To": q.Get("to")}
	for name, target := range map[string]string{
		"Phishing":     "/api/v1/enterprise/darkweb/potential-phishing" + rng,
		"Typosquats":   "/api/v1/enterprise/darkweb/typosquatting" + rng,
		"Certificates": "/api/v1/enterprise/certificates" + rng,
	} {
		s, err := v.fetch(target)
		if err != nil {
			return err
		}
		data[name] = s
	}
	return c.render(w, v, "brand", "Brand protection", data)
}

// handleDarkweb answers GET /darkweb: compromised credentials and
// discovered emails of the account's domains, masked by the API.
func (c *Console) handleDarkweb(w http.ResponseWriter, v *visit) error {
	pageN := pageNumber(v.r.URL.Query())
	paging := "?per_page=50&page=" + strconv.Itoa(pageN)
	creds, err := v.fetch("/api/v1/enterprise/darkweb/compromised-credentials" + paging)
	if err != nil {
		return err
	}
	emails, err := v.fetch("/api/v1/enterprise/darkweb/discovered-emails" + paging)
	if err != nil {
		return err
	}
	return c.render(w, v, "darkweb", "Dark web", map[string]any{"Credentials": creds, "Emails": emails,
		"Page": pageN, "Prev": pageURL(v.r.URL, pageN-1), "Next": pageURL(v.r.URL, pageN+1)})
}

// pageNumber reads ?page=, 1 when absent or not a positive number.
func pageNumber(q url.Values) int {
	n, err := strconv.Atoi(q.Get("page"))
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// sortedKeys lists a JSON object's keys in order (for generic tables).
func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// pageURL is the page's own URL at page n ("" before the first).
func pageURL(u *url.URL, n int) template.URL {
	if n < 1 {
		return ""
	}
	q := u.Query()
	q.Set("page", strconv.Itoa(n))
	return template.URL(u.Path + "?" + q.Encode())
}
