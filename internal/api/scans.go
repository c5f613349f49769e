package api

import (
	"context"
	"net/http"

	"github.com/periscope-oss/periscope/internal/activescan"
	"github.com/periscope-oss/periscope/internal/asset"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/scanstore"
)

// ScanService is active monitoring as the API uses it
// (*activescan.Service).
type ScanService interface {
	Token(ctx context.Context, orgID string) (string, error)
	Assets(ctx context.Context, orgID string) ([]scanstore.Asset, error)
	VerifyDomain(ctx context.Context, orgID, domain string) error
	ParseTarget(typ, target string) (activescan.Target, error)
	RequestScan(ctx context.Context, accountID, origin string, t activescan.Target, charge periscope.Pool) (scanstore.Scan, bool, error)
	Scan(ctx context.Context, accountID, id string) (scanstore.Scan, error)
}

// assetStateJSON is an organization's asset with whether active monitoring
// may probe it.
type assetStateJSON struct {
	Type     string `json:"type"`
	Value    string `json:"value"`
	Verified bool   `json:"verified"`
}

// addVerification adds the organization's verification token and each
// asset's verified flag (when active monitoring is on).
func (s *Server) addVerification(ctx context.Context, o *orgDetailJSON) error {
	if s.scans == nil {
		return nil
	}
	tok, err := s.scans.Token(ctx, o.ID)
	if err != nil {
		return err
	}
	assets, err := s.scans.Assets(ctx, o.ID)
	if err != nil {
		return err
	}
	o.VerificationToken = tok
	o.Assets = make([]assetStateJSON, len(assets))
	for i, a := range assets {
		o.Assets[i] = assetStateJSON{Type: a.Kind, Value: a.Value, Verified: a.Authorized}
	}
	return nil
}

var errMonitorOff = periscope.Errorf(periscope.EUnavailable, "Active monitoring is not enabled on this server.")

// handleVerifyDomain answers POST /enterprise/organizations/{org_id}/domains/verify:
// it looks for the TXT record periscope-verification=<token> at the domain.
func (s *Server) handleVerifyDomain(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Domain string `json:"domain"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	o, err := s.orgs.Organization(r.Context(), principalOf(r).Account.ID, r.PathValue("org_id"))
	if err != nil {
		return err
	}
	if in.Domain == "" {
		return periscope.Errorf(periscope.EMissing, "domain is required.")
	}
	if s.scans == nil {
		return errMonitorOff
	}
	d, err := asset.Domain(in.Domain)
	if err != nil {
		return err
	}
	if err := s.scans.VerifyDomain(r.Context(), o.ID, d); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "success", "domain": d, "verified": true})
	return nil
}

type onDemandResponse struct {
	Status       int    `json:"status"`
	Message      string `json:"message"`
	Target       string `json:"target"`
	ScanID       string `json:"scan_id"`
	Deduplicated bool   `json:"deduplicated"`
}

// handleOnDemandScan answers GET /enterprise/on-demand-scans?target=: a scan
// of a domain, IP or CIDR of the caller's organizations; a repeat within
// the window returns the same scan without charge.
func (s *Server) handleOnDemandScan(w http.ResponseWriter, r *http.Request) error {
	sc, _, msg, dedup, err := s.enterpriseScan(w, r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, onDemandResponse{Status: http.StatusOK, Message: msg, Target: sc.Target, ScanID: sc.ID, Deduplicated: dedup})
	return nil
}

// handleAttackSurfaceScan answers GET /attack-surface/on-demand-scan?target=,
// FullHunt's other spelling of the enterprise on-demand scan: the same
// rules and the same scan (a repeat of either returns the other's), in
// FullHunt's answer {status, message, target, type, scan_id, timestamp};
// type is the target's (domain, ip_range or host) and deduplicated is ours.
func (s *Server) handleAttackSurfaceScan(w http.ResponseWriter, r *http.Request) error {
	sc, t, msg, dedup, err := s.enterpriseScan(w, r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": http.StatusOK, "message": msg, "target": sc.Target, "type": t.Type,
		"scan_id": sc.ID, "timestamp": s.now().Unix(), "deduplicated": dedup})
	return nil
}

// enterpriseScan requests the scan of an enterprise on-demand route: the
// target must be exactly a domain, IP or CIDR of the caller's
// organizations; a repeat within the window is the same scan, not charged.
func (s *Server) enterpriseScan(w http.ResponseWriter, r *http.Request) (sc scanstore.Scan, t activescan.Target, msg string, dedup bool, err error) {
	target := r.URL.Query().Get("target")
	if target == "" {
		return sc, t, "", false, periscope.Errorf(periscope.EMissing, "target is required: a domain, IP address or CIDR of one of your organizations.")
	}
	if s.scans == nil {
		return sc, t, "", false, errMonitorOff
	}
	if t, err = s.scans.ParseTarget("", target); err != nil {
		return sc, t, "", false, err
	}
	if sc, dedup, err = s.scans.RequestScan(r.Context(), principalOf(r).Account.ID, scanstore.OriginOnDemand, t, chargePool(w)); err != nil {
		return sc, t, "", false, err
	}
	msg = "Scan queued."
	if dedup {
		msg = "A scan of this target was requested in the last 24 hours; returning it (no credit charged)."
	} else {
		chargedWithWork(w)
	}
	return sc, t, msg, dedup, nil
}

// handleOEMOnDemandScan answers POST /oem/on-demand-scan.
func (s *Server) handleOEMOnDemandScan(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Type   *string `json:"type"`
		Target *string `json:"target"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	if in.Type == nil || in.Target == nil {
		return periscope.Errorf(periscope.EMissing, "type (domain, ip_range or host) and target are required.")
	}
	switch *in.Type {
	case scanstore.TargetDomain, scanstore.TargetIPRange, scanstore.TargetHost:
	default:
		return periscope.Errorf(periscope.EInvalid, "type must be domain, ip_range or host.")
	}
	if s.scans == nil {
		return errMonitorOff
	}
	t, err := s.scans.ParseTarget(*in.Type, *in.Target)
	if err != nil {
		return err
	}
	sc, dedup, err := s.scans.RequestScan(r.Context(), principalOf(r).Account.ID, scanstore.OriginOEM, t, chargePool(w))
	if err != nil {
		return err
	}
	msg := "Scan queued."
	if dedup {
		msg = "A scan of this target was requested in the last 24 hours; returning it (no credit charged)."
	} else {
		chargedWithWork(w)
	}
	writeJSON(w, http.StatusOK, map[string]any{"response": map[string]any{
		"status": "success", "message": msg, "target": sc.Target, "type": t.Type, "scan_id": sc.ID,
		"timestamp": s.now().Unix()}})
	return nil
}

