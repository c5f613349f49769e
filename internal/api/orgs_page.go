package api

import (
	"fmt"
	"net/http"
	"net/url"
)

// Paging of GET /enterprise/organizations. The body stays the bare array it
// always was (docs/api.md "Organizations and assets"); the page and the total travel in headers, as
// GitHub's API does, so existing clients keep working. The default page
// holds the default organization quota, so an account within its quota
// still gets every organization without asking for a page.
const (
	orgsDefaultPerPage = 100
	orgsMaxPerPage     = 1000
	orgsMaxPage        = 1_000_000 // keeps page*per_page far from overflow
)

// handleListOrganizations answers GET /enterprise/organizations: a bare
// array of one page, with X-Total-Count, X-Page, X-Per-Page and a Link
// header (rel next, prev, first, last).
func (s *Server) handleListOrganizations(w http.ResponseWriter, r *http.Request) error {
	page, err := queryInt(r, "page", 1, 1, orgsMaxPage)
	if err != nil {
		return err
	}
	perPage, err := queryInt(r, "per_page", orgsDefaultPerPage, 1, orgsMaxPerPage)
	if err != nil {
		return err
	}
	orgs, total, err := s.orgs.OrganizationsPage(r.Context(), principalOf(r).Account.ID, (page-1)*perPage, perPage)
	if err != nil {
		return err
	}
	out := make([]orgJSON, len(orgs))
	for i, o := range orgs {
		out[i] = toOrgJSON(o)
	}
	h := w.Header()
	h.Set("X-Total-Count", fmt.Sprint(total))
	h.Set("X-Page", fmt.Sprint(page))
	h.Set("X-Per-Page", fmt.Sprint(perPage))
	if link := pageLinks(r.URL, page, perPage, total); link != "" {
		h.Set("Link", link)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// pageLinks returns an RFC 8288 Link header value for a paged listing:
// relative references to the next, previous, first and last pages.
func pageLinks(u *url.URL, page, perPage, total int) string {
	last := max(1, (total+perPage-1)/perPage)
	ref := func(p int, rel string) string {
		q := url.Values{}
		q.Set("page", fmt.Sprint(p))
		q.Set("per_page", fmt.Sprint(perPage))
		return fmt.Sprintf("<%s?%s>; rel=%q", u.Path, q.Encode(), rel)
	}
	var links string
	add := func(l string) {
		if links != "" {
			links += ", "
		}
		links += l
	}
	if page < last {
		add(ref(page+1, "next"))
	}
	if page > 1 {
		add(ref(min(page-1, last), "prev"))
	}
	add(ref(1, "first"))
	add(ref(last, "last"))
	return links
}
