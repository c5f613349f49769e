package api

import (
	"encoding/binary"
	"errors"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// GET /intel/{route_type}: FullHunt's intel lookups (fullhunt/fullhunt-skill,
// fullhunt/references/endpoints.md, "Intel"), answered from the host index.
// Each route type takes one parameter (ip-range-to-hosts two) and answers
// short rows, not host objects; the answer is not paged (page is ignored)
// and stops at intelLimit rows, so total_query_results is the count
// returned, as FullHunt documents. Bad input is a 422, FullHunt's status.

// Intel row limits: FullHunt's 100, and 10,000 for enterprise accounts.
const (
	intelLimit           = 100
	intelEnterpriseLimit = 10000
)

// intelRow is one result row of an intel lookup.
type intelRow struct {
	Host         string `json:"host"`
	Domain       string `json:"domain"`
	IPAddress    string `json:"ip_address"`
	DNSPTR       string `json:"dns_ptr"`
	ASN          int    `json:"asn"`
	Organization string `json:"organization"`
}

type intelResponse struct {
	Status            int               `json:"status"`
	Message           string            `json:"message"`
	Results           []intelRow        `json:"results"`
	Query             map[string]string `json:"query"`
	TotalQueryResults int               `json:"total_query_results"`
	Credits           int64             `json:"credits"`
}

// intelRoute is one route type: its parameters and its lookup.
type intelRoute struct {
	params []string
	// lookup returns at most limit hosts for the validated parameter
	// values (in params order).
	lookup func(s *Server, r *http.Request, vals []string, limit int) ([]host.Host, error)
}

// intelRoutes are the route types of FullHunt's reference.
var intelRoutes = map[string]intelRoute{
	"host":                 {[]string{"host"}, intelHost},
	"domain":               {[]string{"domain"}, intelDomain},
	"tag":                  {[]string{"tag"}, intelTerm(hoststore.TermTag)},
	"web-tech":             {[]string{"tech"}, intelTerm(hoststore.TermTech)},
	"product":              {[]string{"product"}, intelTerm(hoststore.TermProduct)},
	"ip-to-hosts":          {[]string{"ip"}, intelIP},
	"ip-range-to-hosts":    {[]string{"ip_start", "ip_end"}, intelIPRange},
	"asn-to-hosts":         {[]string{"asn"}, intelASN(false)},
	"asn-to-virtual-hosts": {[]string{"asn"}, intelASN(true)},
	"dns-mx-to-hosts":      {[]string{"dns_mx"}, intelDNS("dns_mx", hoststore.TermDNSMX)},
	"dns-ns-to-hosts":      {[]string{"dns_ns"}, intelDNS("dns_ns", hoststore.TermDNSNS)},
}

// handleIntel answers GET /intel/{route_type}.
func (s *Server) handleIntel(w http.ResponseWriter, r *http.Request) error {
	typ := r.PathValue("route_type")
	rt, ok := intelRoutes[typ]
	if !ok {
		return periscope.Errorf(periscope.EUnprocessable, "%q is not an intel route type: use host, domain, tag, web-tech, product, ip-to-hosts, ip-range-to-hosts, asn-to-hosts, asn-to-virtual-hosts, dns-mx-to-hosts or dns-ns-to-hosts.", periscope.Clip(typ, 64))
	}
	query := map[string]string{"route_type": typ}
	vals := make([]string, len(rt.params))
	for i, p := range rt.params {
		v := strings.TrimSpace(r.URL.Query().Get(p))
		if v == "" {
			return periscope.Errorf(periscope.EUnprocessable, "%s is required for /intel/%s.", p, typ)
		}
		if err := checkText(p, v, maxFilterText); err != nil {
			return unprocessable(err)
		}
		vals[i], query[p] = v, v
	}
	limit := intelLimit
	if principalOf(r).Account.Enterprise {
		limit = intelEnterpriseLimit
	}
	hs, err := rt.lookup(s, r, vals, limit)
	if err != nil {
		return unprocessable(err)
	}
	rows := make([]intelRow, len(hs))
	for i, h := range hs {
		rows[i] = intelRow{Host: h.Host, Domain: h.Domain, IPAddress: h.IPAddress,
			ASN: h.IPMetadata.ASN, Organization: h.IPMetadata.Organization}
		if len(h.DNS.PTR) > 0 {
			rows[i].DNSPTR = h.DNS.PTR[0]
		}
	}
	s.writeWithCredits(w, r, func(balance int64) any {
		return intelResponse{Status: http.StatusOK, Results: rows, Query: query, TotalQueryResults: len(rows), Credits: balance}
	})
	return nil
}

// unprocessable turns a 400 for a bad parameter into FullHunt's 422 with the
// same message; other errors pass.
func unprocessable(err error) error {
	var pe *periscope.Error
	if errors.As(err, &pe) && (pe.Code == periscope.EInvalid || pe.Code == periscope.EMissing) {
		return &periscope.Error{Code: periscope.EUnprocessable, Message: pe.Message, Err: pe.Err}
	}
	return err
}

func intelHost(s *Server, r *http.Request, vals []string, _ int) ([]host.Host, error) {
	n, err := host.Normalize(vals[0])
	if err != nil {
		return nil, periscope.Errorf(periscope.EUnprocessable, "host must be a host name or IP address (got %q).", periscope.Clip(vals[0], 64))
	}
	h, err := s.hosts.Host(r.Context(), n.Host)
	if err != nil {
		return nil, err // a 404 is not charged
	}
	return []host.Host{h}, nil
}

func intelDomain(s *Server, r *http.Request, vals []string, limit int) ([]host.Host, error) {
	q := hoststore.HostQuery{Limit: limit}
	if err := addStringFilter(&q, "domain", "", vals[0]); err != nil {
		return nil, err
	}
	return searchIntel(s, r, q)
}

func intelTerm(field string) func(*Server, *http.Request, []string, int) ([]host.Host, error) {
	return func(s *Server, r *http.Request, vals []string, limit int) ([]host.Host, error) {
		return searchIntel(s, r, hoststore.HostQuery{Terms: []string{hoststore.Term(field, vals[0])}, Limit: limit})
	}
}

func intelIP(s *Server, r *http.Request, vals []string, limit int) ([]host.Host, error) {
	a, err := netip.ParseAddr(vals[0])
	if err != nil || a.Zone() != "" {
		return nil, periscope.Errorf(periscope.EUnprocessable, "ip must be an IP address (got %q).", periscope.Clip(vals[0], 64))
	}
	return searchIntel(s, r, hoststore.HostQuery{Terms: []string{hoststore.Term(hoststore.TermIP, a.Unmap().String())}, Limit: limit})
}

// intelIPRange lists the hosts whose address is in [ip_start, ip_end]: the
// range is cut into the CIDR blocks that tile it, each an index range. The
// range is bounded like the OEM attack-surface search: at most a /16 worth
// of IPv4 addresses, and within one /48 for IPv6.
func intelIPRange(s *Server, r *http.Request, vals []string, limit int) ([]host.Host, error) {
	lo, err1 := netip.ParseAddr(vals[0])
	hi, err2 := netip.ParseAddr(vals[1])
	if err1 != nil || err2 != nil || lo.Zone() != "" || hi.Zone() != "" {
		return nil, periscope.Errorf(periscope.EUnprocessable, "ip_start and ip_end must be IP addresses.")
	}
	lo, hi = lo.Unmap(), hi.Unmap()
	if lo.Is4() != hi.Is4() || hi.Less(lo) {
		return nil, periscope.Errorf(periscope.EUnprocessable, "ip_start and ip_end must be of one family with ip_start ≤ ip_end.")
	}
	if lo.Is4() {
		a, b := lo.As4(), hi.As4()
		if binary.BigEndian.Uint32(b[:])-binary.BigEndian.Uint32(a[:]) >= 1<<(32-attackSurfaceLimits.MinPrefixV4) {
			return nil, periscope.Errorf(periscope.EUnprocessable, "The range is too large: at most %d IPv4 addresses.", 1<<(32-attackSurfaceLimits.MinPrefixV4))
		}
	} else if !netip.PrefixFrom(lo, attackSurfaceLimits.MinPrefixV6).Masked().Contains(hi) {
		return nil, periscope.Errorf(periscope.EUnprocessable, "The range is too large: an IPv6 range must lie within one /%d.", attackSurfaceLimits.MinPrefixV6)
	}
	var out []host.Host
	for _, p := range rangePrefixes(lo, hi) {
		hs, err := searchIntel(s, r, hoststore.HostQuery{IPRange: p, Limit: limit - len(out)})
		if err != nil {
			return nil, err
		}
		if out = append(out, hs...); len(out) >= limit {
			break
		}
	}
	return out, nil
}

// rangePrefixes returns the fewest CIDR blocks that tile [lo, hi] (lo ≤ hi,
// one family), in address order.
func rangePrefixes(lo, hi netip.Addr) []netip.Prefix {
	var out []netip.Prefix
	for {
		bits := lo.BitLen()
		for b := bits - 1; b >= 0; b-- {
			p := netip.PrefixFrom(lo, b)
			if p.Masked().Addr() != lo || hi.Less(lastAddr(p)) {
				break
			}
			bits = b
		}
		p := netip.PrefixFrom(lo, bits)
		out = append(out, p)
		last := lastAddr(p)
		if !last.Less(hi) {
			return out
		}
		lo = last.Next()
	}
}

// lastAddr returns the last address of a block.
func lastAddr(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr()
	if a.Is4() {
		b := a.As4()
		for i := p.Bits(); i < 32; i++ {
			b[i/8] |= 1 << (7 - i%8)
		}
		return netip.AddrFrom4(b)
	}
	b := a.As16()
	for i := p.Bits(); i < 128; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	return netip.AddrFrom16(b)
}

// intelASN lists the hosts of an ASN; virtual hosts are those named by a
// DNS name rather than by their bare address.
func intelASN(virtual bool) func(*Server, *http.Request, []string, int) ([]host.Host, error) {
	return func(s *Server, r *http.Request, vals []string, limit int) ([]host.Host, error) {
		asn, err := strconv.ParseUint(strings.TrimPrefix(strings.ToUpper(vals[0]), "AS"), 10, 32)
		if err != nil || asn == 0 {
			return nil, periscope.Errorf(periscope.EUnprocessable, "asn must be a positive integer (got %q).", periscope.Clip(vals[0], 32))
		}
		q := hoststore.HostQuery{Terms: []string{hoststore.Term(hoststore.TermASN, strconv.FormatUint(asn, 10))}, Limit: limit}
		if !virtual {
			return searchIntel(s, r, q)
		}
		// Bare-address hosts are skipped page by page: no index term
		// tells names from addresses. The walk stops after
		// virtualHostScan hosts, so an ASN of bare addresses costs a
		// bounded number of reads (it answers fewer rows).
		var out []host.Host
		for q.Limit = max(limit, 200); q.Offset < virtualHostScan; q.Offset += q.Limit {
			res, err := s.hosts.SearchHosts(r.Context(), q)
			if err != nil {
				return nil, err
			}
			for _, h := range res.Hosts {
				if _, err := netip.ParseAddr(h.Host); err != nil {
					if out = append(out, h); len(out) == limit {
						return out, nil
					}
				}
			}
			if len(res.Hosts) < q.Limit {
				return out, nil
			}
		}
		return out, nil
	}
}

// virtualHostScan bounds the hosts asn-to-virtual-hosts reads to find its
// named ones.
const virtualHostScan = 50000

// intelDNS lists the hosts with an MX or NS record. FullHunt writes the
// names with their trailing dot; the index holds records as their source
// gave them, so both spellings are looked up.
func intelDNS(param, field string) func(*Server, *http.Request, []string, int) ([]host.Host, error) {
	return func(s *Server, r *http.Request, vals []string, limit int) ([]host.Host, error) {
		name := strings.TrimSuffix(vals[0], ".")
		if _, err := host.Normalize(name); err != nil || name == "" {
			return nil, periscope.Errorf(periscope.EUnprocessable, "%s must be a DNS name (got %q).", param, periscope.Clip(vals[0], 64))
		}
		var out []host.Host
		seen := map[string]bool{}
		for _, v := range []string{name + ".", name} {
			hs, err := searchIntel(s, r, hoststore.HostQuery{Terms: []string{hoststore.Term(field, v)}, Limit: limit})
			if err != nil {
				return nil, err
			}
			for _, h := range hs {
				if !seen[h.Host] && len(out) < limit {
					seen[h.Host] = true
					out = append(out, h)
				}
			}
		}
		return out, nil
	}
}

func searchIntel(s *Server, r *http.Request, q hoststore.HostQuery) ([]host.Host, error) {
	if q.Limit <= 0 {
		return nil, nil
	}
	res, err := s.hosts.SearchHosts(r.Context(), q)
	if err != nil {
		return nil, err
	}
	return res.Hosts, nil
}
