package vulnstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
)

// AlertableCPE is a part:vendor:product key (CPEKey) that a known
// exploited (KEV) or critical CVE names in its CPE match criteria: what
// the new_vulnerability alert rule matches hosts' products against.
type AlertableCPE struct {
	Key    string
	VulnID int64
	CVEID  string
	KEV    bool
}

const selectAlertableCPEs = `SELECT c.cpe_key, v.id, v.cve_id, v.is_kev FROM vulns v JOIN vuln_cpes c ON c.vuln_id = v.id
	WHERE v.is_kev = 1 OR v.severity = 'critical'`

// AlertableCPEs lists the CPE keys of every KEV-listed or critical CVE.
func (s *Store) AlertableCPEs(ctx context.Context) ([]AlertableCPE, error) {
	rows, err := s.query(ctx, selectAlertableCPEs)
	if err != nil {
		return nil, fmt.Errorf("alertable cpes: %w", err)
	}
	defer rows.Close()
	var out []AlertableCPE
	for rows.Next() {
		var c AlertableCPE
		var kev int
		if err := rows.Scan(&c.Key, &c.VulnID, &c.CVEID, &kev); err != nil {
			return nil, fmt.Errorf("alertable cpes: %w", err)
		}
		c.KEV = kev == 1
		out = append(out, c)
	}
	return out, rows.Err()
}

const selectAlertableSignature = `SELECT COUNT(*), COALESCE(SUM(is_kev), 0), COALESCE(SUM(last_modified % 1000003), 0), COALESCE(MAX(id), 0)
	FROM vulns WHERE is_kev = 1 OR severity = 'critical'`

// AlertableSignature summarises the KEV-listed and critical CVEs (how
// many, how many KEV, their modification times and highest id): when it
// is unchanged, AlertableCPEs is too, but for a CVE's CPEs replaced with
// the same modification time, which NVD does not do.
func (s *Store) AlertableSignature(ctx context.Context) (string, error) {
	var n, kev, mod, maxID int64
	if err := s.queryRow(ctx, selectAlertableSignature).Scan(&n, &kev, &mod, &maxID); err != nil {
		return "", fmt.Errorf("alertable signature: %w", err)
	}
	return strconv.FormatInt(n, 10) + ":" + strconv.FormatInt(kev, 10) + ":" + strconv.FormatInt(mod, 10) + ":" + strconv.FormatInt(maxID, 10), nil
}

// AlertDetail is what an alert tells of a CVE: its scores, KEV listing and
// the CPE match criteria it names (full CPE strings, with versions).
type AlertDetail struct {
	CVEID        string
	Title        string
	CVSS         float64 // v3, else v4, else v2 base score; 0 when none
	Severity     string
	KEV          bool
	KEVDateAdded int64 // Unix seconds, 0 when not listed
	CPEs         []string
}

const selectAlertDetail = `SELECT v.cve_id, v.title, v.severity, v.is_kev, v.doc, COALESCE(k.date_added, 0)
	FROM vulns v LEFT JOIN vuln_kev k ON k.cve_id = v.cve_id WHERE v.id = ?`

// AlertDetail returns the details of the vulnerability with internal id.
func (s *Store) AlertDetail(ctx context.Context, id int64) (AlertDetail, error) {
	var d AlertDetail
	var kev int
	var doc []byte
	err := s.queryRow(ctx, selectAlertDetail, id).Scan(&d.CVEID, &d.Title, &d.Severity, &kev, &doc, &d.KEVDateAdded)
	if err == sql.ErrNoRows {
		return d, fmt.Errorf("vulnerability %d: not found", id)
	}
	if err != nil {
		return d, fmt.Errorf("vulnerability %d: %w", id, err)
	}
	d.KEV = kev == 1
	var nd nvdDoc
	if len(doc) > 0 {
		if err := json.Unmarshal(doc, &nd); err != nil {
			return d, fmt.Errorf("vulnerability %s: %w", d.CVEID, err)
		}
	}
	switch {
	case nd.CVSSV3Score > 0:
		d.CVSS = nd.CVSSV3Score
	case nd.CVSSV4Score > 0:
		d.CVSS = nd.CVSSV4Score
	default:
		d.CVSS = nd.CVSSV2Score
	}
	d.CPEs = nd.CPEIDs
	return d, nil
}
