package host

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/periscope-oss/periscope/internal/jsontext"
)

// appendJSON appends h as encoding/json encodes it (the same bytes: a test
// compares them), written by hand because the store encodes every host it
// stores and reflection made that a tenth of a bulk ingest. Keep it in step
// with the struct tags; the test fails when a field is added.
func appendJSON(b []byte, h *Host) ([]byte, error) {
	b = append(b, `{"host":`...)
	b = appendString(b, h.Host)
	b = append(b, `,"domain":`...)
	b = appendString(b, h.Domain)
	b = append(b, `,"tld":`...)
	b = appendString(b, h.TLD)
	b = append(b, `,"subdomain":`...)
	b = appendString(b, h.Subdomain)
	if h.IPAddress != "" {
		b = append(b, `,"ip_address":`...)
		b = appendString(b, h.IPAddress)
	}
	b = append(b, `,"is_live":`...)
	b = strconv.AppendBool(b, h.IsLive)
	b = append(b, `,"is_resolvable":`...)
	b = strconv.AppendBool(b, h.IsResolvable)
	b = append(b, `,"is_cloud":`...)
	b = strconv.AppendBool(b, h.IsCloud)
	b = append(b, `,"is_cdn":`...)
	b = strconv.AppendBool(b, h.IsCDN)
	b = append(b, `,"is_cloudflare":`...)
	b = strconv.AppendBool(b, h.IsCloudflare)
	b = append(b, `,"has_ipv6":`...)
	b = strconv.AppendBool(b, h.HasIPv6)
	b = append(b, `,"has_private_ip":`...)
	b = strconv.AppendBool(b, h.HasPrivateIP)
	b = append(b, `,"cdn":`...)
	b = appendString(b, h.CDN)
	b = append(b, `,"cloud":{"provider":`...)
	b = appendString(b, h.Cloud.Provider)
	b = append(b, `,"region":`...)
	b = appendString(b, h.Cloud.Region)
	b = append(b, `},"dns":{"a":`...)
	b = appendStrings(b, h.DNS.A)
	b = append(b, `,"aaaa":`...)
	b = appendStrings(b, h.DNS.AAAA)
	b = append(b, `,"cname":`...)
	b = appendStrings(b, h.DNS.CNAME)
	b = append(b, `,"mx":`...)
	b = appendStrings(b, h.DNS.MX)
	b = append(b, `,"ns":`...)
	b = appendStrings(b, h.DNS.NS)
	b = append(b, `,"ptr":`...)
	b = appendStrings(b, h.DNS.PTR)
	b = append(b, `,"txt":`...)
	b = appendStrings(b, h.DNS.TXT)
	b = append(b, `},"http_status_code":`...)
	b = strconv.AppendInt(b, int64(h.HTTPStatusCode), 10)
	b = append(b, `,"http_title":`...)
	b = appendString(b, h.HTTPTitle)
	m := &h.IPMetadata
	b = append(b, `,"ip_metadata":{"asn":`...)
	b = strconv.AppendInt(b, int64(m.ASN), 10)
	b = append(b, `,"organization":`...)
	b = appendString(b, m.Organization)
	b = append(b, `,"isp":`...)
	b = appendString(b, m.ISP)
	b = append(b, `,"country_code":`...)
	b = appendString(b, m.CountryCode)
	b = append(b, `,"country_name":`...)
	b = appendString(b, m.CountryName)
	b = append(b, `,"city_name":`...)
	b = appendString(b, m.CityName)
	b = append(b, `,"region":`...)
	b = appendString(b, m.Region)
	b = append(b, `,"postal_code":`...)
	b = appendString(b, m.PostalCode)
	b = append(b, `,"location_latitude":`...)
	var err error
	if b, err = appendFloat(b, m.LocationLatitude); err != nil {
		return nil, err
	}
	b = append(b, `,"location_longitude":`...)
	if b, err = appendFloat(b, m.LocationLongitude); err != nil {
		return nil, err
	}
	b = append(b, `},"network_ports":`...)
	if h.NetworkPorts == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, p := range h.NetworkPorts {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(p), 10)
		}
		b = append(b, ']')
	}
	b = append(b, `,"network_services":`...)
	if h.NetworkServices == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range h.NetworkServices {
			s := &h.NetworkServices[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"port":`...)
			b = strconv.AppendInt(b, int64(s.Port), 10)
			b = append(b, `,"protocol":`...)
			b = appendString(b, s.Protocol)
			b = append(b, `,"service":`...)
			b = appendString(b, s.Service)
			b = append(b, `,"product":`...)
			b = appendString(b, s.Product)
			b = append(b, `,"version":`...)
			b = appendString(b, s.Version)
			b = append(b, `,"banner":`...)
			b = appendString(b, s.Banner)
			b = append(b, `,"first_seen":`...)
			b = strconv.AppendInt(b, s.FirstSeen, 10)
			b = append(b, `,"last_seen":`...)
			b = strconv.AppendInt(b, s.LastSeen, 10)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"products":`...)
	b = appendStrings(b, h.Products)
	b = append(b, `,"tags":`...)
	b = appendStrings(b, h.Tags)
	b = append(b, `,"web":`...)
	b = appendStrings(b, h.Web)
	b = append(b, `,"categories":`...)
	b = appendStrings(b, h.Categories)
	b = append(b, `,"urls":`...)
	b = appendStrings(b, h.URLs)
	b = append(b, `,"extracted":`...)
	b = appendExtracted(b, h.Extracted)
	c := &h.Cert
	b = append(b, `,"cert_object":{"subject_common_name":`...)
	b = appendString(b, c.SubjectCommonName)
	b = append(b, `,"subject_organization":`...)
	b = appendString(b, c.SubjectOrg)
	b = append(b, `,"issuer_common_name":`...)
	b = appendString(b, c.IssuerCommonName)
	b = append(b, `,"issuer_organization":`...)
	b = appendString(b, c.IssuerOrg)
	b = append(b, `,"not_before":`...)
	b = strconv.AppendInt(b, c.NotBefore, 10)
	b = append(b, `,"not_after":`...)
	b = strconv.AppendInt(b, c.NotAfter, 10)
	b = append(b, `,"dns_names":`...)
	b = appendStrings(b, c.DNSNames)
	b = append(b, `,"serial_number":`...)
	b = appendString(b, c.SerialNumber)
	b = append(b, `,"sha256_fingerprint":`...)
	b = appendString(b, c.SHA256Fingerprint)
	b = append(b, `,"sha1_fingerprint":`...)
	b = appendString(b, c.SHA1Fingerprint)
	b = append(b, `,"md5_fingerprint":`...)
	b = appendString(b, c.MD5Fingerprint)
	b = append(b, `,"signature_algorithm":`...)
	b = appendString(b, c.SignatureAlgorithm)
	b = append(b, `,"subject_country":`...)
	b = appendString(b, c.SubjectCountry)
	b = append(b, `,"subject_province":`...)
	b = appendString(b, c.SubjectProvince)
	b = append(b, `,"subject_locality":`...)
	b = appendString(b, c.SubjectLocality)
	b = append(b, `,"issuer_country":`...)
	b = appendString(b, c.IssuerCountry)
	b = append(b, `,"issuer_serial_number":`...)
	b = appendString(b, c.IssuerSerialNumber)
	b = append(b, `,"issuer_string":`...)
	b = appendString(b, c.IssuerString)
	b = append(b, `,"ip_addresses":`...)
	b = appendStrings(b, c.IPAddresses)
	b = append(b, `,"email_addresses":`...)
	b = appendStrings(b, c.EmailAddresses)
	b = append(b, `,"is_valid_hostname":`...)
	b = strconv.AppendBool(b, c.IsValidHostname)
	b = append(b, `,"remote_ip_address":`...)
	b = appendString(b, c.RemoteIPAddress)
	b = append(b, `},"first_seen":`...)
	b = strconv.AppendInt(b, h.FirstSeen, 10)
	b = append(b, `,"last_seen":`...)
	b = strconv.AppendInt(b, h.LastSeen, 10)
	return append(b, '}'), nil
}

func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendExtracted writes e as encoding/json writes a map: keys sorted as
// their JSON strings' bytes (keys are sorted as Go strings, which is the
// same order), null when nil.
func appendExtracted(b []byte, e Extracted) []byte {
	if e == nil {
		return append(b, "null"...)
	}
	keys := slices.Sorted(maps.Keys(e))
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendStrings(b, e[k])
	}
	return append(b, '}')
}

// appendFloat writes f as encoding/json does: 'f' format, or 'e' for very
// small and very large magnitudes with a one-digit negative exponent.
func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, 64))
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

// appendString writes s as a JSON string as json.Marshal does (HTML
// characters escaped).
func appendString(b []byte, s string) []byte { return jsontext.AppendString(b, s, true) }
