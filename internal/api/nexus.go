package api

import (
	"math/big"
	"net/http"
	"net/netip"
	"strings"

	"github.com/periscope-oss/periscope/internal/asset"
	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// FullHunt's Nexus lookups (fullhunt/fullhunt-skill,
// fullhunt/references/endpoints.md, "Nexus"), answered from our own data:
// the enrichment tables the host ingest uses (provider ranges and, when
// configured, MMDB files) and the host index. Nothing is looked up on the
// network: a host name is "resolved" through the index. FullHunt answers
// some failures with a charged 200; these routes answer a real status
// (422 for bad input, 404 for what we do not hold), never charged.

// nexusMaxRows bounds the name lists, as FullHunt's 10,000.
const nexusMaxRows = 10000

// ipLookupResult is the result object of /nexus/ip-lookup.
type ipLookupResult struct {
	ASN               int      `json:"asn"`
	Organization      string   `json:"organization"`
	ISP               string   `json:"isp"`
	CountryCode       string   `json:"country_code"`
	CountryName       string   `json:"country_name"`
	CityName          string   `json:"city_name"`
	PostalCode        string   `json:"postal_code"`
	CloudProvider     string   `json:"cloud_provider"`
	CloudRegion       string   `json:"cloud_region"`
	CDNProvider       string   `json:"cdn_provider"`
	CDNRegion         string   `json:"cdn_region"`
	IsCDN             bool     `json:"is_cdn"`
	IsCloud           bool     `json:"is_cloud"`
	IsCloudflare      bool     `json:"is_cloudflare"`
	IsPrivate         bool     `json:"is_private"`
	IsPublic          bool     `json:"is_public"`
	IsIPv4            bool     `json:"is_ipv4"`
	IsIPv6            bool     `json:"is_ipv6"`
	IPDecimal         string   `json:"ip_decimal"`
	PTR               []string `json:"ptr"`
	LocationLatitude  float64  `json:"location_latitude"`
	LocationLongitude float64  `json:"location_longitude"`
	HostsCount        int      `json:"hosts_count"`
}

type ipLookupResponse struct {
	Status       int            `json:"status"`
	Message      string         `json:"message"`
	Result       ipLookupResult `json:"result"`
	Query        string         `json:"query"`
	ResolvedHost string         `json:"resolved_host"`
	Resolvable   bool           `json:"resolvable"`
	OtherIPs     []string       `json:"other_ips"`
	Credits      int64          `json:"credits"`
}

// handleIPLookup answers GET /nexus/ip-lookup?query=: an address, or a
// host name whose address the index holds.
func (s *Server) handleIPLookup(w http.ResponseWriter, r *http.Request) error {
	query := strings.TrimSpace(r.URL.Query().Get("query"))
	if query == "" {
		return periscope.Errorf(periscope.EUnprocessable, "query is required: an IP address or a host name.")
	}
	if err := checkText("query", query, 256); err != nil {
		return unprocessable(err)
	}
	resp := ipLookupResponse{Status: http.StatusOK, Query: query, OtherIPs: []string{}}
	addr, err := netip.ParseAddr(query)
	if err != nil {
		n, nerr := host.Normalize(query)
		if nerr != nil {
			return periscope.Errorf(periscope.EUnprocessable, "query must be an IP address or a host name (got %q).", periscope.Clip(query, 64))
		}
		h, err := s.hosts.Host(r.Context(), n.Host)
		if err != nil {
			return err
		}
		if addr, err = netip.ParseAddr(h.IPAddress); err != nil {
			return periscope.Errorf(periscope.ENotFound, "No address of %q is known: the index holds the name but no resolution.", n.Host)
		}
		resp.ResolvedHost, resp.Resolvable = n.Host, true
		for _, ip := range append(append([]string{}, h.DNS.A...), h.DNS.AAAA...) {
			if ip != h.IPAddress {
				resp.OtherIPs = append(resp.OtherIPs, ip)
			}
		}
	} else if addr.Zone() != "" {
		return periscope.Errorf(periscope.EUnprocessable, "query must not carry an IPv6 zone.")
	}
	addr = addr.Unmap()
	page, err := s.hosts.SearchHosts(r.Context(), hoststore.HostQuery{Terms: []string{hoststore.Term(hoststore.TermIP, addr.String())}, Limit: 1})
	if err != nil {
		return err
	}
	res := &resp.Result
	res.HostsCount, res.PTR = page.Total, []string{}
	// Public is what organizations may register as ranges: public
	// unicast, not private, shared, documentation or other reserved space.
	_, rerr := asset.IPRange(addr.String(), asset.DefaultLimits)
	private := rerr != nil
	res.IsPrivate, res.IsPublic, res.IsIPv4, res.IsIPv6 = private, !private, addr.Is4(), addr.Is6()
	res.IPDecimal = new(big.Int).SetBytes(addr.AsSlice()).String()
	if s.enrich != nil {
		e := s.enrich.Enrich(addr, nil)
		g := e.Geo
		res.ASN, res.Organization, res.ISP, res.CountryCode, res.CountryName = g.ASN, g.Organization, g.ISP, g.CountryCode, g.CountryName
		res.CityName, res.PostalCode, res.LocationLatitude, res.LocationLongitude = g.City, g.PostalCode, g.Latitude, g.Longitude
		res.IsCloud, res.IsCDN, res.IsCloudflare = e.IsCloud, e.IsCDN || e.IsWAF, e.IsCloudflare
		if e.IsCloud {
			res.CloudProvider, res.CloudRegion = e.Provider, e.Region
		}
		if res.IsCDN {
			res.CDNProvider = e.CDN
			if e.Provider == e.CDN {
				res.CDNRegion = e.Region
			}
		}
	}
	// What the enrichment tables do not say, the index's record of a host
	// at this address may (its metadata came with the scan).
	if len(page.Hosts) > 0 {
		h := page.Hosts[0]
		m := h.IPMetadata
		if res.ASN == 0 {
			res.ASN = m.ASN
		}
		for _, f := range []struct {
			dst *string
			v   string
		}{
			{&res.Organization, m.Organization}, {&res.ISP, m.ISP}, {&res.CountryCode, m.CountryCode},
			{&res.CountryName, m.CountryName}, {&res.CityName, m.CityName}, {&res.PostalCode, m.PostalCode},
		} {
			if *f.dst == "" {
				*f.dst = f.v
			}
		}
		if res.LocationLatitude == 0 && res.LocationLongitude == 0 {
			res.LocationLatitude, res.LocationLongitude = m.LocationLatitude, m.LocationLongitude
		}
		if res.CloudProvider == "" && h.Cloud.Provider != "" {
			res.IsCloud, res.CloudProvider, res.CloudRegion = true, h.Cloud.Provider, h.Cloud.Region
		}
		if res.CDNProvider == "" && h.CDN != "" {
			res.IsCDN, res.CDNProvider = true, h.CDN
		}
		res.IsCloudflare = res.IsCloudflare || h.IsCloudflare
		res.PTR = append(res.PTR, h.DNS.PTR...)
	}
	s.writeWithCredits(w, r, func(balance int64) any {
		resp.Credits = balance
		return resp
	})
	return nil
}

// nameList is the answer of the Nexus name lookups.
type nameList struct {
	Status  int      `json:"status"`
	Count   int      `json:"count"`
	Data    []string `json:"data"`
	Credits int64    `json:"credits"`
}

// handlePassiveDNS answers GET /nexus/passive-dns/lookup?domain=: the names
// the index has seen under the domain (up to 10,000).
func (s *Server) handlePassiveDNS(w http.ResponseWriter, r *http.Request) error {
	raw := strings.TrimSpace(r.URL.Query().Get("domain"))
	if raw == "" {
		return periscope.Errorf(periscope.EUnprocessable, "domain is required.")
	}
	domain, err := asset.Domain(raw)
	if err != nil {
		return unprocessable(err)
	}
	l, err := s.hosts.Listing(r.Context(), domain, false, nexusMaxRows, nexusMaxRows)
	if err != nil {
		return err
	}
	names := l.Names
	s.writeWithCredits(w, r, func(balance int64) any {
		return nameList{Status: http.StatusOK, Count: len(names), Data: names, Credits: balance}
	})
	return nil
}

// handleMyIP answers GET /public/my-ip (no key, no credit): the client's
// address as the server sees it (behind trusted proxies, their forwarded
// address).
func (s *Server) handleMyIP(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"current_ip_address": s.clientIP(r)})
	return nil
}

