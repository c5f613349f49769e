package ledger

import (
	"slices"
	"strings"
	"time"
)

// WHOIS is what the ledger tracks of a domain's registration.
type WHOIS struct {
	Registrar   string
	Expiry      time.Time // zero when unknown
	NameServers []string
}

// DiffWHOIS compares a domain's stored registration (nil when first
// looked up, which writes no row: the host's own first row stands for it)
// with a new lookup. Values are prefixed with what they are ("registrar:",
// "expiry:", "nameserver:") under the one category whois. A lookup that
// lacks a field (a registry that hides it) changes nothing.
func DiffWHOIS(domain, tld string, old *WHOIS, nw WHOIS, src string, ts int64) []Change {
	if old == nil {
		return nil
	}
	d := differ{base: Change{Host: domain, Domain: domain, TLD: tld, HostType: "domain", Source: src, Time: ts}}
	if nw.Registrar != "" {
		d.scalarValue("registrar:", old.Registrar, nw.Registrar)
	}
	if !nw.Expiry.IsZero() {
		day := func(t time.Time) string {
			if t.IsZero() {
				return ""
			}
			return t.UTC().Format("2006-01-02")
		}
		d.scalarValue("expiry:", day(old.Expiry), day(nw.Expiry))
	}
	if len(nw.NameServers) > 0 {
		on, nn := normNS(old.NameServers), normNS(nw.NameServers)
		for _, v := range nn {
			if !slices.Contains(on, v) {
				d.add(CategoryWHOIS, New, "nameserver:"+v, "")
			}
		}
		// A registration lookup is authoritative for its name servers: one
		// that is gone is removed at once (no second miss needed).
		for _, v := range on {
			if !slices.Contains(nn, v) {
				d.add(CategoryWHOIS, Removed, "", "nameserver:"+v)
			}
		}
	}
	return d.out
}

func (d *differ) scalarValue(prefix, old, nw string) {
	switch {
	case old == nw:
	case old == "":
		d.add(CategoryWHOIS, New, prefix+nw, "")
	default:
		d.add(CategoryWHOIS, Changed, prefix+nw, prefix+old)
	}
}

func normNS(ns []string) []string {
	out := make([]string, 0, len(ns))
	for _, n := range ns {
		out = append(out, strings.TrimSuffix(strings.ToLower(strings.TrimSpace(n)), "."))
	}
	slices.Sort(out)
	return slices.Compact(out)
}
