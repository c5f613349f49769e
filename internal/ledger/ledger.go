// Package ledger computes the change ledger of the host index: what an
// observation changed in a stored host, one row per changed value.
//
// The store merges observations by union (host.Merge erases nothing), so a
// value can only disappear through the ledger's own removal rule: a source
// that covers a value (it looked at that record type, or scanned that port)
// and did not see it has missed it; missing it on two consecutive
// observations removes it. The first miss is returned as a Missed change,
// which is not a ledger row but the state the caller keeps per host and
// source until the next observation (see alertstore.Tracker). Prune then
// takes the removed values out of the merged host, so the stored document
// agrees with the ledger.
//
// The package is pure: no clock, no storage, no network.
package ledger

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/host"
)

// Category is what kind of value changed.
type Category string

// The categories of the ledger. CategoryHost is the one row written when a
// host is seen for the first time.
const (
	CategoryHost       Category = "host"
	CategoryDNSA       Category = "dns_a"
	CategoryDNSAAAA    Category = "dns_aaaa"
	CategoryDNSCNAME   Category = "dns_cname"
	CategoryDNSMX      Category = "dns_mx"
	CategoryDNSNS      Category = "dns_ns"
	CategoryDNSTXT     Category = "dns_txt"
	CategoryPort       Category = "port"
	CategoryService    Category = "service"
	CategoryTLSCert    Category = "tls_cert"
	CategoryHTTPStatus Category = "http_status"
	CategoryHTTPTitle  Category = "http_title"
	CategoryTechnology Category = "technology"
	CategoryWHOIS      Category = "whois"
)

// Categories lists every category, in the order rows are produced.
var Categories = []Category{CategoryHost, CategoryDNSA, CategoryDNSAAAA, CategoryDNSCNAME, CategoryDNSMX,
	CategoryDNSNS, CategoryDNSTXT, CategoryPort, CategoryService, CategoryTLSCert, CategoryHTTPStatus,
	CategoryHTTPTitle, CategoryTechnology, CategoryWHOIS}

// ValidCategory reports whether c is one of Categories.
func ValidCategory(c Category) bool { return slices.Contains(Categories, c) }

// Kind is the kind of change.
type Kind string

// Kinds of change. Missed is not a ledger row: it is a covered value that
// the source did not see this time (pending removal).
const (
	New     Kind = "new"
	Removed Kind = "removed"
	Changed Kind = "changed"
	Missed  Kind = "missed"
)

// Change is one ledger row.
type Change struct {
	Host      string
	Domain    string
	TLD       string
	Subdomain string
	HostType  string // "domain" (the registrable domain itself), "subdomain" or "ip"
	IPAddress string
	Category  Category
	Change    Kind
	Value     string
	OldValue  string
	Source    string
	Time      int64 // Unix seconds
}

// Miss is a value a source missed on its previous observation of a host.
type Miss struct {
	Category Category
	Value    string
}

// Source describes the observation behind a merge.
type Source struct {
	// Name identifies the source for miss counting ("nmap", "httpx",
	// "pdns", "zone", "ct", "monitor", "whois", ...): only the same
	// source's misses count towards a removal.
	Name string
	// Observed is what the source saw. Nil means it cannot remove
	// anything (an import of a host document, say).
	Observed *host.Host
	// Covers lists the categories the source looked at. Nil means the
	// categories Observed holds a value in: a source that reported no MX
	// record is not taken to have looked for one.
	Covers []Category
	// Ports lists the ports the source scanned; AllPorts says it scanned
	// every port. With neither, only the ports Observed holds are covered,
	// so no port can go missing: a scan of other ports removes nothing.
	Ports    []int
	AllPorts bool
	// Missed is what this source missed on its previous observation of
	// this host (kept by the caller between observations).
	Missed []Miss
	// Time stamps the rows (Unix seconds).
	Time int64
}

// Diff compares the stored host old (nil when the host is new) with the
// merged host nw and returns the ledger rows, followed by the Missed
// changes to keep for this host and source. A new host yields one row.
func Diff(old, nw *host.Host, src Source) []Change {
	base := Change{Host: nw.Host, Domain: nw.Domain, TLD: nw.TLD, Subdomain: nw.Subdomain,
		HostType: HostType(nw), IPAddress: nw.IPAddress, Source: src.Name, Time: src.Time}
	if old == nil {
		c := base
		c.Category, c.Change, c.Value = CategoryHost, New, nw.Host
		return []Change{c}
	}
	d := differ{base: base}
	for _, cat := range []Category{CategoryDNSA, CategoryDNSAAAA, CategoryDNSCNAME, CategoryDNSMX, CategoryDNSNS, CategoryDNSTXT, CategoryTechnology} {
		d.sets(cat, values(old, cat), values(nw, cat))
	}
	d.sets(CategoryPort, values(old, CategoryPort), values(nw, CategoryPort))
	d.services(old, nw)
	d.scalar(CategoryTLSCert, certValue(old.Cert), certValue(nw.Cert))
	d.scalar(CategoryHTTPStatus, statusValue(old.HTTPStatusCode), statusValue(nw.HTTPStatusCode))
	d.scalar(CategoryHTTPTitle, old.HTTPTitle, nw.HTTPTitle)
	if src.Observed != nil {
		d.misses(old, src)
	}
	return d.out
}

