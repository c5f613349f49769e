package zone

import (
	"errors"
	"io"
	"strings"
)

// RegisteredDomains reads a zone and passes to emit the owner of every NS
// record strictly below the zone apex: the delegated, registered domains of
// a TLD zone such as "com". The apex is opts.Origin when set, otherwise the
// owner of the first SOA record, otherwise the first $ORIGIN. A domain is
// emitted once per run of consecutive NS records (zone files group a
// domain's NS records; no set of all names is kept, so memory stays flat
// for zones of any size). Record errors are passed to reject and skipped;
// an error from emit or a fatal read error is returned.
func RegisteredDomains(r io.Reader, opts Options, emit func(domain string) error, reject func(*ParseError)) error {
	z, err := NewReader(r, opts)
	if err != nil {
		return err
	}
	apex, hasApex := z.Origin()
	last := ""
	for {
		rec, err := z.Next()
		if err == io.EOF {
			return nil
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
		if rec.Type != "NS" || rec.Name == last || !below(rec.Name, apex, hasApex) {
			continue
		}
		last = rec.Name
		if err := emit(rec.Name); err != nil {
			return err
		}
	}
}

// below reports whether name is a strict subdomain of apex ("" is the root).
func below(name, apex string, hasApex bool) bool {
	if !hasApex || name == "." || name == apex {
		return false
	}
	return apex == "" || strings.HasSuffix(name, "."+apex)
}
