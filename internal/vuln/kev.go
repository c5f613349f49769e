package vuln

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// KEVCatalog is the header of the CISA KEV catalog.
type KEVCatalog struct {
	Title          string
	CatalogVersion string
	DateReleased   time.Time
	Count          int
}

type kevRecord struct {
	CVEID                      string   `json:"cveID"`
	VendorProject              string   `json:"vendorProject"`
	Product                    string   `json:"product"`
	VulnerabilityName          string   `json:"vulnerabilityName"`
	DateAdded                  string   `json:"dateAdded"`
	ShortDescription           string   `json:"shortDescription"`
	RequiredAction             string   `json:"requiredAction"`
	DueDate                    string   `json:"dueDate"`
	KnownRansomwareCampaignUse string   `json:"knownRansomwareCampaignUse"`
	Notes                      string   `json:"notes"`
	CWEs                       []string `json:"cwes"`
}

// ReadKEV reads the CISA Known Exploited Vulnerabilities catalog
// (known_exploited_vulnerabilities.json, plain or gzipped), streaming its
// entries to fn. Entries with a bad CVE id or date are skipped.
func ReadKEV(r io.Reader, name string, fn func(KEVEntry) error) (KEVCatalog, Result, error) {
	var cat KEVCatalog
	var res Result
	rc, err := decompress(r)
	if err != nil {
		return cat, res, fmt.Errorf("read kev %s: %w", name, err)
	}
	defer rc.Close()
	dec := json.NewDecoder(rc)
	fail := func(err error) (KEVCatalog, Result, error) {
		return cat, res, fmt.Errorf("read kev %s at byte %d: %w", name, dec.InputOffset(), err)
	}
	if err := expectDelim(dec, '{'); err != nil {
		return fail(err)
	}
	for dec.More() {
		key, err := objectKey(dec)
		if err != nil {
			return fail(err)
		}
		switch key {
		case "title":
			err = dec.Decode(&cat.Title)
		case "catalogVersion":
			err = dec.Decode(&cat.CatalogVersion)
		case "count":
			err = dec.Decode(&cat.Count)
		case "dateReleased":
			var s string
			if err = dec.Decode(&s); err == nil {
				cat.DateReleased, err = parseNVDTime("dateReleased", s)
			}
		case "vulnerabilities":
			err = readArray(dec, func(i int, raw json.RawMessage, off int64) error {
				pos := fmt.Sprintf("vulnerabilities[%d] (byte %d)", i, off)
				var rec kevRecord
				if err := json.Unmarshal(raw, &rec); err != nil {
					res.skip(Skip{Source: name, Pos: pos, Reason: jsonError(raw, err).Error()})
					return nil
				}
				e, err := rec.entry()
				if err != nil {
					res.skip(Skip{Source: name, Pos: pos, ID: rec.CVEID, Reason: err.Error()})
					return nil
				}
				res.Records++
				return fn(e)
			})
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			var cb callbackError
			if errors.As(err, &cb) {
				return cat, res, cb.err
			}
			return fail(err)
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return fail(err)
	}
	return cat, res, nil
}

func (r kevRecord) entry() (KEVEntry, error) {
	id := strings.TrimSpace(r.CVEID)
	if !cveIDPattern.MatchString(id) {
		return KEVEntry{}, fmt.Errorf("bad CVE id %q", r.CVEID)
	}
	added, err := time.Parse(time.DateOnly, r.DateAdded)
	if err != nil {
		return KEVEntry{}, fmt.Errorf("bad dateAdded %q: want YYYY-MM-DD", r.DateAdded)
	}
	var due time.Time
	if r.DueDate != "" {
		if due, err = time.Parse(time.DateOnly, r.DueDate); err != nil {
			return KEVEntry{}, fmt.Errorf("bad dueDate %q: want YYYY-MM-DD", r.DueDate)
		}
	}
	return KEVEntry{
		CVEID:                      id,
		VendorProject:              r.VendorProject,
		Product:                    r.Product,
		VulnerabilityName:          r.VulnerabilityName,
		DateAdded:                  added,
		ShortDescription:           r.ShortDescription,
		RequiredAction:             r.RequiredAction,
		DueDate:                    due,
		KnownRansomwareCampaignUse: r.KnownRansomwareCampaignUse,
		Notes:                      r.Notes,
		CWEs:                       r.CWEs,
	}, nil
}
