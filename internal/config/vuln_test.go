package config

import (
	"flag"
	"io"
	"slices"
	"testing"
)

func TestVulnSyncFlags(t *testing.T) {
	env := map[string]string{"PERISCOPE_VULN_KEV_URL": "off", "PERISCOPE_VULN_OSV_ECOSYSTEMS": "Go, PyPI,,"}
	var c Config
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if err := c.RegisterServe(fs, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"--vuln-epss-url", "http://mirror/epss.csv.gz"}); err != nil {
		t.Fatal(err)
	}
	v := c.VulnSync
	if v.KEVURL != "" || v.EPSSURL != "http://mirror/epss.csv.gz" || v.NVDURL != vulnSyncDefaults.NVDURL ||
		!slices.Equal(v.Ecosystems(), []string{"Go", "PyPI"}) {
		t.Fatalf("vuln sync config %+v", v)
	}
}
