package vuln

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/cvss"
)

// NVDPage is the paging envelope of an NVD CVE API 2.0 response.
type NVDPage struct {
	ResultsPerPage int
	StartIndex     int
	TotalResults   int
	Timestamp      string
}

// nvdCVE is the subset of an NVD API 2.0 "cve" object Periscope reads.
type nvdCVE struct {
	ID                    string `json:"id"`
	SourceIdentifier      string `json:"sourceIdentifier"`
	Published             string `json:"published"`
	LastModified          string `json:"lastModified"`
	VulnStatus            string `json:"vulnStatus"`
	CISAExploitAdd        string `json:"cisaExploitAdd"`
	CISAActionDue         string `json:"cisaActionDue"`
	CISARequiredAction    string `json:"cisaRequiredAction"`
	CISAVulnerabilityName string `json:"cisaVulnerabilityName"`
	Descriptions          []struct {
		Lang  string `json:"lang"`
		Value string `json:"value"`
	} `json:"descriptions"`
	Metrics struct {
		V40 []nvdMetric `json:"cvssMetricV40"`
		V31 []nvdMetric `json:"cvssMetricV31"`
		V30 []nvdMetric `json:"cvssMetricV30"`
		V2  []nvdMetric `json:"cvssMetricV2"`
	} `json:"metrics"`
	Weaknesses []struct {
		Description []struct {
			Lang  string `json:"lang"`
			Value string `json:"value"`
		} `json:"description"`
	} `json:"weaknesses"`
	Configurations []struct {
		Nodes []struct {
			CPEMatch []struct {
				Vulnerable bool   `json:"vulnerable"`
				Criteria   string `json:"criteria"`
			} `json:"cpeMatch"`
		} `json:"nodes"`
	} `json:"configurations"`
	References []struct {
		URL    string   `json:"url"`
		Source string   `json:"source"`
		Tags   []string `json:"tags"`
	} `json:"references"`
}

type nvdMetric struct {
	Source   string `json:"source"`
	Type     string `json:"type"`
	CVSSData struct {
		VectorString string  `json:"vectorString"`
		BaseScore    float64 `json:"baseScore"`
	} `json:"cvssData"`
}

var (
	cveIDPattern = regexp.MustCompile(`^CVE-\d{4}-\d{4,}$`)
	cwePattern   = regexp.MustCompile(`^CWE-\d+$`)
	// advisoryIDRest is what may follow a database prefix in an id: at
	// least one digit or letter group, with '-', '.', ':' or '_' between.
	advisoryIDRest = regexp.MustCompile(`^[A-Za-z0-9]+([-._:][A-Za-z0-9]+)*$`)
)

// ReadNVD reads an NVD CVE API 2.0 response document (a single API page
// or a yearly / modified feed file), plain or gzip-compressed, and passes
// each CVE to fn. The document is decoded token by token, so a feed of
// hundreds of megabytes is never held in memory. A CVE that cannot be
// used is skipped with its position; malformed JSON (a truncated file)
// ends reading with an error that says where. name labels skips and
// errors.
func ReadNVD(r io.Reader, name string, fn func(Vulnerability) error) (NVDPage, Result, error) {
	var page NVDPage
	var res Result
	rc, err := decompress(r)
	if err != nil {
		return page, res, fmt.Errorf("read nvd %s: %w", name, err)
	}
	defer rc.Close()
	dec := json.NewDecoder(rc)
	fail := func(err error) (NVDPage, Result, error) {
		return page, res, fmt.Errorf("read nvd %s at byte %d: %w", name, dec.InputOffset(), err)
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
		case "resultsPerPage":
			err = dec.Decode(&page.ResultsPerPage)
		case "startIndex":
			err = dec.Decode(&page.StartIndex)
		case "totalResults":
			err = dec.Decode(&page.TotalResults)
		case "timestamp":
			err = dec.Decode(&page.Timestamp)
		case "vulnerabilities":
			err = readArray(dec, func(i int, raw json.RawMessage, off int64) error {
				var item struct {
					CVE *nvdCVE `json:"cve"`
				}
				pos := fmt.Sprintf("vulnerabilities[%d] (byte %d)", i, off)
				if err := json.Unmarshal(raw, &item); err != nil {
					res.skip(Skip{Source: name, Pos: pos, Reason: jsonError(raw, err).Error()})
					return nil
				}
				if item.CVE == nil {
					res.skip(Skip{Source: name, Pos: pos, Reason: `missing "cve" object`})
					return nil
				}
				v, err := item.CVE.vulnerability()
				if err != nil {
					res.skip(Skip{Source: name, Pos: pos, ID: item.CVE.ID, Reason: err.Error()})
					return nil
				}
				res.Records++
				return fn(v)
			})
		case "CVE_Items":
			err = errors.New("this is a legacy NVD JSON 1.1 feed (CVE_Items); only the CVE API 2.0 format is read")
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			var cb callbackError
			if errors.As(err, &cb) {
				return page, res, cb.err
			}
			return fail(err)
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return fail(err)
	}
	return page, res, nil
}

// callbackError marks an error returned by the caller's callback, which
// is passed back unwrapped.
type callbackError struct{ err error }

func (e callbackError) Error() string { return e.err.Error() }

