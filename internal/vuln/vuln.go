// Package vuln holds Periscope's vulnerability-intelligence records and
// the streaming parsers that build them from public feeds: OSV (any
// ecosystem, including GitHub advisories in OSV form), the NVD CVE API 2.0,
// the CISA KEV catalog, FIRST EPSS scores and the Exploit-DB index.
//
// Parsing is kept apart from fetching: every parser reads an io.Reader (or
// a local file, directory or archive) and hands records to a callback one
// at a time, so feeds of any size are never held in memory whole. A bad
// record is skipped and reported in the Result with its position and the
// reason; the rest of the input is still read. Fetch (fetch.go) and
// NVDClient (nvdapi.go) do the network side.
package vuln

import (
	"encoding/json"
	"fmt"
	"time"
)

// Reference is a link attached to a vulnerability.
type Reference struct {
	URL    string   `json:"url"`
	Source string   `json:"source"`
	Tags   []string `json:"tags"`
}

// Vulnerability is a CVE record, built from NVD data and enriched with
// EPSS, KEV and exploit information.
type Vulnerability struct {
	CVEID              string      `json:"cve_id"`
	Title              string      `json:"title"`
	Description        string      `json:"description"`
	Published          time.Time   `json:"published_date"`
	LastModified       time.Time   `json:"last_modified_date"`
	CVSSV3Score        float64     `json:"cvss_v3_score"`
	CVSSV3Vector       string      `json:"cvss_v3_vector"`
	CVSSV2Score        float64     `json:"cvss_v2_score"`
	CVSSV2Vector       string      `json:"cvss_v2_vector"`
	Severity           string      `json:"severity"`
	CWEs               []string    `json:"cwes"`
	CPEIDs             []string    `json:"cpe_ids"`
	EPSSScore          float64     `json:"epss_score"`
	EPSSPercentile     float64     `json:"epss_percentile"`
	IsExploitAvailable bool        `json:"is_exploit_available"`
	IsKEV              bool        `json:"is_kev"`
	VulnStatus         string      `json:"vuln_status"`
	SourceIdentifier   string      `json:"source_identifier"`
	CISAExploitAdd     time.Time   `json:"cisa_exploit_add"`
	CISAActionDue      time.Time   `json:"cisa_action_due"`
	CISARequiredAction string      `json:"cisa_required_action"`
	References         []Reference `json:"references"`
	// Advisories lists the ids of the package advisories that alias this
	// CVE (GHSA, GO, PYSEC...), filled in by the store.
	Advisories []string `json:"-"`

	// CVSS v4.0 is kept for severity and later use; docs/api.md "Vulnerability intelligence" and internal/api/openapi/vuln.json has no
	// field for it yet, so it is not encoded.
	CVSSV4Score  float64 `json:"-"`
	CVSSV4Vector string  `json:"-"`
}

// MarshalJSON encodes the record with empty lists rather than null.
func (v Vulnerability) MarshalJSON() ([]byte, error) {
	type plain Vulnerability
	p := plain(v)
	p.CWEs = nonNil(p.CWEs)
	p.CPEIDs = nonNil(p.CPEIDs)
	refs := make([]Reference, len(p.References))
	for i, r := range p.References {
		r.Tags = nonNil(r.Tags)
		refs[i] = r
	}
	p.References = refs
	return json.Marshal(p)
}

// Exploit is a public exploit from the Exploit-DB index.
type Exploit struct {
	EDBID int `json:"edb_id"`
	// CVEID is the first CVE named in Codes, if any; CVEIDs has them all.
	CVEID         string    `json:"cve_id"`
	Title         string    `json:"title"`
	Author        string    `json:"author"`
	Type          string    `json:"type"`
	Platform      string    `json:"platform"`
	DatePublished time.Time `json:"date_published"`
	DateAdded     time.Time `json:"date_added"`
	DateUpdated   time.Time `json:"date_updated"`
	Verified      bool      `json:"verified"`
	// Codes is Exploit-DB's raw, semicolon-separated identifier list
	// (e.g. "CVE-2021-44228;OSVDB-123").
	Codes     string `json:"codes"`
	SourceURL string `json:"source_url"`
	// File, Aliases, ApplicationURL and ScreenshotURL are Exploit-DB's
	// file, aliases, application_url and screenshot_url columns (empty
	// when the input lacks them), which FullHunt's records carry.
	File           string `json:"file_path,omitempty"`
	Aliases        string `json:"aliases,omitempty"`
	ApplicationURL string `json:"application_url,omitempty"`
	ScreenshotURL  string `json:"screenshot_url,omitempty"`

	CVEIDs []string `json:"-"`
	Port   int      `json:"-"`
}

// Range is an OSV affected range: a versioning scheme and its events.
type Range struct {
	Type   string  `json:"type"`
	Repo   string  `json:"repo,omitempty"`
	Events []Event `json:"events"`
}

