package whoislookup

import (
	"context"
	"errors"

	"github.com/periscope-oss/periscope/internal/whoisstore"
)

// Stored reads stored WHOIS records and never asks a registry: the
// whois_data beside domain listings (domain details, subdomains, the OEM
// attack-surface search), which must answer at once.
type Stored struct {
	Store *whoisstore.Store
}

// StoredWhois returns the whois_data (the shape of /oem/whois/lookup's)
// stored for the registered domain of name (example.com for
// shop.example.com), whatever its age, or nil when none is stored or name
// is not under a public suffix.
func (s Stored) StoredWhois(ctx context.Context, name string) (*Data, error) {
	domain, _, err := Normalize(name)
	if err != nil {
		// Not a registrable name (an internal zone, a bare suffix): there
		// is no WHOIS record to show, which is not the caller's error.
		return nil, nil
	}
	rec, err := s.Store.Get(ctx, domain)
	if errors.Is(err, whoisstore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &view(rec, true, false).WhoisData, nil
}

// Search returns the stored registered records matching f (see
// whoisstore.Filter) as whois_data, and how many match.
func (s Stored) Search(ctx context.Context, f whoisstore.Filter) ([]Data, int, error) {
	recs, total, err := s.Store.Search(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Data, 0, len(recs))
	for _, r := range recs {
		out = append(out, view(r, true, false).WhoisData)
	}
	return out, total, nil
}
