package api_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/api/apitest"
	"github.com/periscope-oss/periscope/internal/vuln"
)

// TestAdvisoryIDsOfAnyDatabase: an advisory id stored in the database is
// an exact id to the three searches (GET and OEM) and to feed keywords,
// whatever database publishes it (issue 12 defect 13): prefixes of the
// known list in the spelling the database uses (Bitnami's lower-case
// package names, colons of the RPM distributions), prefixes of no list
// (Photon's PHSA-, openEuler's OESA-), and ids stored only as an alias.
// Each finds what it aliases: the log4j CVE and its Exploit-DB exploit.
func TestAdvisoryIDsOfAnyDatabase(t *testing.T) {
	each(t, func(t *testing.T, e *apitest.Env) {
		seedVulns(t, e)
		ctx := context.Background()
		// Published long before the feed window: the feed finds them by id.
		old := time.Date(2022, 1, 10, 0, 0, 0, 0, time.UTC)
		log4j := []string{"CVE-2021-44228"}
		advs := []vuln.Advisory{
			{ID: "ALSA-2022:0065", Source: "almalinux", Aliases: log4j, Summary: "Important: log4j security update"},
			{ID: "USN-5192-1", Source: "ubuntu", Aliases: log4j, Summary: "Apache Log4j 2 vulnerability"},
			{ID: "RHSA-2021:5106", Source: "redhat", Aliases: log4j, Summary: "Critical: log4j security update"},
			{ID: "DSA-5020-1", Source: "debian", Aliases: log4j, Summary: "apache-log4j2 security update"},
			{ID: "BIT-log4j-2021-44228", Source: "bitnami", Aliases: log4j, Summary: "Apache Log4j2 JNDI features do not protect against attacker controlled LDAP"},
			{ID: "PHSA-2021-4.0-0142", Source: "photon", Aliases: append([]string{"OESA-2021-1462"}, log4j...), Summary: "Security update of apache-log4j"},
			{ID: "MAL-2022-7426", Source: "ossf-malicious-packages", Summary: "Malicious code in quokka-loader (npm)",
				Affected: []vuln.Affected{{Ecosystem: "npm", Name: "quokka-loader"}}},
		}
		for i := range advs {
			advs[i].Published, advs[i].Modified = old, old
		}
		if _, err := e.Vulns.UpsertAdvisories(ctx, advs); err != nil {
			t.Fatal(err)
		}
		keys := profiles(e)
		const pub = "/api/v1/vulnerability-intelligence/"
		const oem = "/api/v1/oem/vulnerability-intelligence/"
		type rec struct {
			CVEID string `json:"cve_id"`
			ID    string `json:"id"`
			EDBID int    `json:"edb_id"`
		}
		ids := func(kind string, rs []rec) []string {
			var out []string
			for _, r := range rs {
				switch kind {
				case "vulnerability":
					out = append(out, r.CVEID)
				case "advisories":
					out = append(out, r.ID)
				default:
					out = append(out, fmt.Sprintf("EDB-%d", r.EDBID))
				}
			}
			return out
		}
		search := func(method, path, key string, body any) []rec {
			t.Helper()
			r := e.Do(method, path, key, body)
			if r.Status != 200 {
				t.Fatalf("%s %s %v: %d %s", method, path, body, r.Status, r.Body)
			}
			var out struct {
				Response []rec `json:"response"`
			}
			r.JSON(t, &out)
			return out.Response
		}
		for _, c := range []struct {
			query   string   // as a user types it
			advs    []string // the advisory search: the advisory and those aliasing it
			cve     string   // what it aliases ("" when nothing)
			exploit string   // the exploit of that CVE
		}{
			{"ALSA-2022:0065", []string{"ALSA-2022:0065"}, "CVE-2021-44228", "EDB-50592"},
			{"alsa-2022:0065", []string{"ALSA-2022:0065"}, "CVE-2021-44228", "EDB-50592"},
			{"USN-5192-1", []string{"USN-5192-1"}, "CVE-2021-44228", "EDB-50592"},
			{"RHSA-2021:5106", []string{"RHSA-2021:5106"}, "CVE-2021-44228", "EDB-50592"},
			{"DSA-5020-1", []string{"DSA-5020-1"}, "CVE-2021-44228", "EDB-50592"},
			{"BIT-log4j-2021-44228", []string{"BIT-log4j-2021-44228"}, "CVE-2021-44228", "EDB-50592"},
			{"PHSA-2021-4.0-0142", []string{"PHSA-2021-4.0-0142"}, "CVE-2021-44228", "EDB-50592"},
			{"phsa-2021-4.0-0142", []string{"PHSA-2021-4.0-0142"}, "CVE-2021-44228", "EDB-50592"},
			// Stored only as an alias: the advisories aliasing it, and what they alias.
			{"OESA-2021-1462", []string{"PHSA-2021-4.0-0142"}, "CVE-2021-44228", "EDB-50592"},
			{"MAL-2022-7426", []string{"MAL-2022-7426"}, "", ""},
		} {
			want := map[string][]string{"advisories": c.advs, "vulnerability": nil, "exploits": nil}
			if c.cve != "" {
				want["vulnerability"], want["exploits"] = []string{c.cve}, []string{c.exploit}
			}
			for kind, w := range want {
				got := ids(kind, search("GET", pub+kind+"-search?query="+url.QueryEscape(c.query), keys["free"], nil))
				if !slices.Equal(got, w) {
					t.Errorf("GET %s-search %q: %v, want %v", kind, c.query, got, w)
				}
				got = ids(kind, search("POST", oem+kind+"-search", keys["oem"], map[string]any{"query": c.query}))
				if !slices.Equal(got, w) {
					t.Errorf("OEM %s-search %q: %v, want %v", kind, c.query, got, w)
				}
			}
			// Feed keywords: an id matches whatever its date.
			var f feedResult
			r := e.Do("GET", pub+"feed?days=7&per_page=100&keywords="+url.QueryEscape(c.query), keys["free"], nil)
			if r.Status != 200 {
				t.Fatalf("feed %q: %d %s", c.query, r.Status, r.Body)
			}
			r.JSON(t, &f)
			var advIDs, cves, edbs []string
			for _, a := range f.Advisories {
				advIDs = append(advIDs, a.ID)
			}
			for _, v := range f.Vulnerabilities {
				cves = append(cves, v.CVEID)
			}
			for _, x := range f.Exploits {
				edbs = append(edbs, fmt.Sprintf("EDB-%d", x.EDBID))
			}
			if !slices.Equal(advIDs, c.advs) || !slices.Equal(cves, want["vulnerability"]) || !slices.Equal(edbs, want["exploits"]) {
				t.Errorf("feed keywords=%q: advisories %v, vulnerabilities %v, exploits %v; want %v, %v, %v",
					c.query, advIDs, cves, edbs, c.advs, want["vulnerability"], want["exploits"])
			}
			r = e.Do("POST", oem+"feed", keys["oem"], map[string]any{"keywords": []string{c.query}, "type": "advisories"})
			var of feedResult
			if r.Status != 200 {
				t.Fatalf("OEM feed %q: %d %s", c.query, r.Status, r.Body)
			}
			r.JSON(t, &of)
			if of.Metadata.TotalAdvisories != len(c.advs) {
				t.Errorf("OEM feed keywords=%q: %d advisories, want %d", c.query, of.Metadata.TotalAdvisories, len(c.advs))
			}
		}
		// An unknown id-shaped query is still searched as text: nothing
		// stored matches it, and it is not an error.
		if got := search("GET", pub+"advisories-search?query=ZZSA-2099-1", keys["free"], nil); len(got) != 0 {
			t.Errorf("unknown id: %v", got)
		}
	})
}
