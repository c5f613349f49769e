package alerts

import (
	"slices"
	"strings"

	"github.com/periscope-oss/periscope/internal/host"
)

// Product is a product seen on a host, with its version when the source
// told it.
type Product struct {
	Name    string // as seen ("Apache httpd", "nginx", "WordPress")
	Version string
}

// HostProducts lists the products seen on h: its services' products and
// versions (nmap), its products ("nginx/1.18.0", "Apache/2.4.49 (Unix)",
// from HTTP Server headers) and its web technologies ("PHP:7.4.3").
func HostProducts(h host.Host) []Product {
	var out []Product
	add := func(name, version string) {
		name, version = strings.TrimSpace(name), strings.TrimSpace(version)
		if name == "" {
			return
		}
		p := Product{name, version}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, s := range h.NetworkServices {
		add(s.Product, s.Version)
	}
	for _, p := range h.Products {
		name, rest, _ := strings.Cut(p, "/")
		version, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
		add(name, version)
	}
	for _, w := range h.Web {
		name, version, _ := strings.Cut(w, ":")
		add(name, version)
	}
	return out
}

// productToken normalises a product or CPE name for comparison: lower
// case, runs of spaces, hyphens and underscores as one underscore (CPE
// writes "http_server", scanners "HTTP Server" or "http-server").
func productToken(s string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		if r == ' ' || r == '-' || r == '_' || r == '\t' {
			sep = b.Len() > 0
			continue
		}
		if sep {
			b.WriteByte('_')
			sep = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// productAliases maps product names scanners report to the CPE
// part:vendor:product keys NVD uses for them, where neither the name nor
// vendor_name equals the CPE's product (the common cases on the internet).
var productAliases = map[string][]string{
	"apache":                          {"a:apache:http_server"},
	"apache_httpd":                    {"a:apache:http_server"},
	"apache_http_server":              {"a:apache:http_server"},
	"httpd":                           {"a:apache:http_server"},
	"microsoft_iis":                   {"a:microsoft:internet_information_services"},
	"microsoft_iis_httpd":             {"a:microsoft:internet_information_services"},
	"iis":                             {"a:microsoft:internet_information_services"},
	"openssh":                         {"a:openbsd:openssh"},
	"microsoft_exchange":              {"a:microsoft:exchange_server"},
	"microsoft_exchange_smtpd":        {"a:microsoft:exchange_server"},
	"apache_tomcat":                   {"a:apache:tomcat"},
	"apache_tomcat/coyote_jsp_engine": {"a:apache:tomcat"},
	"fortinet_fortigate":              {"o:fortinet:fortios"},
	"fortios":                         {"o:fortinet:fortios"},
	"citrix_netscaler":                {"a:citrix:netscaler_application_delivery_controller"},
	"ivanti_connect_secure":           {"a:ivanti:connect_secure"},
	"pulse_secure":                    {"a:ivanti:connect_secure", "a:pulsesecure:pulse_connect_secure"},
	"confluence":                      {"a:atlassian:confluence_server", "a:atlassian:confluence_data_center"},
	"atlassian_confluence":            {"a:atlassian:confluence_server", "a:atlassian:confluence_data_center"},
}

// cpeVersion returns the version field of a CPE 2.3 string or 2.2 URI
// ("" when it has none).
func cpeVersion(cpe string) string {
	s := strings.ToLower(cpe)
	var f []string
	switch {
	case strings.HasPrefix(s, "cpe:2.3:"):
		f = strings.Split(s[len("cpe:2.3:"):], ":")
	case strings.HasPrefix(s, "cpe:/"):
		f = strings.Split(s[len("cpe:/"):], ":")
	}
	if len(f) < 4 {
		return ""
	}
	return strings.ReplaceAll(f[3], `\`, "")
}

// cpeKeyOf returns the part:vendor:product of a CPE string, lower-cased.
func cpeKeyOf(cpe string) string {
	s := strings.ToLower(cpe)
	switch {
	case strings.HasPrefix(s, "cpe:2.3:"):
		s = s[len("cpe:2.3:"):]
	case strings.HasPrefix(s, "cpe:/"):
		s = s[len("cpe:/"):]
	default:
		return ""
	}
	f := strings.SplitN(s, ":", 4)
	if len(f) < 3 {
		return ""
	}
	return f[0] + ":" + f[1] + ":" + f[2]
}

// Version verdicts of a product against a CVE's CPE criteria.
const (
	versionListed     = "listed"      // the host's version is one the criteria name
	versionNotListed  = "not_listed"  // the criteria name versions, not this one: not affected
	versionUnchecked  = "not_checked" // the criteria name no version (a range Periscope does not store)
	versionUnknownVer = "unknown"     // the host's version is not known
)

// versionVerdict compares a host's version with the versions the CVE's
// criteria for key name.
func versionVerdict(key, version string, criteria []string) string {
	var listed []string
	for _, c := range criteria {
		if cpeKeyOf(c) != key {
			continue
		}
		v := cpeVersion(c)
		if v == "" || v == "*" || v == "-" {
			return versionUncheckedOr(version)
		}
		listed = append(listed, v)
	}
	if version == "" {
		return versionUnknownVer
	}
	if len(listed) == 0 {
		return versionUnchecked
	}
	if slices.Contains(listed, strings.ToLower(version)) {
		return versionListed
	}
	return versionNotListed
}

func versionUncheckedOr(version string) string {
	if version == "" {
		return versionUnknownVer
	}
	return versionUnchecked
}
