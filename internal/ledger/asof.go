package ledger

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/host"
)

// The ledger read backwards. The stored host agrees with its ledger (Prune
// keeps it so), and every value a host gained after its first row has a
// new row, every value it lost a removed row and every scalar that moved a
// changed row. So the host as it stood at a past time is the stored host
// with the rows written after that time undone, newest first. What the
// ledger does not track (tags, geography, cloud, first and last seen) is
// left as it is now; a certificate or service restored from a row carries
// only what the row names.

// AsOf returns h as it stood before the changes newer (rows written after
// the time of interest, newest first) were made. ok is false when one of
// them is the host's first row: the host was not yet known then.
func AsOf(h host.Host, newer []Change) (past host.Host, ok bool) {
	past = clone(h)
	for _, c := range newer {
		if c.Category == CategoryHost && c.Change == New {
			return host.Host{}, false
		}
		Undo(&past, c)
	}
	if len(newer) > 0 {
		// Derived flags are only ever turned on by Derive; the past state's
		// are derived again from the data it holds.
		past.IsResolvable, past.IsLive, past.HasIPv6, past.HasPrivateIP = false, false, false, false
		past.Cert.IsValidHostname = false
	}
	past.Derive()
	return past, true
}

// clone copies the lists of h that Undo changes.
func clone(h host.Host) host.Host {
	h.DNS.A, h.DNS.AAAA, h.DNS.CNAME = slices.Clone(h.DNS.A), slices.Clone(h.DNS.AAAA), slices.Clone(h.DNS.CNAME)
	h.DNS.MX, h.DNS.NS, h.DNS.TXT = slices.Clone(h.DNS.MX), slices.Clone(h.DNS.NS), slices.Clone(h.DNS.TXT)
	h.Products, h.NetworkPorts = slices.Clone(h.Products), slices.Clone(h.NetworkPorts)
	h.NetworkServices = slices.Clone(h.NetworkServices)
	h.Cert.DNSNames = slices.Clone(h.Cert.DNSNames)
	return h
}

// Undo reverts one ledger row in h: a new value is taken out, a removed
// one put back, a changed one set back to its old value. Rows of the
// registration (whois) and the host's first row say nothing about the host
// object and change nothing.
func Undo(h *host.Host, c Change) {
	if list := setOf(h, c.Category); list != nil {
		switch c.Change {
		case New:
			*list = slices.DeleteFunc(*list, func(v string) bool { return v == c.Value })
		case Removed:
			if !slices.Contains(*list, c.OldValue) {
				*list = append(*list, c.OldValue)
			}
		}
		return
	}
	switch c.Category {
	case CategoryPort:
		undoPort(h, c)
	case CategoryService:
		if c.Change == Changed {
			setService(h, c.OldValue)
		}
	case CategoryTLSCert:
		h.Cert = certOf(c.OldValue) // "" for a new row: no certificate then
	case CategoryHTTPStatus:
		h.HTTPStatusCode, _ = strconv.Atoi(c.OldValue)
	case CategoryHTTPTitle:
		h.HTTPTitle = c.OldValue
	}
}

// setOf returns the list of a set category other than ports, nil for the
// others.
func setOf(h *host.Host, cat Category) *[]string {
	switch cat {
	case CategoryDNSA:
		return &h.DNS.A
	case CategoryDNSAAAA:
		return &h.DNS.AAAA
	case CategoryDNSCNAME:
		return &h.DNS.CNAME
	case CategoryDNSMX:
		return &h.DNS.MX
	case CategoryDNSNS:
		return &h.DNS.NS
	case CategoryDNSTXT:
		return &h.DNS.TXT
	case CategoryTechnology:
		return &h.Products
	}
	return nil
}

// undoPort takes a new port (and its services) out, or puts a removed one
// back as a bare service (what answered there is not in the row).
func undoPort(h *host.Host, c Change) {
	v := c.Value
	if c.Change == Removed {
		v = c.OldValue
	}
	p, proto, _ := strings.Cut(v, "/")
	port, err := strconv.Atoi(p)
	if err != nil || proto == "" {
		return
	}
	switch c.Change {
	case New:
		h.NetworkServices = slices.DeleteFunc(h.NetworkServices, func(s host.Service) bool { return s.Port == port && s.Protocol == proto })
		if !slices.ContainsFunc(h.NetworkServices, func(s host.Service) bool { return s.Port == port }) {
			h.NetworkPorts = slices.DeleteFunc(h.NetworkPorts, func(n int) bool { return n == port })
		}
	case Removed:
		if !slices.ContainsFunc(h.NetworkServices, func(s host.Service) bool { return s.Port == port && s.Protocol == proto }) {
			h.NetworkServices = append(h.NetworkServices, host.Service{Port: port, Protocol: proto})
		}
		h.NetworkPorts = append(h.NetworkPorts, port)
	}
}

