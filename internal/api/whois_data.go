package api

import (
	"net/http"

	"github.com/periscope-oss/periscope/internal/whoislookup"
)

// storedWhois is the whois_data beside a domain listing: the stored WHOIS
// record of domain's registered domain, nil (JSON null) when none is
// stored or no store is wired. It never waits on a registry: a listing
// answers at once, and /oem/whois/lookup is the route that asks one.
func (s *Server) storedWhois(r *http.Request, domain string) (*whoislookup.Data, error) {
	if s.whoisRec == nil {
		return nil, nil
	}
	return s.whoisRec.StoredWhois(r.Context(), domain)
}
