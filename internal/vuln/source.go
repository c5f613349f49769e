package vuln

import "strings"

// advisorySources maps OSV id prefixes to the database that publishes them.
var advisorySources = []struct{ prefix, source string }{
	{"GHSA-", "github"},
	{"GO-", "go"},
	{"PYSEC-", "pypa"},
	{"RUSTSEC-", "rustsec"},
	{"OSV-", "oss-fuzz"},
	{"GSD-", "gsd"},
	{"RSEC-", "r"},
	{"PSF-", "psf"},
	{"MAL-", "ossf-malicious-packages"},
	{"DSA-", "debian"},
	{"DLA-", "debian"},
	{"DTSA-", "debian"},
	{"UBUNTU-", "ubuntu"},
	{"USN-", "ubuntu"},
	{"ALSA-", "almalinux"},
	{"ALBA-", "almalinux"},
	{"ALEA-", "almalinux"},
	{"RLSA-", "rocky"},
	{"RXSA-", "rocky"},
	{"RHSA-", "redhat"},
	{"RHBA-", "redhat"},
	{"RHEA-", "redhat"},
	{"SUSE-", "suse"},
	{"openSUSE-", "opensuse"},
	{"CGA-", "chainguard"},
	{"MINI-", "minimos"},
	{"BIT-", "bitnami"},
	{"HSEC-", "haskell"},
	{"CURL-", "curl"},
	{"LBSEC-", "libsodium"},
	{"GLSA-", "gentoo"},
	{"MGASA-", "mageia"},
	{"ALPINE-", "alpine"},
	{"DRUPAL-", "drupal"},
	{"EEF-", "erlef"},
	{"CVE-", "nvd"},
}

// AdvisorySource derives the publishing database from an advisory id
// (GHSA- is "github", GO- is "go", PYSEC- is "pypa", RUSTSEC- is
// "rustsec", and so on). When the prefix is unknown, a "source" field in
// the record's database_specific object is used if given, else "osv".
func AdvisorySource(id, databaseSpecificSource string) string {
	for _, s := range advisorySources {
		if strings.HasPrefix(id, s.prefix) {
			return s.source
		}
	}
	if databaseSpecificSource != "" {
		return strings.ToLower(databaseSpecificSource)
	}
	return "osv"
}

// CanonicalID recognises a CVE or advisory id typed in any case and
// returns it as the databases spell it (CVE-2021-44228, GHSA-jfh8-c2jp-5v3q,
// GO-2022-0001, PYSEC-2021-19...); ok is false when s is not an id of a
// known database.
func CanonicalID(s string) (id string, ok bool) {
	s = strings.TrimSpace(s)
	up := strings.ToUpper(s)
	if cveIDPattern.MatchString(up) {
		return up, true
	}
	for _, src := range advisorySources {
		p := src.prefix
		if src.source == "nvd" || len(s) <= len(p) || !strings.EqualFold(s[:len(p)], p) {
			continue
		}
		rest := s[len(p):]
		if !advisoryIDRest.MatchString(rest) {
			return "", false
		}
		if p == "GHSA-" {
			return p + strings.ToLower(rest), true
		}
		if p == "openSUSE-" {
			return p + rest, true
		}
		return p + strings.ToUpper(rest), true
	}
	return "", false
}

// IsCVE reports whether id is a CVE id (upper case, as CanonicalID gives).
func IsCVE(id string) bool { return cveIDPattern.MatchString(id) }
