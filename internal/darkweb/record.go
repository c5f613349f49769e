package darkweb

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Record is one breach record. Every field but Breach, BreachDate and
// Source is sensitive: it is kept only encrypted and searched through
// blind indexes.
type Record struct {
	Email          string   `json:"email,omitempty"`
	Username       string   `json:"username,omitempty"`
	Password       string   `json:"password,omitempty"`
	HashedPassword []string `json:"hashed_password,omitempty"`
	HashType       string   `json:"hash_type,omitempty"`
	Salt           string   `json:"salt,omitempty"`
	Name           string   `json:"name,omitempty"`
	Phone          string   `json:"phone,omitempty"`
	Address        string   `json:"address,omitempty"`
	IP             string   `json:"ipaddress,omitempty"`
	VIN            string   `json:"vin,omitempty"`
	Domain         string   `json:"domain,omitempty"`
	Hostname       string   `json:"hostname,omitempty"`
	MAC            string   `json:"mac_address,omitempty"`
	OrgAlias       string   `json:"org_alias,omitempty"`
	BIN            string   `json:"bin,omitempty"`
	CardLast4      string   `json:"card_last4,omitempty"`
	URL            string   `json:"url,omitempty"`
	DOB            string   `json:"dob,omitempty"`
	Country        string   `json:"country,omitempty"`
	CVEs           []string `json:"cves,omitempty"`

	// Breach is the breach (database) name, BreachDate its YYYY-MM-DD
	// date when known, Source the ingest kind (combolist, stealer…).
	// They are metadata, stored in clear.
	Breach     string `json:"-"`
	BreachDate string `json:"-"`
	Source     string `json:"-"`
}

// HasSecret reports whether the record carries a password or hash (the
// compromised-credentials listing shows only those).
func (r *Record) HasSecret() bool { return r.Password != "" || len(r.HashedPassword) > 0 }

// Empty reports whether the record identifies nobody and nothing.
func (r *Record) Empty() bool {
	return r.Email == "" && r.Username == "" && r.Name == "" && r.Phone == "" && r.IP == "" && r.VIN == "" &&
		r.Hostname == "" && r.MAC == "" && r.BIN == "" && r.Domain == "" && r.URL == "" && r.Address == "" && r.OrgAlias == ""
}

var cveFindRE = regexp.MustCompile(`(?i)\bCVE-\d{4}-\d{4,7}\b`)

