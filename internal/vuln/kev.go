package vuln

import (
	"bufio"
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

// ReadKEV reads the CISA Known Exploited Vulnerabilities catalog in
// either of the forms CISA publishes, known_exploited_vulnerabilities.json
// or known_exploited_vulnerabilities.csv (plain or gzipped; told apart by
// the first character), streaming its entries to fn. Entries with a bad
// CVE id or date are skipped. The CSV form has no catalog header, so the
// returned KEVCatalog is empty for it.
func ReadKEV(r io.Reader, name string, fn func(KEVEntry) error) (KEVCatalog, Result, error) {
	var cat KEVCatalog
	var res Result
	rc, err := decompress(r)
	if err != nil {
		return cat, res, fmt.Errorf("read kev %s: %w", name, err)
	}
	defer rc.Close()
	br := bufio.NewReader(rc)
	if c, err := peekNonSpace(br); err == nil && c != '{' {
		res, err := readKEVCSV(br, name, fn)
		return cat, res, err
	}
	dec := json.NewDecoder(br)
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
	added, err := time.Parse(time.DateOnly, strings.TrimSpace(r.DateAdded))
	if err != nil {
		return KEVEntry{}, fmt.Errorf("bad dateAdded %q: want YYYY-MM-DD", r.DateAdded)
	}
	var due time.Time
	if r.DueDate != "" {
		if due, err = time.Parse(time.DateOnly, r.DueDate); err != nil {
			return KEVEntry{}, fmt.Errorf("bad dueDate %q: want YYYY-MM-DD", r.DueDate)
		}
	}
	// Text is trimmed, as the CSV form's cells are, so both forms store
	// the same entry.
	return KEVEntry{
		CVEID:                      id,
		VendorProject:              strings.TrimSpace(r.VendorProject),
		Product:                    strings.TrimSpace(r.Product),
		VulnerabilityName:          strings.TrimSpace(r.VulnerabilityName),
		DateAdded:                  added,
		ShortDescription:           strings.TrimSpace(r.ShortDescription),
		RequiredAction:             strings.TrimSpace(r.RequiredAction),
		DueDate:                    due,
		KnownRansomwareCampaignUse: strings.TrimSpace(r.KnownRansomwareCampaignUse),
		Notes:                      strings.TrimSpace(r.Notes),
		CWEs:                       r.CWEs,
	}, nil
}

// readKEVCSV reads the CSV form of the catalog: one row per entry, the
// JSON form's member names as the header, the CWEs comma-separated in one
// column.
func readKEVCSV(r io.Reader, name string, fn func(KEVEntry) error) (Result, error) {
	var res Result
	t, err := newCSVTable(r, name, "cveid", "dateadded")
	if err != nil {
		return res, fmt.Errorf("read kev: %w", err)
	}
	for {
		rec, line, err := t.next()
		if errors.Is(err, io.EOF) {
			return res, nil
		}
		pos := fmt.Sprintf("line %d", line)
		if err != nil {
			res.skip(Skip{Source: name, Pos: pos, Reason: err.Error()})
			continue
		}
		kr := kevRecord{
			CVEID: t.get(rec, "cveid"), VendorProject: t.get(rec, "vendorproject"), Product: t.get(rec, "product"),
			VulnerabilityName: t.get(rec, "vulnerabilityname"), DateAdded: t.get(rec, "dateadded"),
			ShortDescription: t.get(rec, "shortdescription"), RequiredAction: t.get(rec, "requiredaction"),
			DueDate: t.get(rec, "duedate"), KnownRansomwareCampaignUse: t.get(rec, "knownransomwarecampaignuse"),
			Notes: t.get(rec, "notes"),
		}
		for _, c := range strings.Split(t.get(rec, "cwes"), ",") {
			if c = strings.TrimSpace(c); c != "" {
				kr.CWEs = append(kr.CWEs, c)
			}
		}
		e, err := kr.entry()
		if err != nil {
			res.skip(Skip{Source: name, Pos: pos, ID: kr.CVEID, Reason: err.Error()})
			continue
		}
		res.Records++
		if err := fn(e); err != nil {
			return res, err
		}
	}
}

// peekNonSpace discards leading white space and a byte-order mark and
// returns the next byte without consuming it.
func peekNonSpace(br *bufio.Reader) (byte, error) {
	for {
		if b, err := br.Peek(3); err == nil && string(b) == "\ufeff" {
			br.Discard(3)
			continue
		}
		c, err := br.ReadByte()
		if err != nil {
			return 0, err
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c, br.UnreadByte()
	}
}