// readArray reads a JSON array element by element, giving each element's
// index, raw bytes and starting offset to fn.
func readArray(dec *json.Decoder, fn func(i int, raw json.RawMessage, off int64) error) error {
	if err := expectDelim(dec, '['); err != nil {
		return err
	}
	for i := 0; dec.More(); i++ {
		off := dec.InputOffset()
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("element %d: %w", i, err)
		}
		if err := fn(i, raw, off); err != nil {
			return callbackError{err}
		}
	}
	return expectDelim(dec, ']')
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("truncated JSON: want %q: %w", want, io.ErrUnexpectedEOF)
		}
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, found %v", want, tok)
	}
	return nil
}

func objectKey(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	key, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("want object key, found %v", tok)
	}
	return key, nil
}

func (c *nvdCVE) vulnerability() (Vulnerability, error) {
	if !cveIDPattern.MatchString(c.ID) {
		return Vulnerability{}, fmt.Errorf("bad CVE id %q", c.ID)
	}
	v := Vulnerability{
		CVEID:              c.ID,
		Title:              c.CISAVulnerabilityName,
		VulnStatus:         c.VulnStatus,
		SourceIdentifier:   c.SourceIdentifier,
		CISARequiredAction: c.CISARequiredAction,
	}
	var err error
	if v.Published, err = parseNVDTime("published", c.Published); err != nil {
		return v, err
	}
	if v.LastModified, err = parseNVDTime("lastModified", c.LastModified); err != nil {
		return v, err
	}
	if v.CISAExploitAdd, err = parseNVDTime("cisaExploitAdd", c.CISAExploitAdd); err != nil {
		return v, err
	}
	if v.CISAActionDue, err = parseNVDTime("cisaActionDue", c.CISAActionDue); err != nil {
		return v, err
	}
	v.IsKEV = !v.CISAExploitAdd.IsZero()
	for _, d := range c.Descriptions {
		if d.Lang == "en" {
			v.Description = d.Value
			break
		}
	}
	if v.Description == "" && len(c.Descriptions) > 0 {
		v.Description = c.Descriptions[0].Value
	}

	v3 := c.Metrics.V31
	if len(v3) == 0 {
		v3 = c.Metrics.V30
	}
	severity := ""
	if m, ok := primaryMetric(v3); ok {
		vec, score, err := metricScore(m)
		if err != nil {
			return v, err
		}
		v.CVSSV3Vector, v.CVSSV3Score = vec.String(), score
		severity = cvss.Severity(score)
	}
	if m, ok := primaryMetric(c.Metrics.V40); ok {
		vec, score, err := metricScore(m)
		if err != nil {
			return v, err
		}
		v.CVSSV4Vector, v.CVSSV4Score = vec.String(), score
		if severity == "" {
			severity = cvss.Severity(score)
		}
	}
	if m, ok := primaryMetric(c.Metrics.V2); ok {
		vec, score, err := metricScore(m)
		if err != nil {
			return v, err
		}
		v.CVSSV2Vector, v.CVSSV2Score = vec.String(), score
		if severity == "" {
			severity = vec.Severity()
		}
	}
	v.Severity = severity

	seen := map[string]bool{}
	for _, w := range c.Weaknesses {
		for _, d := range w.Description {
			if cwePattern.MatchString(d.Value) && !seen[d.Value] {
				seen[d.Value] = true
				v.CWEs = append(v.CWEs, d.Value)
			}
		}
	}
	for _, cfg := range c.Configurations {
		for _, n := range cfg.Nodes {
			for _, m := range n.CPEMatch {
				if m.Vulnerable && m.Criteria != "" && !seen[m.Criteria] {
					seen[m.Criteria] = true
					v.CPEIDs = append(v.CPEIDs, m.Criteria)
				}
			}
		}
	}
	for _, r := range c.References {
		if r.URL != "" {
			v.References = append(v.References, Reference{URL: r.URL, Source: r.Source, Tags: r.Tags})
		}
	}
	return v, nil
}

// primaryMetric picks the "Primary" metric (NVD's own assessment) when
// there is one, else the first.
func primaryMetric(ms []nvdMetric) (nvdMetric, bool) {
	for _, m := range ms {
		if m.Type == "Primary" {
			return m, true
		}
	}
	if len(ms) > 0 {
		return ms[0], true
	}
	return nvdMetric{}, false
}

// metricScore validates the metric's vector and returns NVD's score for
// it, or the computed score when NVD gave none.
func metricScore(m nvdMetric) (cvss.Vector, float64, error) {
	vec, err := cvss.Parse(m.CVSSData.VectorString)
	if err != nil {
		return vec, 0, fmt.Errorf("invalid CVSS vector: %w", err)
	}
	score := m.CVSSData.BaseScore
	if score <= 0 || score > 10 {
		score = vec.BaseScore()
	}
	return vec, score, nil
}

// parseNVDTime accepts NVD's timestamp forms: "2022-07-11T13:15:08.503"
// (UTC, no zone), RFC 3339, and plain dates for the CISA fields.
func parseNVDTime(field, s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", time.RFC3339Nano, "2006-01-02T15:04Z07:00", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("bad %q timestamp %q", field, s)
}
