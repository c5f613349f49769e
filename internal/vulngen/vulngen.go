// Package vulngen scales the recorded real feed samples (vuln.Samples) up
// to benchmark sizes: every generated record is a real NVD, OSV, KEV,
// EPSS or Exploit-DB record with a new id, dates spread over the past
// years, and a few extra words drawn from the real descriptions, so text
// search sees a realistic vocabulary. Output is the upstream wire format,
// so benchmarks measure the real parse and store path. Deterministic for
// a seed.
package vulngen

import (
	"archive/zip"
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/periscope-oss/periscope/internal/vuln"
)

// Generator produces scaled feeds.
type Generator struct {
	// Vulns is how many CVEs there are (ids CVE-<year>-<100000+i>).
	Vulns int
	// Now ends the span of publication dates; Years is its length.
	Now   time.Time
	Years int
	Seed  uint64

	nvdTemplates []string
	osvTemplates []string
	vocab        []string
	freq         map[string]int
}

// New loads the templates from the bundled samples.
func New(vulns int, now time.Time, seed uint64) (*Generator, error) {
	g := &Generator{Vulns: vulns, Now: now.UTC(), Years: 6, Seed: seed}
	words := map[string]bool{}
	g.freq = map[string]int{}
	addWords := func(s string) {
		for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if len(w) >= 4 && len(w) <= 20 {
				words[w] = true
				g.freq[w]++
			}
		}
	}
	nvdFiles, _ := fs.Glob(vuln.Samples, "testdata/nvd/*.json")
	for _, f := range nvdFiles {
		b, err := fs.ReadFile(vuln.Samples, f)
		if err != nil {
			return nil, err
		}
		var doc struct {
			Vulnerabilities []struct {
				CVE map[string]any `json:"cve"`
			} `json:"vulnerabilities"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, v := range doc.Vulnerabilities {
			c := v.CVE
			c["id"], c["published"], c["lastModified"] = "@@ID@@", "@@PUB@@", "@@MOD@@"
			for _, k := range []string{"cisaExploitAdd", "cisaActionDue", "cisaRequiredAction", "cisaVulnerabilityName"} {
				delete(c, k)
			}
			if ds, ok := c["descriptions"].([]any); ok && len(ds) > 0 {
				if d, ok := ds[0].(map[string]any); ok {
					s, _ := d["value"].(string)
					addWords(s)
					d["value"] = s + " @@W@@"
				}
			}
			t, err := json.Marshal(map[string]any{"cve": c})
			if err != nil {
				return nil, err
			}
			g.nvdTemplates = append(g.nvdTemplates, string(t))
		}
	}
	osvFiles, _ := fs.Glob(vuln.Samples, "testdata/osv/*/*.json")
	for _, f := range osvFiles {
		b, err := fs.ReadFile(vuln.Samples, f)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		s, _ := m["summary"].(string)
		addWords(s)
		d, _ := m["details"].(string)
		addWords(d)
		m["id"], m["published"], m["modified"], m["aliases"] = "@@ID@@", "@@PUB@@", "@@MOD@@", []string{"@@CVE@@"}
		m["summary"] = s + " @@W@@"
		if aff, ok := m["affected"].([]any); ok {
			for _, a := range aff {
				if am, ok := a.(map[string]any); ok {
					if p, ok := am["package"].(map[string]any); ok {
						p["name"] = fmt.Sprint(p["name"]) + "@@PKG@@"
						delete(p, "purl")
					}
				}
			}
		}
		t, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		g.osvTemplates = append(g.osvTemplates, string(t))
	}
	if len(g.nvdTemplates) == 0 || len(g.osvTemplates) == 0 {
		return nil, fmt.Errorf("vulngen: no samples")
	}
	for w := range words {
		g.vocab = append(g.vocab, w)
	}
	slices.Sort(g.vocab)
	return g, nil
}

// Frequency is how often w occurs in the sample texts.
func (g *Generator) Frequency(w string) int { return g.freq[w] }

// Vocabulary returns the words the generator draws from (for queries).
func (g *Generator) Vocabulary() []string { return g.vocab }

// CVE returns the id and publication time of generated CVE i.
func (g *Generator) CVE(i int) (string, time.Time) {
	r := rand.New(rand.NewPCG(g.Seed, uint64(i)))
	span := time.Duration(g.Years) * 365 * 24 * time.Hour
	pub := g.Now.Add(-time.Duration(r.Int64N(int64(span)))).Truncate(time.Second)
	return fmt.Sprintf("CVE-%d-%d", pub.Year(), 100000+i), pub
}

func (g *Generator) words(r *rand.Rand, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = g.vocab[r.IntN(len(g.vocab))]
	}
	return strings.Join(ws, " ")
}

func iso(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000") }

// WriteNVD writes the CVEs as one NVD CVE API 2.0 document.
func (g *Generator) WriteNVD(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	fmt.Fprintf(bw, `{"resultsPerPage":%d,"startIndex":0,"totalResults":%d,"format":"NVD_CVE","version":"2.0","vulnerabilities":[`, g.Vulns, g.Vulns)
	for i := range g.Vulns {
		r := rand.New(rand.NewPCG(g.Seed+1, uint64(i)))
		id, pub := g.CVE(i)
		mod := pub.Add(time.Duration(r.IntN(90*24)) * time.Hour)
		if i > 0 {
			bw.WriteByte(',')
		}
		rep := strings.NewReplacer("@@ID@@", id, "@@PUB@@", iso(pub), "@@MOD@@", iso(mod), "@@W@@", g.words(r, 3))
		if _, err := rep.WriteString(bw, g.nvdTemplates[r.IntN(len(g.nvdTemplates))]); err != nil {
			return err
		}
	}
	bw.WriteString("]}")
	return bw.Flush()
}

// WriteOSVZip writes n advisories as an OSV all.zip; advisory i aliases
// CVE i*Vulns/n and names one of 5,000 package variants.
func (g *Generator) WriteOSVZip(w io.Writer, n int) error {
	zw := zip.NewWriter(w)
	for i := range n {
		r := rand.New(rand.NewPCG(g.Seed+2, uint64(i)))
		cve, pub := g.CVE(i * g.Vulns / max(n, 1))
		id := fmt.Sprintf("GHSA-%04x-%04x-%04x", i>>16&0xffff, i&0xffff, r.IntN(0x10000))
		mod := pub.Add(time.Duration(r.IntN(90*24)) * time.Hour)
		f, err := zw.Create(id + ".json")
		if err != nil {
			return err
		}
		rep := strings.NewReplacer("@@ID@@", id, "@@PUB@@", pub.Format(time.RFC3339), "@@MOD@@", mod.Format(time.RFC3339),
			"@@CVE@@", cve, "@@W@@", g.words(r, 3), "@@PKG@@", fmt.Sprintf("-%d", r.IntN(5000)))
		if _, err := rep.WriteString(f, g.osvTemplates[r.IntN(len(g.osvTemplates))]); err != nil {
			return err
		}
	}
	return zw.Close()
}

// WriteKEV writes a KEV catalog flagging every step-th CVE.
func (g *Generator) WriteKEV(w io.Writer, step int) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(`{"title":"generated","catalogVersion":"bench","dateReleased":"2026-01-01T00:00:00.000Z","count":0,"vulnerabilities":[`)
	for i := 0; i < g.Vulns; i += step {
		r := rand.New(rand.NewPCG(g.Seed+3, uint64(i)))
		id, pub := g.CVE(i)
		added := pub.AddDate(0, 0, r.IntN(30))
		if i > 0 {
			bw.WriteByte(',')
		}
		b, _ := json.Marshal(map[string]any{"cveID": id, "vendorProject": "Vendor", "product": g.words(r, 1),
			"vulnerabilityName": g.words(r, 4), "dateAdded": added.Format("2006-01-02"), "shortDescription": g.words(r, 12),
			"requiredAction": "Apply mitigations per vendor instructions.", "dueDate": added.AddDate(0, 0, 21).Format("2006-01-02"),
			"knownRansomwareCampaignUse": "Unknown", "notes": "", "cwes": []string{}})
		bw.Write(b)
	}
	bw.WriteString("]}")
	return bw.Flush()
}

// WriteEPSS writes one EPSS row per CVE.
func (g *Generator) WriteEPSS(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	fmt.Fprintf(bw, "#model_version:v2025.03.14,score_date:%s\ncve,epss,percentile\n", g.Now.Format("2006-01-02T15:04:05+0000"))
	for i := range g.Vulns {
		r := rand.New(rand.NewPCG(g.Seed+4, uint64(i)))
		id, _ := g.CVE(i)
		p := r.Float64()
		fmt.Fprintf(bw, "%s,%.5f,%.5f\n", id, p*p*p, p)
	}
	return bw.Flush()
}

// WriteExploitDB writes n exploits in the files_exploits.csv layout, each
// naming a random CVE.
func (g *Generator) WriteExploitDB(w io.Writer, n int) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("id,file,description,date_published,author,type,platform,port,date_added,date_updated,verified,codes,tags,aliases,screenshot_url,application_url,source_url\n")
	for i := range n {
		r := rand.New(rand.NewPCG(g.Seed+5, uint64(i)))
		id, pub := g.CVE(r.IntN(g.Vulns))
		d := pub.AddDate(0, 0, r.IntN(60)).Format("2006-01-02")
		fmt.Fprintf(bw, "%d,exploits/multiple/remote/%d.py,\"%s - Remote Code Execution\",%s,bench,remote,multiple,,%s,%s,%d,%s,,,,,\n",
			100000+i, 100000+i, g.words(r, 3), d, d, d, r.IntN(2), id)
	}
	return bw.Flush()
}

// SampleCPEs returns part:vendor:product CPE prefixes of the templates.
func (g *Generator) SampleCPEs() []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range g.nvdTemplates {
		for _, part := range strings.Split(t, `"criteria":"`)[1:] {
			c, _, _ := strings.Cut(part, `"`)
			f := strings.Split(c, ":")
			if len(f) > 5 {
				p := strings.Join(f[:5], ":")
				if !seen[p] {
					seen[p] = true
					out = append(out, p)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// Ecosystems returns the ecosystems of the OSV templates.
func (g *Generator) Ecosystems() []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range g.osvTemplates {
		for _, part := range strings.Split(t, `"ecosystem":"`)[1:] {
			e, _, _ := strings.Cut(part, `"`)
			if !seen[e] {
				seen[e] = true
				out = append(out, e)
			}
		}
	}
	slices.Sort(out)
	return out
}
