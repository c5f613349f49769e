package alerts

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/alertstore"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/ledger"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/vulnstore"
)

// VulnSource is what the new_vulnerability rule reads: the KEV-listed and
// critical CVEs' CPE keys (vulnstore) and the hosts' documents
// (hoststore).
type VulnSource struct {
	Signature  func(ctx context.Context) (string, error)
	CPEs       func(ctx context.Context) ([]vulnstore.AlertableCPE, error)
	Detail     func(ctx context.Context, id int64) (vulnstore.AlertDetail, error)
	HostsNamed func(ctx context.Context, names []string) (map[string]host.Host, error)
	// EachHost walks the hosts under a domain.
	EachHost func(ctx context.Context, domain string, fn func(host.Host) error) error
	// InRange, when set, walks the hosts whose address is in a block.
	InRange func(ctx context.Context, p netip.Prefix, fn func(host.Host) error) error
}

// vulnIndex finds the alertable CVEs a product may be affected by.
type vulnIndex struct {
	byKey     map[string][]vulnstore.AlertableCPE // part:vendor:product
	byProduct map[string][]string                 // CPE product → keys
	byVendor  map[string][]string                 // vendor_product → keys
}

func newVulnIndex(cs []vulnstore.AlertableCPE) *vulnIndex {
	ix := &vulnIndex{byKey: map[string][]vulnstore.AlertableCPE{}, byProduct: map[string][]string{}, byVendor: map[string][]string{}}
	for _, c := range cs {
		if _, ok := ix.byKey[c.Key]; !ok {
			f := strings.SplitN(c.Key, ":", 3)
			if len(f) == 3 {
				p, v := productToken(f[2]), productToken(f[1])
				ix.byProduct[p] = append(ix.byProduct[p], c.Key)
				ix.byVendor[v+"_"+p] = append(ix.byVendor[v+"_"+p], c.Key)
			}
		}
		ix.byKey[c.Key] = append(ix.byKey[c.Key], c)
	}
	return ix
}

