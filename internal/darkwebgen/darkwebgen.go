// Package darkwebgen writes synthetic breach files in every layout
// Periscope ingests, for the demo, tests and benchmarks. Every value is
// reserved or fictional: RFC 2606 domains, RFC 5737 addresses, 555-01xx
// phone numbers, the card networks' published test numbers, VINs with
// valid check digits, locally administered MAC addresses. Output depends
// only on the seed.
package darkwebgen

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/periscope-oss/periscope/internal/darkweb"
)

// Generator makes synthetic records.
type Generator struct {
	rng *rand.Rand
	// Domains are the email domains records are spread over (RFC 2606
	// names by default).
	Domains []string
	n       int
}

// DefaultDomains are reserved example domains.
var DefaultDomains = []string{"example.com", "example.org", "example.net", "mail.example.com"}

// New returns a generator seeded with seed.
func New(seed uint64, domains ...string) *Generator {
	if len(domains) == 0 {
		domains = DefaultDomains
	}
	return &Generator{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), Domains: domains}
}

var (
	firstNames = []string{"Alex", "Sam", "Jordan", "Taylor", "Morgan", "Casey", "Riley", "Jamie", "Avery", "Quinn", "Renée", "Zoë"}
	lastNames  = []string{"Example", "Sample", "Testperson", "Placeholder", "Fictitious", "Dummy", "Müller-Test"}
	words      = []string{"correct", "horse", "battery", "staple", "sunny", "orange", "tiger", "winter", "dragon", "monkey"}
	// testCards are the card networks' published test numbers.
	testCards = []string{"4111111111111111", "5555555555554444", "378282246310005", "6011111111111117", "4012888888881881", "5105105105105100"}
	streets   = []string{"Example Street", "Sample Avenue", "Test Road", "Placeholder Lane"}
	testNets  = []string{"192.0.2.", "198.51.100.", "203.0.113."}
	vinChars  = "0123456789ABCDEFGHJKLMNPRSTUVWXYZ"
	breaches  = []string{"ExampleForum2019", "SampleShop2021", "TestGame2022", "PlaceholderCRM2023"}
)

func (g *Generator) pick(xs []string) string { return xs[g.rng.IntN(len(xs))] }

// VIN returns a VIN with a valid ISO 3779 check digit.
func (g *Generator) VIN() string {
	b := make([]byte, 17)
	for i := range b {
		b[i] = vinChars[g.rng.IntN(len(vinChars))]
	}
	b[8] = '0'
	b[8] = darkweb.VINCheckDigit(string(b))
	return string(b)
}

// Record returns the next synthetic record (fields not yet cleaned; a
// third carry a full test card number in BIN).
func (g *Generator) Record() darkweb.Record {
	g.n++
	first, last := g.pick(firstNames), g.pick(lastNames)
	dom := g.Domains[g.rng.IntN(len(g.Domains))]
	user := fmt.Sprintf("%s.%s%d", strings.ToLower(strings.Split(first, "é")[0]), strings.ToLower(strings.ReplaceAll(last, "ü", "u")), g.n)
	r := darkweb.Record{
		Email:    user + "@" + dom,
		Username: fmt.Sprintf("%s_%d", strings.ToLower(string([]rune(first)[:3])), g.n),
		Name:     first + " " + last,
		Phone:    fmt.Sprintf("+1 %03d 555 01%02d", 200+g.rng.IntN(700), g.rng.IntN(100)),
		IP:       g.pick(testNets) + fmt.Sprint(1+g.rng.IntN(254)),
		Address:  fmt.Sprintf("%d %s", 1+g.rng.IntN(999), g.pick(streets)),
		Breach:   g.pick(breaches),
	}
	switch g.rng.IntN(3) {
	case 0:
		r.Password = fmt.Sprintf("%s%s%d!", g.pick(words), g.pick(words), g.rng.IntN(1000))
	case 1:
		h := make([]byte, 20)
		for i := range h {
			h[i] = byte(g.rng.IntN(256))
		}
		r.HashedPassword = []string{fmt.Sprintf("%x", h)}
	default:
		r.Password = fmt.Sprintf("%s%d", g.pick(words), g.rng.IntN(100000))
		r.BIN = g.pick(testCards)
	}
	if g.rng.IntN(4) == 0 {
		r.VIN = g.VIN()
	}
	return r
}