// certHost is one row of /nexus/cloud-certs/dns-search.
type certHost struct {
	DNS  []string `json:"dns"`
	Host string   `json:"host"`
	Port int      `json:"port"`
}

type certHostList struct {
	Status  int        `json:"status"`
	Count   int        `json:"count"`
	Data    []certHost `json:"data"`
	Credits int64      `json:"credits"`
}

// handleCertDNSSearch answers GET /nexus/cloud-certs/dns-search?query=:
// the hosts whose certificates name a DNS name starting with query (at
// least 3 characters), from the certificates stored in the host index
// (scans and CT entries alike), up to 10,000.
func (s *Server) handleCertDNSSearch(w http.ResponseWriter, r *http.Request) error {
	q := strings.TrimSpace(r.URL.Query().Get("query"))
	if q == "" {
		return periscope.Errorf(periscope.EUnprocessable, "query is required: the start of a DNS name, at least 3 characters.")
	}
	if err := checkText("query", q, 253); err != nil {
		return unprocessable(err)
	}
	if len([]rune(q)) < 3 {
		return periscope.Errorf(periscope.EUnprocessable, "query must be at least 3 characters.")
	}
	hs, err := s.hosts.CertNamePrefix(r.Context(), q, nexusMaxRows)
	if err != nil {
		return err
	}
	rows := make([]certHost, len(hs))
	for i, h := range hs {
		rows[i] = certHost{DNS: append([]string{}, h.Cert.DNSNames...), Host: h.Host, Port: tlsPort(h)}
	}
	s.writeWithCredits(w, r, func(balance int64) any {
		return certHostList{Status: http.StatusOK, Count: len(rows), Data: rows, Credits: balance}
	})
	return nil
}

// tlsPort is the port a host's certificate was most likely seen on: 443
// when open, else its first TLS-looking service, else 443.
func tlsPort(h host.Host) int {
	for _, p := range h.NetworkPorts {
		if p == 443 {
			return 443
		}
	}
	for _, sv := range h.NetworkServices {
		if strings.Contains(sv.Service, "https") || strings.Contains(sv.Service, "ssl") || strings.Contains(sv.Service, "tls") {
			return sv.Port
		}
	}
	return 443
}