// handleOEMScanStatus answers POST /oem/on-demand-scan/scan-status.
func (s *Server) handleOEMScanStatus(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		ScanID *string `json:"scan_id"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	if in.ScanID == nil || *in.ScanID == "" {
		return periscope.Errorf(periscope.EMissing, "scan_id is required.")
	}
	if s.scans == nil {
		return errMonitorOff
	}
	sc, err := s.scans.Scan(r.Context(), principalOf(r).Account.ID, *in.ScanID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"response": map[string]any{
		"status": "success", "scan_info": scanInfo(sc), "timestamp": s.now().Unix()}})
	return nil
}

// handleScanStatus answers GET /enterprise/on-demand-scans/scan-status?scan_id=:
// the progress of a scan the caller's account started (on demand, OEM or
// scheduled), in the enterprise routes' flat shape. Free.
func (s *Server) handleScanStatus(w http.ResponseWriter, r *http.Request) error {
	id := r.URL.Query().Get("scan_id")
	if id == "" {
		return periscope.Errorf(periscope.EMissing, "scan_id is required: the scan_id the on-demand scan answered.")
	}
	if len(id) > 64 {
		return periscope.Errorf(periscope.EInvalid, "scan_id is at most 64 characters.")
	}
	if s.scans == nil {
		return errMonitorOff
	}
	sc, err := s.scans.Scan(r.Context(), principalOf(r).Account.ID, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": http.StatusOK, "message": "", "scan_info": scanInfo(sc)})
	return nil
}

// scanInfo is a scan's status as both status routes answer it.
func scanInfo(sc scanstore.Scan) map[string]any {
	return map[string]any{"scan_id": sc.ID, "target": sc.Target, "status": sc.Status,
		"created_at": epochOrNil(sc.CreatedAt), "completed_at": epochOrNil(sc.CompletedAt),
		// Progress beyond FullHunt's fields: what the scan has done so far.
		"counts": map[string]int{"names": sc.Counts.Names, "addresses": sc.Counts.Addresses,
			"open_ports": sc.Counts.OpenPorts, "hosts_stored": sc.Counts.HostsStored,
			"skipped_private": sc.Counts.SkippedPrivate}}
}

// epochOrNil is Unix seconds, or null for "not yet".
func epochOrNil(t int64) any {
	if t == 0 {
		return nil
	}
	return t
}