// setService sets the service of a port back to a row's value
// ("443/tcp http nginx 1.18.0"). The row joins service, product and
// version with spaces, so a product of several words reads back with the
// version as its last word when that word starts with a digit.
func setService(h *host.Host, v string) {
	s, ok := ParseService(v)
	if !ok {
		return
	}
	for i := range h.NetworkServices {
		o := &h.NetworkServices[i]
		if o.Port == s.Port && o.Protocol == s.Protocol {
			o.Service, o.Product, o.Version, o.Banner = s.Service, s.Product, s.Version, ""
			return
		}
	}
	h.NetworkServices = append(h.NetworkServices, s)
}

// ParseService reads a service row's value back into a service.
func ParseService(v string) (host.Service, bool) {
	f := strings.Fields(v)
	if len(f) == 0 {
		return host.Service{}, false
	}
	p, proto, _ := strings.Cut(f[0], "/")
	port, err := strconv.Atoi(p)
	if err != nil || proto == "" {
		return host.Service{}, false
	}
	s := host.Service{Port: port, Protocol: proto}
	rest := f[1:]
	if len(rest) > 0 {
		s.Service, rest = rest[0], rest[1:]
	}
	if n := len(rest); n > 1 && rest[n-1][0] >= '0' && rest[n-1][0] <= '9' {
		s.Version, rest = rest[n-1], rest[:n-1]
	}
	s.Product = strings.Join(rest, " ")
	return s, true
}

// certOf reads a tls_cert row's value ("<sha256> CN=<name> expires
// <YYYY-MM-DD>", see certValue) back into a certificate summary.
func certOf(v string) host.Cert {
	fp, rest, _ := strings.Cut(strings.TrimSpace(v), " ")
	c := host.Cert{SHA256Fingerprint: fp}
	if i := strings.LastIndex(rest, "expires "); i >= 0 {
		if t, err := time.Parse("2006-01-02", strings.TrimSpace(rest[i+len("expires "):])); err == nil {
			c.NotAfter = t.Unix()
			rest = rest[:i]
		}
	}
	if cn, ok := strings.CutPrefix(strings.TrimSpace(rest), "CN="); ok {
		c.SubjectCommonName = cn
	}
	return c
}

// Compare returns what differs between two states of one host, as ledger
// changes (without host, source or time): per set category the values new
// in b and those removed from a, per scalar one changed (or new, or
// removed) row. a nil means the host did not exist: one host row.
func Compare(a *host.Host, b host.Host) []Change {
	if a == nil {
		return []Change{{Category: CategoryHost, Change: New, Value: b.Host}}
	}
	d := differ{}
	for _, cat := range []Category{CategoryDNSA, CategoryDNSAAAA, CategoryDNSCNAME, CategoryDNSMX, CategoryDNSNS,
		CategoryDNSTXT, CategoryPort, CategoryTechnology} {
		av, bv := values(a, cat), values(&b, cat)
		d.sets(cat, av, bv)
		for _, v := range av {
			if !slices.Contains(bv, v) {
				d.add(cat, Removed, "", v)
			}
		}
	}
	d.services(a, &b)
	d.scalarBoth(CategoryTLSCert, certValue(a.Cert), certValue(b.Cert))
	d.scalarBoth(CategoryHTTPStatus, statusValue(a.HTTPStatusCode), statusValue(b.HTTPStatusCode))
	d.scalarBoth(CategoryHTTPTitle, a.HTTPTitle, b.HTTPTitle)
	return d.out
}

// scalarBoth is scalar that also reports a value that went away.
func (d *differ) scalarBoth(cat Category, old, nw string) {
	if nw == "" && old != "" {
		d.add(cat, Removed, "", old)
		return
	}
	d.scalar(cat, old, nw)
}

// State is a host as it stood from Since until Until (0: it still stands).
type State struct {
	Host         host.Host
	Since, Until int64
}

// States returns every state of h its ledger rows (all of them, newest
// first) describe, newest first: one per time rows were written, the
// oldest being the host as first indexed.
func States(h host.Host, rows []Change) []State {
	var out []State
	cur := clone(h)
	until := int64(0)
	for i := 0; i < len(rows); {
		t := rows[i].Time
		snap := clone(cur)
		if i > 0 {
			snap.IsResolvable, snap.IsLive, snap.HasIPv6, snap.HasPrivateIP = false, false, false, false
			snap.Cert.IsValidHostname = false
		}
		snap.Derive()
		out = append(out, State{Host: snap, Since: t, Until: until})
		until = t
		first := false
		for ; i < len(rows) && rows[i].Time == t; i++ {
			if rows[i].Category == CategoryHost && rows[i].Change == New {
				first = true
			}
			Undo(&cur, rows[i])
		}
		if first {
			break
		}
	}
	return out
}
