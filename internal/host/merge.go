package host

import (
	"cmp"
	"slices"
)

// Merge folds the newer observation nw into old and returns the merged host
// in canonical form (see Derive). Nothing that nw lacks is erased:
//   - lists are the union of both, sorted and deduplicated;
//   - services are merged by (port, protocol), keeping the earliest
//     first_seen, the latest last_seen, and each newer non-empty field;
//   - scalars (strings, numbers, the cloud, ip_metadata and cert_object
//     fields one by one) are replaced only by non-empty newer values;
//   - flags are ORed: a flag once observed true stays true;
//   - first_seen is the earliest known (non-zero) time, last_seen the latest.
//
// Host, Domain, TLD and Subdomain are kept from old when set there.
func Merge(old, nw Host) Host {
	m := old
	m.Host = pick(old.Host, nw.Host)
	m.Domain = pick(old.Domain, nw.Domain)
	m.TLD = pick(old.TLD, nw.TLD)
	m.Subdomain = pick(old.Subdomain, nw.Subdomain)
	// Identity fields above prefer old; everything observed prefers new.
	m.IPAddress = pick(nw.IPAddress, old.IPAddress)

	m.IsLive = old.IsLive || nw.IsLive
	m.IsResolvable = old.IsResolvable || nw.IsResolvable
	m.IsCloud = old.IsCloud || nw.IsCloud
	m.IsCDN = old.IsCDN || nw.IsCDN
	m.IsCloudflare = old.IsCloudflare || nw.IsCloudflare
	m.HasIPv6 = old.HasIPv6 || nw.HasIPv6
	m.HasPrivateIP = old.HasPrivateIP || nw.HasPrivateIP

	m.CDN = pick(nw.CDN, old.CDN)
	m.Cloud.Provider = pick(nw.Cloud.Provider, old.Cloud.Provider)
	m.Cloud.Region = pick(nw.Cloud.Region, old.Cloud.Region)

	m.DNS = DNS{
		A:     union(old.DNS.A, nw.DNS.A),
		AAAA:  union(old.DNS.AAAA, nw.DNS.AAAA),
		CNAME: union(old.DNS.CNAME, nw.DNS.CNAME),
		MX:    union(old.DNS.MX, nw.DNS.MX),
		NS:    union(old.DNS.NS, nw.DNS.NS),
		PTR:   union(old.DNS.PTR, nw.DNS.PTR),
		TXT:   union(old.DNS.TXT, nw.DNS.TXT),
	}
	m.HTTPStatusCode = pick(nw.HTTPStatusCode, old.HTTPStatusCode)
	m.HTTPTitle = pick(nw.HTTPTitle, old.HTTPTitle)

	o, n := old.IPMetadata, nw.IPMetadata
	m.IPMetadata = IPMetadata{
		ASN:          pick(n.ASN, o.ASN),
		Organization: pick(n.Organization, o.Organization),
		ISP:          pick(n.ISP, o.ISP),
		CountryCode:  pick(n.CountryCode, o.CountryCode),
		CountryName:  pick(n.CountryName, o.CountryName),
		CityName:     pick(n.CityName, o.CityName),
		Region:       pick(n.Region, o.Region),
		PostalCode:   pick(n.PostalCode, o.PostalCode),
	}
	// Latitude and longitude are one point: take both from the newer
	// observation when it has a location, otherwise keep the old point.
	if n.LocationLatitude != 0 || n.LocationLongitude != 0 {
		m.IPMetadata.LocationLatitude, m.IPMetadata.LocationLongitude = n.LocationLatitude, n.LocationLongitude
	} else {
		m.IPMetadata.LocationLatitude, m.IPMetadata.LocationLongitude = o.LocationLatitude, o.LocationLongitude
	}

	m.NetworkPorts = union(old.NetworkPorts, nw.NetworkPorts)
	m.NetworkServices = mergeServices(old.NetworkServices, nw.NetworkServices)
	m.Products = union(old.Products, nw.Products)
	m.Tags = union(old.Tags, nw.Tags)
	m.Web = union(old.Web, nw.Web)
	m.Categories = union(old.Categories, nw.Categories)
	m.URLs = union(old.URLs, nw.URLs)
	m.Extracted = mergeExtracted(old.Extracted, nw.Extracted)
	m.Cert = mergeCert(old.Cert, nw.Cert)

	m.FirstSeen = minSeen(old.FirstSeen, nw.FirstSeen)
	m.LastSeen = max(old.LastSeen, nw.LastSeen)
	m.Derive()
	return m
}