// keys returns the CPE keys a product name matches: exactly its CPE
// product name, its vendor and product name, or a known alias. Nothing
// fuzzy: a token must equal a CPE's.
func (ix *vulnIndex) keys(name string) []string {
	t := productToken(name)
	if t == "" {
		return nil
	}
	var out []string
	for _, k := range append(append(slices.Clone(ix.byProduct[t]), ix.byVendor[t]...), productAliases[t]...) {
		if _, ok := ix.byKey[k]; ok && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// vulnHit is a product of a host that names a CPE key of a CVE.
type vulnHit struct {
	cpe     vulnstore.AlertableCPE
	host    string
	product Product
}

func (ix *vulnIndex) match(h host.Host) []vulnHit {
	var out []vulnHit
	for _, p := range HostProducts(h) {
		for _, k := range ix.keys(p.Name) {
			for _, c := range ix.byKey[k] {
				out = append(out, vulnHit{cpe: c, host: h.Host, product: p})
			}
		}
	}
	return out
}

// VulnHost is a host of an organization running a product a CVE names.
type VulnHost struct {
	Host    string `json:"host"`
	Product string `json:"product"`
	Version string `json:"version,omitempty"`
	CPE     string `json:"cpe"`
	Check   string `json:"version_check"` // listed, not_checked or unknown
}

// maxVulnHosts bounds the hosts an alert's evidence names.
const maxVulnHosts = 50

// Vulnerability is the rule of a KEV-listed or critical (CVSS >= 9) CVE
// whose CPE matches products on hosts of the organization's asset a: one
// alert per (organization, CVE), naming the hosts. prev is the standing
// alert of the same CVE (nil when none): its hosts carry over, so a new
// host with the same CVE grows the alert rather than opening another.
// Hosts whose version the CVE's criteria do not list are not affected.
func Vulnerability(a periscope.Asset, d vulnstore.AlertDetail, hosts []VulnHost, prev *alertstore.Alert, ts int64) (alertstore.Alert, bool) {
	if !d.KEV && d.CVSS < 9.0 && d.Severity != "critical" {
		return alertstore.Alert{}, false
	}
	var all []VulnHost
	if prev != nil {
		var ev struct {
			Hosts []VulnHost `json:"hosts"`
		}
		if json.Unmarshal(prev.Evidence, &ev) == nil {
			all = ev.Hosts
		}
	}
	fresh := 0
	for _, h := range hosts {
		if h.Check == versionNotListed {
			continue
		}
		if i := slices.IndexFunc(all, func(o VulnHost) bool { return o.Host == h.Host && o.CPE == h.CPE }); i >= 0 {
			all[i] = h
			continue
		}
		fresh++
		if len(all) < maxVulnHosts {
			all = append(all, h)
		}
	}
	if fresh == 0 {
		return alertstore.Alert{}, false // no host the standing alert does not name
	}
	slices.SortFunc(all, func(x, y VulnHost) int { return strings.Compare(x.Host, y.Host) })
	first := all[0]
	al := newAlert(a, TypeNewVulnerability, "critical", first.Host, a.Value, ts)
	kev := "not in CISA KEV"
	if d.KEV {
		kev = "known exploited: in CISA KEV"
		if d.KEVDateAdded > 0 {
			kev += " since " + time.Unix(d.KEVDateAdded, 0).UTC().Format("2006-01-02")
		}
	}
	cvss := "CVSS unknown"
	if d.CVSS > 0 {
		cvss = fmt.Sprintf("CVSS %.1f", d.CVSS)
	}
	names := make([]string, len(all))
	var uses []string
	for i, h := range all {
		names[i] = h.Host
		u := h.Product
		if h.Version != "" {
			u += " " + h.Version
		}
		switch h.Check {
		case versionListed:
			u += " (version listed as vulnerable)"
		case versionUnknownVer:
			u += " (version unknown: not checked)"
		default:
			u += " (version not checked: the CVE's CPE data names no exact version)"
		}
		u += " on " + h.Host
		if len(uses) < 5 {
			uses = append(uses, u)
		}
	}
	on := first.Host
	if len(all) > 1 {
		on = fmt.Sprintf("%d hosts of %s", len(all), a.Value)
	}
	al.Title = fmt.Sprintf("%s affects %s on %s", d.CVEID, first.Product, on)
	more := ""
	if len(all) > len(uses) {
		more = fmt.Sprintf(" and %d more", len(all)-len(uses))
	}
	al.Message = fmt.Sprintf("%s (%s, %s) matches %s%s. CPE %s. Hosts: %s.", d.CVEID, cvss, kev, strings.Join(uses, "; "), more,
		first.CPE, strings.Join(names, ", "))
	al.Evidence = evidence(map[string]any{"vulnerability": d.CVEID, "title": d.Title, "cvss": d.CVSS, "kev": d.KEV,
		"kev_date_added": d.KEVDateAdded, "asset": a.Value, "hosts": all, "host_count": len(all)})
	al.Fingerprint = fingerprint(a.OrganizationID, TypeNewVulnerability, d.CVEID)
	return al, true
}

// vulnRelevant reports whether a ledger row can show a new product.
func vulnRelevant(r alertstore.Row) bool {
	switch r.Category {
	case ledger.CategoryHost, ledger.CategoryPort, ledger.CategoryTechnology:
		return r.Change.Change == ledger.New
	case ledger.CategoryService:
		return r.Change.Change != ledger.Removed
	}
	return false
}

// index returns the alertable CVE index, rebuilt when the CVEs changed
// (checked at most every VulnCheck). Entries new since the previous build
// (every entry at the first) wait in vpending for the CVE feed.
func (w *Worker) index(ctx context.Context) (*vulnIndex, error) {
	now := time.Now()
	if w.vidx != nil && now.Sub(w.vchecked) < w.VulnCheck {
		return w.vidx, nil
	}
	w.vchecked = now
	sig, err := w.Vulns.Signature(ctx)
	if err != nil {
		return nil, err
	}
	if w.vidx != nil && sig == w.vsig {
		return w.vidx, nil
	}
	cs, err := w.Vulns.CPEs(ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range cs {
		if w.vidx == nil || !slices.ContainsFunc(w.vidx.byKey[c.Key], func(o vulnstore.AlertableCPE) bool { return o.VulnID == c.VulnID && o.KEV == c.KEV }) {
			w.vpending = append(w.vpending, c)
		}
	}
	w.vidx, w.vsig = newVulnIndex(cs), sig
	return w.vidx, nil
}

// vulnAlerts turns hits of one organization's asset into alerts, one per
// CVE; reconcile skips CVEs already alerted (the CVE side: the standing
// alert says it all), otherwise hits grow the standing alert.
func (w *Worker) vulnAlerts(ctx context.Context, a periscope.Asset, hits []vulnHit, docs map[int64]vulnstore.AlertDetail, reconcile bool, ts int64) ([]alertstore.Alert, error) {
	byCVE := map[int64][]VulnHost{}
	var order []int64
	for _, h := range hits {
		d, ok := docs[h.cpe.VulnID]
		if !ok {
			var err error
			if d, err = w.Vulns.Detail(ctx, h.cpe.VulnID); err != nil {
				return nil, err
			}
			docs[h.cpe.VulnID] = d
		}
		vh := VulnHost{Host: h.host, Product: h.product.Name, Version: h.product.Version, CPE: h.cpe.Key,
			Check: versionVerdict(h.cpe.Key, h.product.Version, d.CPEs)}
		if _, ok := byCVE[h.cpe.VulnID]; !ok {
			order = append(order, h.cpe.VulnID)
		}
		byCVE[h.cpe.VulnID] = append(byCVE[h.cpe.VulnID], vh)
	}
	var out []alertstore.Alert
	for _, id := range order {
		d := docs[id]
		fp := fingerprint(a.OrganizationID, TypeNewVulnerability, d.CVEID)
		prev, ok, err := w.Alerts.AlertByFingerprint(ctx, a.AccountID, fp)
		if err != nil {
			return nil, err
		}
		if ok && reconcile {
			continue
		}
		var p *alertstore.Alert
		if ok {
			p = &prev
		}
		if al, ok := Vulnerability(a, d, byCVE[id], p, ts); ok {
			out = append(out, al)
		}
	}
	return out, nil
}

// pastBaseline reports whether changes of the organization's asset at ts
// are news (its first data's baseline is over).
func (w *Worker) pastBaseline(ctx context.Context, a periscope.Asset, ts int64) (bool, error) {
	if ts < a.CreatedAt.Unix() {
		return false, nil
	}
	started, ok, err := w.Alerts.BaselineStarted(ctx, a.OrganizationID, a.Value)
	if err != nil || !ok {
		return false, err
	}
	return ts >= started+int64(w.Baseline/time.Second), nil
}

// vulnHostFeed matches hosts whose products changed (new host, new port,
// service or technology in the ledger) against the alertable CVEs. It
// trails the ledger rules' checkpoint, so every asset's baseline is known.
func (w *Worker) vulnHostFeed() Feed {
	return Feed{Name: "alerts.vulns.hosts", Next: func(ctx context.Context, after int64, limit int) ([]alertstore.Alert, int64, error) {
		upto, err := w.Alerts.CheckpointPosition(ctx, checkpointLedger)
		if err != nil || upto <= after {
			return nil, after, err
		}
		rows, err := w.Alerts.LedgerAfter(ctx, after, limit)
		if err != nil || len(rows) == 0 {
			return nil, after, err
		}
		if i := slices.IndexFunc(rows, func(r alertstore.Row) bool { return r.ID > upto }); i >= 0 {
			rows = rows[:i]
		}
		if len(rows) == 0 {
			return nil, after, nil
		}
		last := rows[len(rows)-1].ID
		ix, err := w.index(ctx)
		if err != nil {
			return nil, after, err
		}
		m, err := w.matcher(ctx)
		if err != nil {
			return nil, after, err
		}
		type key struct{ org, host string }
		assets := map[key]periscope.Asset{}
		var names []string
		started := map[string]int64{} // organization + asset → baseline start (-1: none)
		for _, r := range rows {
			if !vulnRelevant(r) {
				continue
			}
			for _, a := range m.match(r.Host, r.IPAddress) {
				k := key{a.OrganizationID, r.Host}
				if _, ok := assets[k]; ok || r.Time < a.CreatedAt.Unix() {
					continue
				}
				sk := a.OrganizationID + "\x00" + a.Value
				st, ok := started[sk]
				if !ok {
					at, known, err := w.Alerts.BaselineStarted(ctx, a.OrganizationID, a.Value)
					if err != nil {
						return nil, after, err
					}
					st = -1
					if known {
						st = at
					}
					started[sk] = st
				}
				if st >= 0 && r.Time >= st+int64(w.Baseline/time.Second) {
					assets[k] = a
					names = append(names, r.Host)
				}
			}
		}
		if len(names) == 0 {
			return nil, last, nil
		}
		slices.Sort(names)
		docs, err := w.Vulns.HostsNamed(ctx, slices.Compact(names))
		if err != nil {
			return nil, after, err
		}
		// Hits per organization, in a stable order.
		keys := make([]key, 0, len(assets))
		for k := range assets {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(x, y key) int { return strings.Compare(x.org+"\x00"+x.host, y.org+"\x00"+y.host) })
		byOrg := map[string][]vulnHit{}
		var orgs []string
		for _, k := range keys {
			h, ok := docs[k.host]
			if !ok {
				continue
			}
			hits := ix.match(h)
			if len(hits) == 0 {
				continue
			}
			if _, ok := byOrg[k.org]; !ok {
				orgs = append(orgs, k.org)
			}
			byOrg[k.org] = append(byOrg[k.org], hits...)
		}
		var out []alertstore.Alert
		details := map[int64]vulnstore.AlertDetail{}
		ts := rows[len(rows)-1].Time
		for _, org := range orgs {
			var a periscope.Asset
			for _, k := range keys {
				if k.org == org {
					a = assets[k]
					break
				}
			}
			als, err := w.vulnAlerts(ctx, a, byOrg[org], details, false, ts)
			if err != nil {
				return nil, after, err
			}
			out = append(out, als...)
		}
		return out, last, nil
	}}
}

// vulnCVEFeed matches CVEs that became alertable (new, newly KEV-listed,
// or the first time this worker runs) against the hosts under every
// organization's domain assets, and in its ranges, past their baseline.
// Its position is the time of the last reconciliation.
func (w *Worker) vulnCVEFeed() Feed {
	return Feed{Name: "alerts.vulns.cves", Failed: func() { w.vidx, w.vpending = nil, nil }, Next: func(ctx context.Context, after int64, _ int) ([]alertstore.Alert, int64, error) {
		if _, err := w.index(ctx); err != nil || len(w.vpending) == 0 {
			return nil, after, err
		}
		fresh := w.vpending
		w.vpending = nil
		sub := newVulnIndex(fresh)
		domains, err := w.Assets(ctx, periscope.AssetDomain)
		if err != nil {
			return nil, after, err
		}
		assets := domains
		if w.Vulns.InRange != nil {
			ranges, err := w.Assets(ctx, periscope.AssetIPRange)
			if err != nil {
				return nil, after, err
			}
			assets = append(slices.Clone(domains), ranges...)
		}
		now := w.DB.Now().Unix()
		done := map[string]bool{}             // org + host: a host under two assets of one organization
		first := map[string]periscope.Asset{} // org → the asset its alerts name
		byOrg := map[string][]vulnHit{}
		var orgs []string
		for _, a := range assets {
			ok, err := w.pastBaseline(ctx, a, now)
			if err != nil {
				return nil, after, err
			}
			if !ok {
				continue
			}
			visit := func(h host.Host) error {
				if done[a.OrganizationID+"\x00"+h.Host] {
					return nil
				}
				done[a.OrganizationID+"\x00"+h.Host] = true
				hits := sub.match(h)
				if len(hits) == 0 {
					return nil
				}
				if _, ok := first[a.OrganizationID]; !ok {
					first[a.OrganizationID] = a
					orgs = append(orgs, a.OrganizationID)
				}
				byOrg[a.OrganizationID] = append(byOrg[a.OrganizationID], hits...)
				return nil
			}
			if a.Kind == periscope.AssetIPRange {
				p, err := netip.ParsePrefix(a.Value)
				if err != nil {
					continue
				}
				err = w.Vulns.InRange(ctx, p, visit)
			} else {
				err = w.Vulns.EachHost(ctx, a.Value, visit)
			}
			if err != nil {
				return nil, after, err
			}
		}
		details := map[int64]vulnstore.AlertDetail{}
		var out []alertstore.Alert
		for _, org := range orgs {
			als, err := w.vulnAlerts(ctx, first[org], byOrg[org], details, true, now)
			if err != nil {
				return nil, after, err
			}
			out = append(out, als...)
		}
		return out, max(now, after+1), nil
	}}
}
