// Package alerts turns the change ledger and other findings about
// organizations' assets into deduplicated alerts, and delivers them to
// webhook endpoints, signed as Standard Webhooks specifies.
//
// Rules (this file) are pure: a ledger row, a certificate, an expiry date, a
// brand finding or a vulnerability in, an alert out. The Worker feeds them
// from the ledger incrementally; the Dispatcher delivers the outbox.
package alerts

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/ledger"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// Alert types.
const (
	TypeNewSubdomain     = "new_subdomain_discovered"
	TypeNewOpenPort      = "new_open_port"
	TypePortClosed       = "port_closed"
	TypeDNSChanged       = "dns_record_changed"
	TypeCertExpiring     = "tls_cert_expiring"
	TypeCertChanged      = "tls_cert_changed"
	TypeHTTPChanged      = "http_changed"
	TypeDomainExpiring   = "domain_expiring"
	TypeNewTyposquat     = "new_typosquat"
	TypeNewPhishing      = "new_phishing"
	TypeNewVulnerability = "new_vulnerability"
	TypeTest             = "webhook_test"
)

// Types lists the alert types a rule produces.
var Types = []string{TypeNewSubdomain, TypeNewOpenPort, TypePortClosed, TypeDNSChanged, TypeCertExpiring, TypeCertChanged,
	TypeHTTPChanged, TypeDomainExpiring, TypeNewTyposquat, TypeNewPhishing, TypeNewVulnerability, TypeCompromisedCredential}

// Severities, lowest first.
var Severities = []string{"info", "low", "medium", "high", "critical"}

// SeverityRank orders severities; unknown is -1.
func SeverityRank(s string) int { return slices.Index(Severities, s) }

// riskyPorts are services that should rarely face the internet: a new one
// open is high severity.
var riskyPorts = map[string]bool{"21/tcp": true, "23/tcp": true, "445/tcp": true, "3389/tcp": true, "3306/tcp": true,
	"5432/tcp": true, "6379/tcp": true, "9200/tcp": true, "27017/tcp": true, "11211/tcp": true, "5900/tcp": true,
	"2375/tcp": true, "1433/tcp": true, "161/udp": true, "139/tcp": true, "135/tcp": true}

// fingerprint identifies what an alert is about, so a repeat is the same
// alert: the organization, the type and the facts that make it one event.
func fingerprint(orgID, typ string, facts ...string) string {
	h := sha256.Sum256([]byte(orgID + "\x00" + typ + "\x00" + strings.Join(facts, "\x00")))
	return hex.EncodeToString(h[:16])
}