func mergeCert(o, n Cert) Cert {
	// A certificate with a different fingerprint is another certificate: the
	// one issued later (NotBefore; the newer observation on a tie) stands
	// as a whole, so fields of two certificates never mix, and an older
	// certificate read later from a file or a CT log does not replace the
	// renewal a scan saw.
	if n.SHA256Fingerprint != "" && o.SHA256Fingerprint != "" && n.SHA256Fingerprint != o.SHA256Fingerprint {
		if o.NotBefore > n.NotBefore {
			return o
		}
		n.DNSNames = sortedSet(n.DNSNames)
		n.IPAddresses = sortedSet(n.IPAddresses)
		n.EmailAddresses = sortedSet(n.EmailAddresses)
		return n
	}
	c := Cert{
		SubjectCommonName:  pick(n.SubjectCommonName, o.SubjectCommonName),
		SubjectOrg:         pick(n.SubjectOrg, o.SubjectOrg),
		IssuerCommonName:   pick(n.IssuerCommonName, o.IssuerCommonName),
		IssuerOrg:          pick(n.IssuerOrg, o.IssuerOrg),
		NotBefore:          pick(n.NotBefore, o.NotBefore),
		NotAfter:           pick(n.NotAfter, o.NotAfter),
		SerialNumber:       pick(n.SerialNumber, o.SerialNumber),
		SHA256Fingerprint:  pick(n.SHA256Fingerprint, o.SHA256Fingerprint),
		SHA1Fingerprint:    pick(n.SHA1Fingerprint, o.SHA1Fingerprint),
		MD5Fingerprint:     pick(n.MD5Fingerprint, o.MD5Fingerprint),
		SignatureAlgorithm: pick(n.SignatureAlgorithm, o.SignatureAlgorithm),
		SubjectCountry:     pick(n.SubjectCountry, o.SubjectCountry),
		SubjectProvince:    pick(n.SubjectProvince, o.SubjectProvince),
		SubjectLocality:    pick(n.SubjectLocality, o.SubjectLocality),
		IssuerCountry:      pick(n.IssuerCountry, o.IssuerCountry),
		IssuerSerialNumber: pick(n.IssuerSerialNumber, o.IssuerSerialNumber),
		IssuerString:       pick(n.IssuerString, o.IssuerString),
		IsValidHostname:    n.IsValidHostname || o.IsValidHostname,
		RemoteIPAddress:    pick(n.RemoteIPAddress, o.RemoteIPAddress),
	}
	c.DNSNames = union(o.DNSNames, n.DNSNames)
	c.IPAddresses = union(o.IPAddresses, n.IPAddresses)
	c.EmailAddresses = union(o.EmailAddresses, n.EmailAddresses)
	return c
}

// mergeExtracted returns the union of a and b, kind by kind.
func mergeExtracted(a, b Extracted) Extracted {
	m := make(Extracted, len(a)+len(b))
	for _, e := range []Extracted{a, b} {
		for k, v := range e {
			m[k] = union(m[k], v)
		}
	}
	return m
}

// pick returns nw unless it is the zero value.
func pick[T comparable](nw, old T) T {
	var zero T
	if nw != zero {
		return nw
	}
	return old
}

func minSeen(a, b int64) int64 {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	}
	return min(a, b)
}

// union returns the sorted, deduplicated union of a and b as a new slice.
func union[T int | string](a, b []T) []T {
	u := make([]T, 0, len(a)+len(b))
	u = append(append(u, a...), b...)
	return sortedSet(u)
}

// mergeServices merges nw into old by (port, protocol) and returns a new
// slice ordered by port then protocol. Entries with port 0 are dropped.
func mergeServices(old, nw []Service) []Service {
	all := make([]Service, 0, len(old)+len(nw))
	all = append(append(all, old...), nw...)
	for i := range all {
		if all[i].Protocol == "" {
			all[i].Protocol = "tcp"
		}
	}
	// Stable sort keeps old before new within a key, so folding left to
	// right lets newer values win.
	slices.SortStableFunc(all, func(a, b Service) int {
		return cmp.Or(cmp.Compare(a.Port, b.Port), cmp.Compare(a.Protocol, b.Protocol))
	})
	out := all[:0]
	for _, s := range all {
		if s.Port <= 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Port == s.Port && out[n-1].Protocol == s.Protocol {
			p := &out[n-1]
			p.Service = pick(s.Service, p.Service)
			p.Product = pick(s.Product, p.Product)
			p.Version = pick(s.Version, p.Version)
			p.Banner = pick(s.Banner, p.Banner)
			p.FirstSeen = minSeen(p.FirstSeen, s.FirstSeen)
			p.LastSeen = max(p.LastSeen, s.LastSeen)
			continue
		}
		out = append(out, s)
	}
	return out
}