type differ struct {
	base Change
	out  []Change
}

func (d *differ) add(cat Category, k Kind, v, old string) {
	c := d.base
	c.Category, c.Change, c.Value, c.OldValue = cat, k, v, old
	d.out = append(d.out, c)
}

// sets adds a new row per value of nw not in old (both sorted sets).
func (d *differ) sets(cat Category, old, nw []string) {
	for _, v := range nw {
		if !slices.Contains(old, v) {
			d.add(cat, New, v, "")
		}
	}
}

// scalar adds a changed row when a known value changes; a value appearing
// where none was known is new.
func (d *differ) scalar(cat Category, old, nw string) {
	switch {
	case nw == old || nw == "":
	case old == "":
		d.add(cat, New, nw, "")
	default:
		d.add(cat, Changed, nw, old)
	}
}

// services reports a changed service on a port both hosts have (a new
// port's service rides on its port row).
func (d *differ) services(old, nw *host.Host) {
	for _, s := range nw.NetworkServices {
		i := slices.IndexFunc(old.NetworkServices, func(o host.Service) bool { return o.Port == s.Port && o.Protocol == s.Protocol })
		if i < 0 {
			continue
		}
		o := old.NetworkServices[i]
		if (o.Service == s.Service && o.Product == s.Product && o.Version == s.Version) || !describes(s) {
			continue
		}
		d.add(CategoryService, Changed, serviceValue(s), serviceValue(o))
	}
}

// misses adds Removed rows for covered values missed now and last time,
// and Missed rows for covered values missed for the first time. Misses of
// values the source did not cover this time are carried over unchanged.
func (d *differ) misses(old *host.Host, src Source) {
	covered := src.Covers
	if covered == nil {
		covered = observedCategories(src.Observed)
	}
	observed := map[Category][]string{}
	seen := func(cat Category, v string) bool {
		o, ok := observed[cat]
		if !ok {
			o = values(src.Observed, cat)
			observed[cat] = o
		}
		_, found := slices.BinarySearch(o, v)
		return found
	}
	covers := func(cat Category, v string) bool {
		if !slices.Contains(covered, cat) {
			return false
		}
		if cat != CategoryPort {
			return true
		}
		if src.AllPorts {
			return true
		}
		p, _, _ := strings.Cut(v, "/")
		n, err := strconv.Atoi(p)
		return err == nil && slices.Contains(src.Ports, n)
	}
	for _, cat := range []Category{CategoryDNSA, CategoryDNSAAAA, CategoryDNSCNAME, CategoryDNSMX, CategoryDNSNS, CategoryDNSTXT, CategoryPort, CategoryTechnology} {
		for _, v := range values(old, cat) {
			m := Miss{cat, v}
			switch {
			case !covers(cat, v):
				if slices.Contains(src.Missed, m) {
					d.add(cat, Missed, v, "")
				}
			case seen(cat, v):
			case slices.Contains(src.Missed, m):
				d.add(cat, Removed, "", v)
			default:
				d.add(cat, Missed, v, "")
			}
		}
	}
}

// observedCategories lists the set categories h holds a value in.
func observedCategories(h *host.Host) []Category {
	var out []Category
	for _, c := range []struct {
		cat Category
		n   int
	}{{CategoryDNSA, len(h.DNS.A)}, {CategoryDNSAAAA, len(h.DNS.AAAA)}, {CategoryDNSCNAME, len(h.DNS.CNAME)},
		{CategoryDNSMX, len(h.DNS.MX)}, {CategoryDNSNS, len(h.DNS.NS)}, {CategoryDNSTXT, len(h.DNS.TXT)},
		{CategoryPort, len(h.NetworkPorts) + len(h.NetworkServices)}, {CategoryTechnology, len(h.Products)}} {
		if c.n > 0 {
			out = append(out, c.cat)
		}
	}
	return out
}

