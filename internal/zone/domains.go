package zone

import (
	"errors"
	"io"
	"slices"
	"strings"
)

// RegisteredDomains reads a zone and passes to emit the owner of every NS
// record strictly below the zone apex: the delegated, registered domains of
// a TLD zone such as "com". The apex is opts.Origin when set, otherwise the
// owner of the first SOA record, otherwise the first $ORIGIN. A domain is
// emitted once per run of consecutive NS records (zone files group a
// domain's NS records; no set of all names is kept, so memory stays flat
// for zones of any size). Record errors are passed to reject and skipped;
// an error from emit or a fatal read error is returned. It is Delegations
// without the name servers.
func RegisteredDomains(r io.Reader, opts Options, emit func(domain string) error, reject func(*ParseError)) error {
	return Delegations(r, opts, func(domain string, _ []string) error { return emit(domain) }, reject)
}

// below reports whether name is a strict subdomain of apex ("" is the root).
func below(name, apex string, hasApex bool) bool {
	if !hasApex || name == "." || name == apex {
		return false
	}
	return apex == "" || strings.HasSuffix(name, "."+apex)
}

// Delegations is RegisteredDomains with each domain's name servers: emit is
// called once per run of consecutive NS records of a domain strictly below
// the apex, with the servers of that run (absolute, lower case, without the
// trailing dot), when the run ends: at the next NS record of another owner
// or at the end of the input. Only the pending run is held in memory.
func Delegations(r io.Reader, opts Options, emit func(domain string, ns []string) error, reject func(*ParseError)) error {
	z, err := NewReader(r, opts)
	if err != nil {
		return err
	}
	apex, hasApex := z.Origin()
	owner := ""
	var ns []string
	flush := func() error {
		if owner == "" {
			return nil
		}
		err := emit(owner, ns)
		owner, ns = "", nil
		return err
	}
	for {
		rec, err := z.Next()
		if err == io.EOF {
			return flush()
		}
		var pe *ParseError
		if errors.As(err, &pe) {
			reject(pe)
			continue
		}
		if err != nil {
			return err
		}
		if !hasApex {
			switch rec.Type {
			case "SOA":
				apex, hasApex = rec.Name, true
			default:
				if o, ok := z.Origin(); ok {
					apex, hasApex = o, true
				}
			}
			if apex == "." {
				apex = ""
			}
		}
		if rec.Type != "NS" || !below(rec.Name, apex, hasApex) {
			continue
		}
		if rec.Name != owner {
			if err := flush(); err != nil {
				return err
			}
			owner = rec.Name
		}
		if len(rec.RData) > 0 && !slices.Contains(ns, rec.RData[0]) {
			ns = append(ns, rec.RData[0])
		}
	}
}
