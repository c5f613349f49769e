package config

import (
	"flag"
	"strings"
)

// VulnSync holds the upstream locations of the scheduled vulnerability
// sync (see vulnsync); an empty URL leaves that source out. The interval
// is Config.SyncInterval and the NVD key Config.NVDAPIKey.
type VulnSync struct {
	KEVURL        string
	EPSSURL       string
	ExploitDBURL  string
	OSVURL        string // with {ecosystem}
	OSVEcosystems string // comma-separated
	NVDURL        string
}

// vulnSyncDefaults are the official locations (package vulnsync repeats
// them as constants; config reads no other package).
var vulnSyncDefaults = VulnSync{
	KEVURL:        "https://www.cisa.gov/sites/default/files/feeds/known_exploited_vulnerabilities.json",
	EPSSURL:       "https://epss.empiricalsecurity.com/epss_scores-current.csv.gz",
	ExploitDBURL:  "https://gitlab.com/exploit-database/exploitdb/-/raw/main/files_exploits.csv",
	OSVURL:        "https://osv-vulnerabilities.storage.googleapis.com/{ecosystem}/all.zip",
	OSVEcosystems: "Go,PyPI,npm,Maven,crates.io,RubyGems,NuGet,Packagist",
	NVDURL:        "https://services.nvd.nist.gov/rest/json/cves/2.0",
}

// Ecosystems splits OSVEcosystems.
func (v VulnSync) Ecosystems() []string {
	var out []string
	for _, e := range strings.Split(v.OSVEcosystems, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// registerVulnSync adds the sync source flags of serve.
func (v *VulnSync) register(fs *flag.FlagSet, getenv Getenv) {
	env := func(name, def string) string {
		// An empty variable keeps the default; "off" disables the source.
		if x := getenv(name); x != "" {
			if x == "off" {
				return ""
			}
			return x
		}
		return def
	}
	d := vulnSyncDefaults
	fs.StringVar(&v.KEVURL, "vuln-kev-url", env("PERISCOPE_VULN_KEV_URL", d.KEVURL), "CISA KEV catalog URL for the scheduled sync; empty disables (env PERISCOPE_VULN_KEV_URL, \"off\" disables)")
	fs.StringVar(&v.EPSSURL, "vuln-epss-url", env("PERISCOPE_VULN_EPSS_URL", d.EPSSURL), "FIRST EPSS scores URL (.csv or .csv.gz); empty disables (env PERISCOPE_VULN_EPSS_URL)")
	fs.StringVar(&v.ExploitDBURL, "vuln-exploitdb-url", env("PERISCOPE_VULN_EXPLOITDB_URL", d.ExploitDBURL), "Exploit-DB files_exploits.csv URL; empty disables (env PERISCOPE_VULN_EXPLOITDB_URL)")
	fs.StringVar(&v.OSVURL, "vuln-osv-url", env("PERISCOPE_VULN_OSV_URL", d.OSVURL), "OSV per-ecosystem all.zip URL, {ecosystem} replaced; empty disables (env PERISCOPE_VULN_OSV_URL)")
	fs.StringVar(&v.OSVEcosystems, "vuln-osv-ecosystems", env("PERISCOPE_VULN_OSV_ECOSYSTEMS", d.OSVEcosystems), "comma-separated OSV ecosystems to sync (env PERISCOPE_VULN_OSV_ECOSYSTEMS)")
	fs.StringVar(&v.NVDURL, "vuln-nvd-url", env("PERISCOPE_VULN_NVD_URL", d.NVDURL), "NVD CVE API 2.0 URL, synced incrementally by lastModified windows; empty disables (env PERISCOPE_VULN_NVD_URL)")
}