// Event is one OSV range event; exactly one field is set.
type Event struct {
	Introduced   string `json:"introduced,omitempty"`
	Fixed        string `json:"fixed,omitempty"`
	LastAffected string `json:"last_affected,omitempty"`
	Limit        string `json:"limit,omitempty"`
}

// Affected is one affected package of an advisory.
type Affected struct {
	Ecosystem string   `json:"ecosystem"`
	Name      string   `json:"name"`
	PURL      string   `json:"purl"`
	Ranges    []Range  `json:"ranges"`
	Versions  []string `json:"versions"`
}

// Advisory is a package advisory (OSV record) from any ecosystem database.
type Advisory struct {
	ID string `json:"id"`
	// Aliases links the advisory to other ids for the same issue, such as
	// CVE ids or a GHSA id.
	Aliases    []string   `json:"aliases"`
	Source     string     `json:"source"`
	Summary    string     `json:"summary"`
	Details    string     `json:"details"`
	Severity   string     `json:"severity"`
	Published  time.Time  `json:"published"`
	Modified   time.Time  `json:"modified"`
	Affected   []Affected `json:"affected"`
	References []string   `json:"references"`

	// CVSSVector and CVSSScore are the vector the severity was derived
	// from and its computed score (0 when the record has no usable vector).
	CVSSVector string    `json:"-"`
	CVSSScore  float64   `json:"-"`
	Withdrawn  time.Time `json:"-"`
}

// MarshalJSON encodes the advisory with empty lists rather than null.
func (a Advisory) MarshalJSON() ([]byte, error) {
	type plain Advisory
	p := plain(a)
	p.Aliases = nonNil(p.Aliases)
	p.References = nonNil(p.References)
	aff := make([]Affected, len(p.Affected))
	for i, x := range p.Affected {
		x.Versions = nonNil(x.Versions)
		rs := make([]Range, len(x.Ranges))
		for j, r := range x.Ranges {
			if r.Events == nil {
				r.Events = []Event{}
			}
			rs[j] = r
		}
		x.Ranges = rs
		aff[i] = x
	}
	p.Affected = aff
	return json.Marshal(p)
}

// KEVEntry is one entry of CISA's Known Exploited Vulnerabilities catalog.
type KEVEntry struct {
	CVEID                      string    `json:"cve_id"`
	VendorProject              string    `json:"vendor_project"`
	Product                    string    `json:"product"`
	VulnerabilityName          string    `json:"vulnerability_name"`
	DateAdded                  time.Time `json:"date_added"`
	ShortDescription           string    `json:"short_description"`
	RequiredAction             string    `json:"required_action"`
	DueDate                    time.Time `json:"due_date"`
	KnownRansomwareCampaignUse string    `json:"known_ransomware_campaign_use"`
	Notes                      string    `json:"notes"`
	CWEs                       []string  `json:"cwes"`
}

// MarshalJSON encodes the entry with an empty CWE list rather than null.
func (k KEVEntry) MarshalJSON() ([]byte, error) {
	type plain KEVEntry
	p := plain(k)
	p.CWEs = nonNil(p.CWEs)
	return json.Marshal(p)
}

// EPSSScore is one row of a FIRST EPSS scores file.
type EPSSScore struct {
	CVEID        string    `json:"cve_id"`
	EPSS         float64   `json:"epss"`
	Percentile   float64   `json:"percentile"`
	ModelVersion string    `json:"model_version"`
	ScoreDate    time.Time `json:"score_date"`
}

// Skip describes a record a parser rejected.
type Skip struct {
	// Source names the input: a file name, an archive entry, a URL.
	Source string
	// Pos locates the record in Source, e.g. "line 12" or "record 3 (byte 4096)".
	Pos string
	// ID is the record's identifier when it could be read.
	ID     string
	Reason string
}

func (s Skip) String() string {
	id := ""
	if s.ID != "" {
		id = " " + s.ID
	}
	return fmt.Sprintf("%s: %s:%s %s", s.Source, s.Pos, id, s.Reason)
}

// maxSkips bounds how many skips a Result keeps; hostile input must not
// grow memory without limit. Skipped still counts them all.
const maxSkips = 1000

// Result reports what a parser did.
type Result struct {
	Records int    // records handed to the callback
	Skipped int    // records rejected
	Skips   []Skip // the first maxSkips rejections, in input order
}

func (r *Result) skip(s Skip) {
	r.Skipped++
	if len(r.Skips) < maxSkips {
		r.Skips = append(r.Skips, s)
	}
}

func (r *Result) add(o Result) {
	r.Records += o.Records
	for _, s := range o.Skips {
		r.skip(s)
	}
	r.Skipped += o.Skipped - len(o.Skips)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
