package vulnstore_test

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/store/storetest"
	"github.com/periscope-oss/periscope/internal/vuln"
	"github.com/periscope-oss/periscope/internal/vulningest"
	"github.com/periscope-oss/periscope/internal/vulnstore"
)

// TestRankingTiesByIdentifier checks that equal scores fall back to the
// date, then the identifier, whatever order the rows were stored in: the
// row ids, which differ between engines, never decide.
func TestRankingTiesByIdentifier(t *testing.T) {
	each(t, func(t *testing.T, s *vulnstore.Store) {
		ctx := context.Background()
		day := time.Date(2014, 5, 1, 0, 0, 0, 0, time.UTC)
		var xs []vuln.Exploit
		for _, id := range []int{7, 30, 12, 9, 21} { // stored out of order
			xs = append(xs, vuln.Exploit{EDBID: id, Title: "Quokka CMS Remote Code Execution", DateAdded: day})
		}
		xs = append(xs, vuln.Exploit{EDBID: 3, Title: "Quokka CMS Remote Code Execution", DateAdded: day.AddDate(0, 0, 1)})
		xs = append(xs, vuln.Exploit{EDBID: 1, Title: "Quokka Remote Code Execution", DateAdded: day.AddDate(-1, 0, 0)})
		if _, err := s.UpsertExploits(ctx, xs); err != nil {
			t.Fatal(err)
		}
		got, err := s.SearchExploits(ctx, vulnstore.VulnSearch{Query: "quokka remote code execution", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var ids []int
		for _, x := range got {
			ids = append(ids, x.EDBID)
		}
		// The shortest title scores highest; then the newest; then the
		// highest EDB id.
		if want := []int{1, 3, 30, 21, 12, 9, 7}; !slices.Equal(ids, want) {
			t.Errorf("order %v, want %v", ids, want)
		}
	})
}

// TestRankingSameOnBothEngines loads the recorded feeds into SQLite and
// PostgreSQL and checks that every text search answers the same records
// in the same order on both ("linux" and "php" match inside "Linux/x86"
// and "index.php" on both since migration 45).
func TestRankingSameOnBothEngines(t *testing.T) {
	engines := storetest.Engines()
	if len(engines) < 2 {
		t.Skip("PERISCOPE_TEST_POSTGRES is not set")
	}
	ctx := context.Background()
	stores := map[string]*vulnstore.Store{}
	for _, e := range engines {
		s := vulnstore.New(storetest.Open(t, e, vulnstore.Migrations()))
		in := &vulningest.Ingester{Store: s}
		files, _ := filepath.Glob(vulnData + "nvd/*.json")
		for _, f := range files {
			if _, err := in.IngestPath(ctx, vulningest.NVD, f, nil); err != nil {
				t.Fatal(err)
			}
		}
		for kind, p := range map[string]string{
			vulningest.KEV:       "kev/known_exploited_vulnerabilities.json",
			vulningest.ExploitDB: "exploitdb-gpl/files_legacy_2014-05-27_first2000.csv",
		} {
			if _, err := in.IngestPath(ctx, kind, vulnData+p, nil); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := in.IngestPath(ctx, vulningest.ExploitDB, vulnData+"exploitdb-gpl/files_shellcodes_2023-09-09.csv", nil); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{"osv/go", "osv/ghsa"} {
			if _, err := in.IngestPath(ctx, vulningest.OSV, vulnData+d, nil); err != nil {
				t.Fatal(err)
			}
		}
		stores[e] = s
	}
	answers := func(s *vulnstore.Store, kind, q string) []string {
		t.Helper()
		var out []string
		search := vulnstore.VulnSearch{Query: q, Limit: 20}
		switch kind {
		case "vulns":
			vs, err := s.SearchVulns(ctx, search)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vs {
				out = append(out, v.CVEID)
			}
		case "advisories":
			as, err := s.SearchAdvisories(ctx, search)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range as {
				out = append(out, a.ID)
			}
		case "exploits":
			xs, err := s.SearchExploits(ctx, search)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range xs {
				out = append(out, strconv.Itoa(x.EDBID))
			}
		}
		return out
	}
	found := 0
	for _, kind := range []string{"vulns", "advisories", "exploits"} {
		for _, q := range []string{"remote code execution", "sql injection", "denial of service", "buffer overflow",
			"cross site scripting", "remote", "attacker", "kernel privilege", "linux local", "php", "windows", "authentication bypass"} {
			sq, pg := answers(stores["sqlite"], kind, q), answers(stores["postgres"], kind, q)
			if len(sq) > 0 {
				found++
			}
			if !slices.Equal(sq, pg) {
				t.Errorf("%s %q:\n sqlite   %v\n postgres %v", kind, q, sq, pg)
			}
		}
	}
	if found < 20 {
		t.Errorf("only %d searches found anything", found)
	}
}
