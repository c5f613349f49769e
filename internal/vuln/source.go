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