func evidence(v map[string]any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func newAlert(a periscope.Asset, typ, severity, host, domain string, ts int64) alertstore.Alert {
	return alertstore.Alert{AccountID: a.AccountID, OrganizationID: a.OrganizationID, Type: typ, Severity: severity,
		Host: host, Domain: domain, LastSeen: ts}
}

// FromChange is the rule of one ledger row about a host of the asset a.
func FromChange(r alertstore.Row, a periscope.Asset) (alertstore.Alert, bool) {
	al := newAlert(a, "", "", r.Host, r.Domain, r.Time)
	ev := map[string]any{"host": r.Host, "ip_address": r.IPAddress, "category": string(r.Category), "change": string(r.Change.Change),
		"value": r.Value, "old_value": r.OldValue, "source": r.Source, "asset": a.Value, "ledger_id": r.ID}
	switch {
	case r.Category == ledger.CategoryHost && r.Change.Change == ledger.New:
		if r.HostType == "ip" {
			return al, false // an address in a range is not a subdomain; its ports speak for it
		}
		al.Type, al.Severity = TypeNewSubdomain, "medium"
		al.Title = "New subdomain discovered: " + r.Host
		al.Message = fmt.Sprintf("%s was seen for the first time under %s (source %s).", r.Host, a.Value, r.Source)
	case r.Category == ledger.CategoryPort && r.Change.Change == ledger.New:
		al.Type, al.Severity = TypeNewOpenPort, "medium"
		if riskyPorts[r.Value] {
			al.Severity = "high"
		}
		al.Title = fmt.Sprintf("New open port %s on %s", r.Value, r.Host)
		al.Message = fmt.Sprintf("Port %s is open on %s%s (source %s).", r.Value, r.Host, atIP(r.IPAddress), r.Source)
	case r.Category == ledger.CategoryPort && r.Change.Change == ledger.Removed:
		al.Type, al.Severity = TypePortClosed, "low"
		al.Title = fmt.Sprintf("Port %s closed on %s", r.OldValue, r.Host)
		al.Message = fmt.Sprintf("Port %s on %s%s was not seen open by %s on two scans in a row.", r.OldValue, r.Host, atIP(r.IPAddress), r.Source)
	case strings.HasPrefix(string(r.Category), "dns_"):
		al.Type, al.Severity = TypeDNSChanged, "medium"
		if r.Category == ledger.CategoryDNSTXT {
			al.Severity = "low"
		}
		rec := strings.ToUpper(strings.TrimPrefix(string(r.Category), "dns_"))
		al.Title = fmt.Sprintf("DNS %s record %s on %s", rec, r.Change.Change, r.Host)
		al.Message = fmt.Sprintf("%s %s record %s: %s.", r.Host, rec, r.Change.Change, valueText(r))
	case r.Category == ledger.CategoryTLSCert:
		al.Type, al.Severity = TypeCertChanged, "medium"
		al.Title = "TLS certificate changed on " + r.Host
		al.Message = fmt.Sprintf("%s presents a different certificate: %s.", r.Host, valueText(r))
	case r.Category == ledger.CategoryHTTPStatus || r.Category == ledger.CategoryHTTPTitle:
		al.Type, al.Severity = TypeHTTPChanged, "low"
		what := "status"
		if r.Category == ledger.CategoryHTTPTitle {
			what = "title"
		}
		al.Title = fmt.Sprintf("HTTP %s changed on %s", what, r.Host)
		al.Message = fmt.Sprintf("The HTTP %s of %s changed: %s.", what, r.Host, valueText(r))
	default:
		return al, false // services and technologies feed the vulnerability rule
	}
	al.Evidence = evidence(ev)
	al.Fingerprint = fingerprint(a.OrganizationID, al.Type, r.Host, string(r.Category), string(r.Change.Change), r.Value, r.OldValue)
	return al, true
}

func atIP(ip string) string {
	if ip == "" {
		return ""
	}
	return " (" + ip + ")"
}

func valueText(r alertstore.Row) string {
	switch {
	case r.OldValue == "":
		return fmt.Sprintf("%q", r.Value)
	case r.Value == "":
		return fmt.Sprintf("%q removed", r.OldValue)
	}
	return fmt.Sprintf("%q (was %q)", r.Value, r.OldValue)
}

// expiryThresholds are the days before expiry that raise an alert, with
// their severity; past expiry is critical.
var expiryThresholds = []struct {
	days     int
	severity string
}{{1, "critical"}, {7, "high"}, {14, "medium"}, {30, "low"}}

// expiryBucket returns the tightest threshold that expiry is within at now.
func expiryBucket(expiry, now time.Time) (days int, severity string, ok bool) {
	left := expiry.Sub(now)
	if left <= 0 {
		return 0, "critical", true
	}
	for _, t := range expiryThresholds {
		if left <= time.Duration(t.days)*24*time.Hour {
			return t.days, t.severity, true
		}
	}
	return 0, "", false
}

// CertExpiring is the rule of a certificate (by SHA-256 fingerprint)
// linked to the organization under the name hostName (a host or wildcard
// name under the asset a): one alert per threshold crossed (30, 14, 7, 1
// days, expired). The alert names the asset; the certificate's name and
// subject are evidence.
func CertExpiring(a periscope.Asset, hostName, domain, sha256, subject string, notAfter, now time.Time) (alertstore.Alert, bool) {
	days, sev, ok := expiryBucket(notAfter, now)
	if !ok || sha256 == "" {
		return alertstore.Alert{}, false
	}
	al := newAlert(a, TypeCertExpiring, sev, hostName, domain, now.Unix())
	when := notAfter.UTC().Format("2006-01-02 15:04 UTC")
	if days == 0 {
		al.Title = fmt.Sprintf("TLS certificate of %s (%s) has expired", a.Value, hostName)
	} else {
		al.Title = fmt.Sprintf("TLS certificate of %s (%s) expires within %d day%s", a.Value, hostName, days, plural(days))
	}
	al.Message = fmt.Sprintf("The certificate %s (CN=%s) for %s, under the asset %s, expires %s.", sha256, subject, hostName, a.Value, when)
	al.Evidence = evidence(map[string]any{"host": hostName, "certificate_name": hostName, "sha256_fingerprint": sha256,
		"subject_common_name": subject, "not_after": notAfter.Unix(), "threshold_days": days, "asset": a.Value})
	al.Fingerprint = fingerprint(a.OrganizationID, TypeCertExpiring, hostName, sha256, fmt.Sprint(days))
	return al, true
}

// CoveringAsset returns the organization's domain asset that covers name
// (equal to it, or a parent of it; a wildcard "*." prefix is ignored), the
// longest when several do.
func CoveringAsset(domains []periscope.Asset, orgID, name string) (periscope.Asset, bool) {
	name = strings.TrimPrefix(strings.ToLower(strings.TrimSuffix(name, ".")), "*.")
	var best periscope.Asset
	found := false
	for _, a := range domains {
		if a.OrganizationID != orgID || (name != a.Value && !strings.HasSuffix(name, "."+a.Value)) {
			continue
		}
		if !found || len(a.Value) > len(best.Value) {
			best, found = a, true
		}
	}
	return best, found
}

// DomainExpiring is the rule of a registrable domain's registration expiry
// (from WHOIS or RDAP): one alert per threshold crossed.
func DomainExpiring(a periscope.Asset, domain, registrar string, expiry, now time.Time) (alertstore.Alert, bool) {
	days, sev, ok := expiryBucket(expiry, now)
	if !ok {
		return alertstore.Alert{}, false
	}
	al := newAlert(a, TypeDomainExpiring, sev, domain, domain, now.Unix())
	if days == 0 {
		al.Title = "Domain registration expired: " + domain
	} else {
		al.Title = fmt.Sprintf("Domain %s expires within %d day%s", domain, days, plural(days))
	}
	al.Message = fmt.Sprintf("The registration of %s (registrar %s) expires %s.", domain, registrar, expiry.UTC().Format("2006-01-02"))
	al.Evidence = evidence(map[string]any{"domain": domain, "registrar": registrar, "expires_at": expiry.Unix(), "threshold_days": days})
	al.Fingerprint = fingerprint(a.OrganizationID, TypeDomainExpiring, domain, expiry.UTC().Format("2006-01-02"), fmt.Sprint(days))
	return al, true
}

// BrandFinding is the rule of a typosquatting or phishing finding (kind as
// the brand monitor names it: "typosquatting" or "potential_phishing")
// against the organization's base domain.
func BrandFinding(a periscope.Asset, kind, domain, base, reason string, score int, ts int64) (alertstore.Alert, bool) {
	typ, sev, what := TypeNewTyposquat, "medium", "typosquatting"
	switch kind {
	case "typosquatting":
	case "potential_phishing":
		typ, sev, what = TypeNewPhishing, "high", "potential phishing"
	default:
		return alertstore.Alert{}, false
	}
	al := newAlert(a, typ, sev, domain, base, ts)
	al.Title = fmt.Sprintf("New %s domain %s", what, domain)
	al.Message = fmt.Sprintf("%s looks like %s (%s, score %d).", domain, base, reason, score)
	al.Evidence = evidence(map[string]any{"domain": domain, "base_domain": base, "reason": reason, "score": score})
	al.Fingerprint = fingerprint(a.OrganizationID, typ, domain, base)
	return al, true
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
