package brandstore

import (
	"context"
	"fmt"

	"github.com/periscope-oss/periscope/internal/store"
)

// FindingRow is a stored finding as the alert rules read it.
type FindingRow struct {
	ID             int64
	OrganizationID string
	AccountID      string
	Kind           string
	Domain         string
	BaseDomain     string
	Reason         string
	Score          int
	DateAdded      int64
}

// selectFindingsAfter reads findings in id order, leaving out those its
// account's listings hide (%s: the claim conditions of both names).
const selectFindingsAfter = `SELECT id, organization_id, account_id, kind, domain, base_domain, reason, score, date_added
	FROM brand_findings WHERE id > ?%s ORDER BY id LIMIT ?`

// FindingsAfter returns up to limit findings with ids above after, in id
// order (the alert rules' feed of new findings), none whose look-alike or
// base domain lies under another account's domain claim than its own.
func (s *Store) FindingsAfter(ctx context.Context, after int64, limit int) ([]FindingRow, error) {
	d := s.st.Dialect()
	claims := " AND " + store.NotClaimedByOther(d, "brand_findings.domain", "brand_findings.account_id") +
		" AND " + store.NotClaimedByOther(d, "brand_findings.base_domain", "brand_findings.account_id")
	rows, err := s.query(ctx, fmt.Sprintf(selectFindingsAfter, claims), after, limit)
	if err != nil {
		return nil, fmt.Errorf("findings after %d: %w", after, err)
	}
	defer rows.Close()
	var out []FindingRow
	for rows.Next() {
		var f FindingRow
		if err := rows.Scan(&f.ID, &f.OrganizationID, &f.AccountID, &f.Kind, &f.Domain, &f.BaseDomain, &f.Reason, &f.Score, &f.DateAdded); err != nil {
			return nil, fmt.Errorf("findings after %d: %w", after, err)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// ExpiringCert is a certificate covering an organization's domain.
type ExpiringCert struct {
	OrganizationID string
	AccountID      string
	Domain         string // the name it was linked to the organization by
	SHA256         string
	SubjectCN      string
	NotAfter       int64
}

// The newest certificate of each subject only: a certificate renewed
// before it expires (a later one of the same subject linked to the same
// organization) is not news.
const selectExpiringCerts = `SELECT oc.organization_id, oc.account_id, oc.domain, c.sha256, c.subject_cn, c.not_after
	FROM org_certificates oc JOIN certificates c ON c.id = oc.certificate_id
	WHERE c.not_after >= ? AND c.not_after <= ? AND NOT c.is_precert
	AND NOT EXISTS (SELECT 1 FROM org_certificates o2 JOIN certificates c2 ON c2.id = o2.certificate_id
		WHERE o2.organization_id = oc.organization_id AND c2.subject_cn = c.subject_cn AND c2.not_after > c.not_after)
	ORDER BY oc.organization_id, c.not_after`

// ExpiringCertificates lists the organizations' certificates expiring
// between from and to (Unix seconds), the newest of each subject only.
func (s *Store) ExpiringCertificates(ctx context.Context, from, to int64) ([]ExpiringCert, error) {
	rows, err := s.query(ctx, selectExpiringCerts, from, to)
	if err != nil {
		return nil, fmt.Errorf("expiring certificates: %w", err)
	}
	defer rows.Close()
	var out []ExpiringCert
	for rows.Next() {
		var c ExpiringCert
		if err := rows.Scan(&c.OrganizationID, &c.AccountID, &c.Domain, &c.SHA256, &c.SubjectCN, &c.NotAfter); err != nil {
			return nil, fmt.Errorf("expiring certificates: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