// Combolist writes n lines mixing every combolist form.
func (g *Generator) Combolist(w io.Writer, n int) error {
	for i := 0; i < n; i++ {
		r := g.Record()
		pass := r.Password
		if pass == "" {
			pass = g.pick(words) + "123"
		}
		host := "login." + g.Domains[g.rng.IntN(len(g.Domains))]
		var line string
		switch i % 6 {
		case 0:
			line = r.Email + ":" + pass
		case 1:
			line = r.Username + ":" + pass
		case 2:
			line = r.Email + ";" + pass
		case 3:
			line = "https://" + host + "/signin:" + r.Email + ":" + pass
		case 4:
			line = "https://" + host + "|" + r.Username + "|" + pass
		default:
			line = host + " " + r.Email + " " + pass
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}

// CSV writes a header and n rows (comma-separated, or tab when tsv).
func (g *Generator) CSV(w io.Writer, n int, tsv bool) error {
	cw := csv.NewWriter(w)
	if tsv {
		cw.Comma = '\t'
	}
	cw.Write([]string{"email", "username", "password", "hash", "first_name", "last_name", "phone", "address", "ip_address", "vin", "card_number"})
	for i := 0; i < n; i++ {
		r := g.Record()
		first, last, _ := strings.Cut(r.Name, " ")
		cw.Write([]string{r.Email, r.Username, r.Password, strings.Join(r.HashedPassword, ""), first, last, r.Phone, r.Address, r.IP, r.VIN, r.BIN})
	}
	cw.Flush()
	return cw.Error()
}

// ForumCVEs are public CVE ids the forum posts of ForumCSV mention (in
// the vulnerability demo data, so a cve search carries their records).
var ForumCVEs = []string{"CVE-2021-44228", "CVE-2024-3094", "CVE-2023-4863"}

var forumNotes = []string{
	"selling shell access, got in through %s on an unpatched box",
	"asks for a working exploit for %s",
	"shares a scanner list of hosts vulnerable to %s",
}

// ForumCSV writes a header and n rows of a forum dump: email, username,
// password and the post (notes), which names one of ForumCVEs.
func (g *Generator) ForumCSV(w io.Writer, n int) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"email", "username", "password", "notes"})
	for i := 0; i < n; i++ {
		r := g.Record()
		pass := r.Password
		if pass == "" {
			pass = g.pick(words) + "123"
		}
		cw.Write([]string{r.Email, r.Username, pass, fmt.Sprintf(g.pick(forumNotes), g.pick(ForumCVEs))})
	}
	cw.Flush()
	return cw.Error()
}

// DeHashed writes n records in DeHashed's shape: v2 arrays as NDJSON, or
// v1 strings as an {"entries": [...]} answer.
func (g *Generator) DeHashed(w io.Writer, n int, v2 bool) error {
	var entries []map[string]any
	enc := json.NewEncoder(w)
	for i := 0; i < n; i++ {
		r := g.Record()
		if v2 {
			e := map[string]any{"id": fmt.Sprint(i + 1), "email": []string{r.Email}, "username": []string{r.Username}, "name": []string{r.Name},
				"phone": []string{r.Phone}, "ip_address": []string{r.IP}, "database_name": r.Breach}
			if r.Password != "" {
				e["password"] = []string{r.Password}
			}
			if len(r.HashedPassword) > 0 {
				e["hashed_password"] = r.HashedPassword
			}
			if err := enc.Encode(e); err != nil {
				return err
			}
			continue
		}
		entries = append(entries, map[string]any{"id": fmt.Sprint(i + 1), "email": r.Email, "username": r.Username, "password": r.Password,
			"hashed_password": strings.Join(r.HashedPassword, ""), "name": r.Name, "phone": r.Phone, "address": r.Address,
			"ip_address": r.IP, "vin": r.VIN, "database_name": r.Breach})
	}
	if v2 {
		return nil
	}
	return enc.Encode(map[string]any{"balance": 0, "entries": entries, "success": true, "took": "1ms", "total": len(entries)})
}

// Stealer writes logs stealer-log folders under dir, each with a
// System.txt and a Passwords.txt of perLog entries.
func (g *Generator) Stealer(dir string, logs, perLog int) error {
	for l := 0; l < logs; l++ {
		d := filepath.Join(dir, fmt.Sprintf("US[%04X]", l+1))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		sys := fmt.Sprintf("Computer Name: DESKTOP-%06X\nIP: %s%d\nMAC: 02:00:5e:%02x:%02x:%02x\nCountry: US\nUser Name: user%d\n",
			g.rng.IntN(1<<24), g.pick(testNets), 1+g.rng.IntN(254), g.rng.IntN(256), g.rng.IntN(256), g.rng.IntN(256), l)
		if err := os.WriteFile(filepath.Join(d, "System.txt"), []byte(sys), 0o644); err != nil {
			return err
		}
		var b strings.Builder
		for i := 0; i < perLog; i++ {
			r := g.Record()
			pass := r.Password
			if pass == "" {
				pass = g.pick(words) + "!"
			}
			url := "https://login." + g.Domains[g.rng.IntN(len(g.Domains))] + "/"
			if i%5 == 4 {
				url = "android://" + fmt.Sprintf("%x", g.rng.Uint64()) + "@com.example.app/"
			}
			fmt.Fprintf(&b, "URL: %s\nUsername: %s\nPassword: %s\n===============\n", url, r.Email, pass)
		}
		if err := os.WriteFile(filepath.Join(d, "Passwords.txt"), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Breaches writes the catalogue of the generator's breaches in HIBP's shape.
func (g *Generator) Breaches(w io.Writer) error {
	var out []darkweb.BreachInfo
	for i, name := range breaches {
		out = append(out, darkweb.BreachInfo{Name: name, Title: name, Domain: g.Domains[i%len(g.Domains)],
			BreachDate: fmt.Sprintf("%d-0%d-15", 2019+i, 1+i), AddedDate: fmt.Sprintf("%d-0%d-20T00:00:00Z", 2019+i, 2+i),
			PwnCount: int64(1000 * (i + 1)), DataClasses: []string{"Email addresses", "Passwords", "Names", "Phone numbers"},
			Description: "A synthetic breach generated by Periscope for demos and tests."})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// BreachNames lists the breaches records are labelled with.
func BreachNames() []string { return append([]string(nil), breaches...) }