// Clean normalises every field of r in place and returns the first field
// that cannot be kept, as an error naming it. Fields are trimmed; email,
// ip, vin, mac, bin and hashes are canonical afterwards; a full card
// number in bin is reduced to BIN and last four. Free-text fields keep
// their case (the index folds it) but must be valid text.
func (n Normalizer) Clean(r *Record) error {
	str := []struct {
		name string
		p    *string
	}{
		{"email", &r.Email}, {"username", &r.Username}, {"password", &r.Password}, {"salt", &r.Salt},
		{"name", &r.Name}, {"phone", &r.Phone}, {"address", &r.Address}, {"ip", &r.IP}, {"vin", &r.VIN},
		{"domain", &r.Domain}, {"hostname", &r.Hostname}, {"mac", &r.MAC}, {"org_alias", &r.OrgAlias},
		{"bin", &r.BIN}, {"url", &r.URL}, {"dob", &r.DOB}, {"country", &r.Country}, {"breach", &r.Breach},
		{"hash_type", &r.HashType},
	}
	for _, f := range str {
		if f.name != "password" {
			*f.p = strings.TrimSpace(*f.p)
		}
		if len(*f.p) > MaxField {
			return fmt.Errorf("%s: longer than %d bytes", f.name, MaxField)
		}
		if err := CheckText(*f.p); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	if r.Password != "" && strings.TrimSpace(r.Password) == "" {
		r.Password = ""
	}
	var err error
	if r.Email != "" {
		if r.Email, err = normEmail(r.Email); err != nil {
			return fmt.Errorf("email: %w", err)
		}
	}
	if r.IP != "" {
		if r.IP, err = n.Normalize(IP, r.IP); err != nil {
			return fmt.Errorf("ip: %w", err)
		}
	}
	if r.VIN != "" {
		if r.VIN, err = normVIN(r.VIN); err != nil {
			return fmt.Errorf("vin: %w", err)
		}
	}
	if r.MAC != "" {
		if r.MAC, err = normMAC(r.MAC); err != nil {
			return fmt.Errorf("mac: %w", err)
		}
	}
	if r.BIN != "" {
		if bin, last4, ok := ReduceCard(r.BIN); ok {
			r.BIN, r.CardLast4 = bin, last4
		} else if r.BIN, err = normBIN(r.BIN); err != nil {
			return fmt.Errorf("bin: %w", err)
		}
	}
	if r.Phone != "" {
		if p, err := n.normPhone(r.Phone); err == nil {
			r.Phone = p
		} else {
			return fmt.Errorf("phone: %w", err)
		}
	}
	if r.Domain != "" {
		if r.Domain, err = normDomain(r.Domain, false); err != nil {
			return fmt.Errorf("domain: %w", err)
		}
	}
	if r.Hostname != "" {
		if r.Hostname, err = normHostname(r.Hostname); err != nil {
			return fmt.Errorf("hostname: %w", err)
		}
	}
	hashes, declared := r.HashedPassword[:0], r.HashType
	for _, h := range r.HashedPassword {
		if strings.TrimSpace(h) == "" {
			continue
		}
		c, typ, err := NormalizeHashAs(h, declared)
		if err != nil {
			return fmt.Errorf("hashed_password: %w", err)
		}
		if len(c) > MaxField {
			return fmt.Errorf("hashed_password: longer than %d bytes", MaxField)
		}
		if len(hashes) == 0 {
			r.HashType = typ
		}
		hashes = append(hashes, c)
	}
	r.HashedPassword = hashes
	if len(r.HashedPassword) == 0 {
		r.HashedPassword = nil
		if r.Password == "" {
			r.HashType = ""
		}
	}
	r.HashType = strings.ToLower(r.HashType)
	// A password column that holds a card number is a card, not a secret
	// to keep whole.
	if bin, last4, ok := ReduceCard(r.Password); ok && r.BIN == "" {
		r.Password, r.BIN, r.CardLast4 = "", bin, last4
	}
	if len(r.CVEs) > 0 {
		cves := map[string]bool{}
		for _, c := range r.CVEs {
			if c = strings.ToUpper(strings.TrimSpace(c)); cveRE.MatchString(c) {
				cves[c] = true
			}
		}
		r.CVEs = r.CVEs[:0]
		for c := range cves {
			r.CVEs = append(r.CVEs, c)
		}
		slices.Sort(r.CVEs)
	}
	if len(r.CVEs) == 0 {
		r.CVEs = nil
	}
	if r.BreachDate != "" {
		if _, err := time.Parse(time.DateOnly, r.BreachDate); err != nil {
			return errors.New("breach date: want YYYY-MM-DD")
		}
	}
	if r.Empty() {
		return errors.New("no identifying field (email, username, name, phone, ip, url…)")
	}
	return nil
}

// Term is one blind-index entry of a record: a search type and the
// normalised value.
type Term struct {
	Type  Type
	Value string
}

// Terms returns the distinct index entries of a cleaned record.
func (n Normalizer) Terms(r *Record) []Term {
	// A record has a dozen or so terms: a linear search of them finds a
	// repeated one faster than a map (whose upkeep was a quarter of
	// Terms).
	out := make([]Term, 0, 16)
	seen := func(k Term) bool { return slices.Contains(out, k) }
	add := func(t Type, v string) {
		if v == "" {
			return
		}
		c, err := n.Normalize(t, v)
		if err != nil {
			return
		}
		if k := (Term{t, c}); !seen(k) {
			out = append(out, k)
		}
	}
	add(Email, r.Email)
	add(Username, r.Username)
	add(Name, r.Name)
	if isE164(r.Phone) {
		// Clean already formatted it (parsing it again is a tenth of
		// ingest's CPU): E.164 formats to itself.
		if k := (Term{Phone, r.Phone}); !seen(k) {
			out = append(out, k)
		}
	} else {
		add(Phone, r.Phone)
	}
	add(IP, r.IP)
	add(VIN, r.VIN)
	add(MAC, r.MAC)
	add(BIN, r.BIN)
	add(Password, r.Password)
	add(Address, r.Address)
	add(OrgAlias, r.OrgAlias)
	add(Hostname, r.Hostname)
	for _, h := range r.HashedPassword {
		add(HashedPassword, h)
	}
	for _, c := range r.CVEs {
		add(CVE, c)
	}
	if r.Email != "" {
		_, host, _ := strings.Cut(r.Email, "@")
		add(Domain, host)
		for _, l := range DomainLevels(host) {
			add(EmailDomain, l)
		}
	}
	if r.Domain != "" {
		add(Domain, r.Domain)
	}
	if h := URLHost(r.URL); h != "" {
		add(Domain, h)
		add(Hostname, h)
	}
	return out
}

// URLHost returns the host of a URL found in breach data (with or without
// a scheme), or "" (android:// application URLs have none).
func URLHost(raw string) string {
	if raw == "" || strings.HasPrefix(raw, "android://") {
		return ""
	}
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	h := strings.ToLower(u.Hostname())
	if h == "" || !strings.Contains(h, ".") {
		return ""
	}
	return h
}

// Identity is the canonical text of a record's normalised fields and its
// breach; its keyed hash is the record's id, so the same record ingested
// twice is stored once.
func (r *Record) Identity() string {
	var b strings.Builder
	for _, v := range []string{r.Breach, r.Email, r.Username, r.Password, strings.Join(r.HashedPassword, "\x1f"), r.HashType,
		r.Salt, r.Name, r.Phone, r.Address, r.IP, r.VIN, r.Domain, r.Hostname, r.MAC, r.OrgAlias, r.BIN, r.CardLast4,
		r.URL, r.DOB, r.Country, strings.Join(r.CVEs, ",")} {
		b.WriteString(v)
		b.WriteByte(0x1e)
	}
	return b.String()
}

// Mask hides a secret but its first and last character and its length
// ("hunter2" → "h*****2"); secrets of one or two characters are all
// stars.
func Mask(s string) string {
	r := []rune(s)
	if len(r) <= 2 {
		return strings.Repeat("*", len(r))
	}
	return string(r[0]) + strings.Repeat("*", len(r)-2) + string(r[len(r)-1])
}

// isE164 reports whether v is in the form Clean gives a phone number that
// parses: a plus sign and 8 to 15 digits, the first not 0.
func isE164(v string) bool {
	if len(v) < 9 || len(v) > 16 || v[0] != '+' || v[1] == '0' {
		return false
	}
	for i := 1; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}