// Prune takes the values removed by changes out of h and re-derives it, so
// the stored document no longer holds them. A removed port takes its
// services with it.
func Prune(h *host.Host, changes []Change) {
	pruned := false
	for _, c := range changes {
		if c.Change != Removed {
			continue
		}
		pruned = true
		drop := func(l *[]string) { *l = slices.DeleteFunc(*l, func(v string) bool { return v == c.OldValue }) }
		switch c.Category {
		case CategoryDNSA:
			drop(&h.DNS.A)
		case CategoryDNSAAAA:
			drop(&h.DNS.AAAA)
		case CategoryDNSCNAME:
			drop(&h.DNS.CNAME)
		case CategoryDNSMX:
			drop(&h.DNS.MX)
		case CategoryDNSNS:
			drop(&h.DNS.NS)
		case CategoryDNSTXT:
			drop(&h.DNS.TXT)
		case CategoryTechnology:
			drop(&h.Products)
		case CategoryPort:
			p, proto, _ := strings.Cut(c.OldValue, "/")
			port, _ := strconv.Atoi(p)
			h.NetworkServices = slices.DeleteFunc(h.NetworkServices, func(s host.Service) bool {
				return s.Port == port && s.Protocol == proto
			})
			if !slices.ContainsFunc(h.NetworkServices, func(s host.Service) bool { return s.Port == port }) {
				h.NetworkPorts = slices.DeleteFunc(h.NetworkPorts, func(v int) bool { return v == port })
			}
		}
	}
	if pruned {
		h.Derive()
	}
}

// values returns h's values of a set category, sorted.
func values(h *host.Host, cat Category) []string {
	switch cat {
	case CategoryDNSA:
		return h.DNS.A
	case CategoryDNSAAAA:
		return h.DNS.AAAA
	case CategoryDNSCNAME:
		return h.DNS.CNAME
	case CategoryDNSMX:
		return h.DNS.MX
	case CategoryDNSNS:
		return h.DNS.NS
	case CategoryDNSTXT:
		return h.DNS.TXT
	case CategoryTechnology:
		return h.Products
	case CategoryPort:
		return portValues(h)
	case CategoryTLSCert:
		if v := certValue(h.Cert); v != "" {
			return []string{v}
		}
	case CategoryHTTPStatus:
		if v := statusValue(h.HTTPStatusCode); v != "" {
			return []string{v}
		}
	case CategoryHTTPTitle:
		if h.HTTPTitle != "" {
			return []string{h.HTTPTitle}
		}
	}
	return nil
}

// portValues names each open port as port/protocol ("443/tcp"); a port
// known without a service is tcp.
func portValues(h *host.Host) []string {
	out := make([]string, 0, len(h.NetworkServices)+len(h.NetworkPorts))
	for _, s := range h.NetworkServices {
		out = append(out, strconv.Itoa(s.Port)+"/"+s.Protocol)
	}
	for _, p := range h.NetworkPorts {
		if !slices.ContainsFunc(h.NetworkServices, func(s host.Service) bool { return s.Port == p }) {
			out = append(out, strconv.Itoa(p)+"/tcp")
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// describes reports whether s says what answered (a bare open port does
// not, and must not read as a changed service).
func describes(s host.Service) bool { return s.Service != "" || s.Product != "" || s.Version != "" }

func serviceValue(s host.Service) string {
	v := strconv.Itoa(s.Port) + "/" + s.Protocol
	for _, f := range []string{s.Service, s.Product, s.Version} {
		if f != "" {
			v += " " + f
		}
	}
	return v
}

// certValue names a certificate by its SHA-256 fingerprint with its subject
// and expiry, so a row is evidence on its own.
func certValue(c host.Cert) string {
	if c.SHA256Fingerprint == "" {
		return ""
	}
	v := c.SHA256Fingerprint
	if c.SubjectCommonName != "" {
		v += " CN=" + c.SubjectCommonName
	}
	if c.NotAfter > 0 {
		v += " expires " + time.Unix(c.NotAfter, 0).UTC().Format("2006-01-02")
	}
	return v
}

func statusValue(code int) string {
	if code == 0 {
		return ""
	}
	return strconv.Itoa(code)
}

// HostType classifies a host for the ledger's host_type.
func HostType(h *host.Host) string {
	if _, err := netip.ParseAddr(h.Host); err == nil {
		return "ip"
	}
	if h.Host == h.Domain {
		return "domain"
	}
	return "subdomain"
}

// Misses returns the Missed changes of changes as the state to keep.
func Misses(changes []Change) []Miss {
	var out []Miss
	for _, c := range changes {
		if c.Change == Missed {
			out = append(out, Miss{c.Category, c.Value})
		}
	}
	return out
}

// Rows returns the ledger rows of changes (everything but Missed).
func Rows(changes []Change) []Change {
	out := make([]Change, 0, len(changes))
	for _, c := range changes {
		if c.Change != Missed {
			out = append(out, c)
		}
	}
	return out
}
