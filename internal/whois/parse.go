package whois

import (
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/textenc"
)

// Record is what the parser extracts from a WHOIS answer. Empty fields were
// absent or redacted.
type Record struct {
	Domain            string    `json:"domain,omitempty"`
	Registrar         string    `json:"registrar,omitempty"`
	RegistrarIANAID   string    `json:"registrar_iana_id,omitempty"`
	CreatedAt         time.Time `json:"created_at"`
	UpdatedAt         time.Time `json:"updated_at"`
	ExpiresAt         time.Time `json:"expires_at"`
	Status            []string  `json:"status"`
	NameServers       []string  `json:"nameservers"`
	DNSSEC            string    `json:"dnssec,omitempty"`
	RegistrantOrg     string    `json:"registrant_org,omitempty"`
	RegistrantCountry string    `json:"registrant_country,omitempty"`
	RegistrantEmail   string    `json:"registrant_email,omitempty"`
	NotFound          bool      `json:"not_found"`
	Raw               string    `json:"raw"`
}

// field names what a key feeds.
type field int

const (
	fNone field = iota
	fDomain
	fRegistrar
	fIANA
	fCreated
	fUpdated
	fExpires
	fStatus
	fNS
	fDNSSEC
	fRegOrg
	fRegCountry
	fRegEmail
)

// keys maps normalised keys (lower case, letters and digits and single
// spaces) to fields. Collected from the formats in testdata.
var keys = map[string]field{
	"domain name": fDomain, "domain": fDomain, "domainname": fDomain, "domain name ascii": fDomain,

	"registrar": fRegistrar, "registrar name": fRegistrar, "sponsoring registrar": fRegistrar,
	"registrar organization": fRegistrar, "registrar organisation": fRegistrar,
	"registration service provider": fRegistrar, "sponsoring registrar organization": fRegistrar,
	"registrar handle": fNone, "authorized agency": fRegistrar, "registrar company": fRegistrar,

	"registrar iana id": fIANA, "sponsoring registrar iana id": fIANA, "registrar id": fNone,

	"creation date": fCreated, "created": fCreated, "created on": fCreated, "created date": fCreated,
	"registered": fCreated, "registered on": fCreated, "registration time": fCreated,
	"registration date": fCreated, "domain registration date": fCreated, "record created": fCreated,
	"domain create date": fCreated, "domain created": fCreated, "creation": fCreated,
	"domain record activated": fCreated, "activated on": fCreated, "registered date": fCreated,
	"domain name commencement date": fCreated, "first registration date": fCreated, "create date": fCreated,
	"registration": fNone, "registered at": fCreated, "created at": fCreated, "entry created": fCreated,

	"updated date": fUpdated, "last updated": fUpdated, "last update": fUpdated, "last modified": fUpdated,
	"modified": fUpdated, "changed": fUpdated, "updated": fUpdated, "last updated on": fUpdated,
	"domain record last updated": fUpdated, "domain last updated date": fUpdated, "modified date": fUpdated,
	"last updated date": fUpdated, "domain last updated": fUpdated, "modification date": fUpdated,
	"updated on": fUpdated, "last modified date": fUpdated, "entry updated": fUpdated, "update date": fUpdated,

	"registry expiry date": fExpires, "registrar registration expiration date": fExpires,
	"expiration date": fExpires, "expiry date": fExpires, "expires": fExpires, "expires on": fExpires,
	"expire date": fExpires, "paid till": fExpires, "expiration time": fExpires,
	"domain expiration date": fExpires, "renewal date": fExpires, "record expires on": fExpires,
	"valid until": fExpires, "expire": fExpires, "domain expires": fExpires, "expiry": fExpires,
	"domain record expires": fExpires, "expires at": fExpires, "registry expiration date": fExpires,
	"date of expiry": fExpires, "validity": fExpires, "free date": fNone, "renewal": fExpires,

	"domain status": fStatus, "status": fStatus, "state": fStatus, "registration status": fStatus,
	"domain state": fStatus, "epp status": fStatus,

	"name server": fNS, "nserver": fNS, "nameserver": fNS, "nameservers": fNS, "name servers": fNS,
	"dns": fNS, "ns": fNS, "domain servers in listed order": fNS, "domain nameservers": fNS,
	"name servers information": fNS, "dns servers": fNS, "host name": fNS, "hostname": fNS,
	"name server information": fNS, "primary server": fNS, "secondary server": fNS, "nameservers dns": fNS,

	"dnssec": fDNSSEC, "signed": fDNSSEC, "dnssec status": fDNSSEC, "ds records": fNone,

	"registrant organization": fRegOrg, "registrant organisation": fRegOrg, "registrant org": fRegOrg,
	"registrant": fRegOrg, "org": fRegOrg, "organization": fRegOrg, "organisation": fRegOrg,
	"registrant company": fRegOrg, "registrant organization name": fRegOrg, "holder": fRegOrg,
	"owner": fRegOrg, "registrant name": fNone,

	"registrant country": fRegCountry, "registrant country code": fRegCountry,
	"registrant country economy": fRegCountry,

	"domain datecreated": fCreated, "domain datelastmodified": fUpdated, "domain datebilleduntil": fExpires,
	"domain registered": fCreated, "record will expire on": fExpires, "record created on": fCreated,
	"record last updated on": fUpdated,
	"registrant email":       fRegEmail, "registrant e mail": fRegEmail, "registrant contact email": fRegEmail,
}

// sectionKeys are the keys that count only inside a registrant section.
var sectionOnly = map[string]bool{"org": true, "organization": true, "organisation": true, "owner": false}

var (
	nonKeyChars = regexp.MustCompile(`[^a-z0-9]+`)
	dotLeader   = regexp.MustCompile(`\.{2,}`)
	onDate      = regexp.MustCompile(`(?i)^(record (?:created|expires|last updated) on)\s+(.+)$`)
	bracketKey  = regexp.MustCompile(`^\[([^\]]{1,40})\]\s*(.*)$`)
	emailRe     = regexp.MustCompile(`[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}`)
)

func normKey(k string) string {
	k = strings.ToLower(strings.TrimSpace(k))
	return strings.TrimSpace(nonKeyChars.ReplaceAllString(k, " "))
}

// Parse extracts a Record from a raw WHOIS answer. It never fails: fields it
// cannot find stay empty, and Raw always holds the text.
func Parse(raw string) Record {
	raw = textenc.String(raw) // the one decoding of every ingested text
	rec := Record{Raw: raw, NotFound: NotFound(raw)}
	section := "" // the current block heading, normalised
	sectionField := fNone
	sectionUsed := false
	for _, line := range strings.Split(raw, "\n") {
		line = strings.TrimRight(line, "\r \t")
		if line == "" {
			// A blank line ends a block, unless it sits right under the
			// block's heading (.hk, .mo).
			if sectionUsed {
				section, sectionField = "", fNone
			}
			continue
		}
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "%") || strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, ">>>") {
			continue
		}
		indented := line[0] == ' ' || line[0] == '\t'
		key, val, hasKV := splitKV(trimmed)
		if m := onDate.FindStringSubmatch(trimmed); m != nil {
			key, val, hasKV = m[1], m[2], true
		}
		if strings.Trim(trimmed, "-=*") == "" {
			continue
		}
		if !hasKV || (indented && sectionField == fNS && !strings.Contains(trimmed, ": ")) {
			if sectionField != fNone && (indented || sectionField == fRegistrar || looksLikeHost(strings.ToLower(strings.Fields(trimmed)[0]))) {
				rec.apply(sectionField, "", trimmed, section)
				sectionUsed = true
				continue
			}
			// A heading such as "Registrar", "Registrant:" or "Name servers".
			h := normKey(strings.TrimSuffix(trimmed, ":"))
			if len(h) < 40 {
				section, sectionField, sectionUsed = h, headingField(h), false
			}
			continue
		}
		nk := normKey(key)
		if val == "" {
			section, sectionField, sectionUsed = nk, headingField(nk), false
			continue
		}
		sectionUsed = true
		f, ok := keys[nk]
		if !ok && strings.HasPrefix(nk, "ns name") {
			f, ok = fNS, true
		}
		inRegistrant := strings.HasPrefix(section, "registrant") || section == "holder" || section == "owner"
		switch {
		case ok && sectionOnly[nk] && !inRegistrant:
			continue
		case !ok && inRegistrant:
			switch nk {
			case "country", "country code", "countrycode":
				f, ok = fRegCountry, true
			case "email", "e mail":
				f, ok = fRegEmail, true
			}
		case !ok && (section == "registrar" || section == "sponsoring registrar") && (nk == "name" || nk == "organization" || nk == "organisation"):
			f, ok = fRegistrar, true
		case !ok && section == "domain" && nk == "name":
			// .ee: a "Domain:" block whose "name:" is the domain.
			f, ok = fDomain, true
		case ok && f == fCreated && section != "" && section != "domain" && !strings.HasPrefix(section, "domain"):
			// Contact blocks (.it, .eu) carry their own dates.
			if indented {
				continue
			}
		case ok && (f == fUpdated || f == fExpires) && indented && section != "":
			continue
		}
		if !ok {
			if sectionField == fNS && indented {
				rec.apply(fNS, "", trimmed, section)
			}
			continue
		}
		rec.apply(f, nk, val, section)
	}
	slices.Sort(rec.NameServers)
	rec.NameServers = slices.Compact(rec.NameServers)
	return rec
}

// splitKV splits "Key: value", "Key.......: value" and "[Key] value".
func splitKV(s string) (key, val string, ok bool) {
	if k, v, tab := strings.Cut(s, "\t"); tab && !strings.Contains(k, ":") && len(k) < 40 {
		return k, strings.TrimSpace(v), true
	}
	if m := bracketKey.FindStringSubmatch(s); m != nil {
		return m[1], strings.TrimSpace(m[2]), true
	}
	i := strings.IndexByte(s, ':')
	if i <= 0 || i > 60 {
		return "", "", false
	}
	key = s[:i]
	if strings.Contains(key, "http") || strings.Count(key, " ") > 6 {
		return "", "", false
	}
	key = dotLeader.ReplaceAllString(key, "")
	return key, strings.TrimSpace(s[i+1:]), true
}

func headingField(h string) field {
	switch f := keys[h]; f {
	case fNS, fStatus:
		return f
	case fDomain:
		// .gg and .tk write the name on the line under "Domain:".
		return f
	}
	if strings.Contains(h, "name server") || strings.Contains(h, "nameserver") || strings.HasPrefix(h, "dns") {
		return fNS
	}
	if h == "registrar" || h == "sponsoring registrar" {
		return fRegistrar
	}
	return fNone
}

var redactedWords = []string{"redacted", "privacy", "not disclosed", "withheld", "data protected",
	"gdpr", "non-public", "statutory masking", "hidden", "not available", "contact privacy", "please query"}

func redacted(v string) bool {
	low := strings.ToLower(v)
	for _, w := range redactedWords {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}

func (r *Record) apply(f field, key, val, section string) {
	val = strings.TrimSpace(val)
	if val == "" {
		return
	}
	switch f {
	case fDomain:
		if r.Domain != "" {
			return
		}
		if !strings.ContainsAny(val, " \t") {
			r.Domain = strings.ToLower(strings.TrimSuffix(val, "."))
			return
		}
		// "xn--fl-fka.se (föl.se)" (.se), "GOOGLE.TK is Active" (.tk):
		// the name, then its Unicode form or its state.
		if first := strings.ToLower(strings.TrimSuffix(strings.Fields(val)[0], ".")); looksLikeHost(first) {
			r.Domain = first
		}
	case fRegistrar:
		if r.Registrar == "" && !strings.HasPrefix(strings.ToLower(val), "http") {
			r.Registrar = val
		}
	case fIANA:
		if r.RegistrarIANAID == "" {
			r.RegistrarIANAID = val
		}
	case fCreated:
		setDate(&r.CreatedAt, val)
	case fUpdated:
		setDate(&r.UpdatedAt, val)
	case fExpires:
		setDate(&r.ExpiresAt, val)
	case fStatus:
		// "clientTransferProhibited https://icann.org/epp#..." keeps the code.
		for _, s := range strings.Split(val, ",") {
			s = strings.TrimSpace(s)
			if j := strings.IndexAny(s, " \t("); j > 0 {
				s = s[:j]
			}
			if s != "" && !slices.Contains(r.Status, s) {
				r.Status = append(r.Status, s)
			}
		}
	case fNS:
		for _, ns := range strings.Fields(strings.ReplaceAll(val, ",", " ")) {
			ns = strings.ToLower(strings.TrimSuffix(ns, "."))
			if looksLikeHost(ns) {
				r.NameServers = append(r.NameServers, ns)
				break // later words are IP addresses or glue
			}
		}
	case fDNSSEC:
		if r.DNSSEC == "" {
			r.DNSSEC = strings.ToLower(val)
		}
	case fRegOrg:
		if r.RegistrantOrg == "" && !redacted(val) {
			r.RegistrantOrg = val
		}
	case fRegCountry:
		if r.RegistrantCountry == "" && !redacted(val) {
			r.RegistrantCountry = strings.ToUpper(val)
		}
	case fRegEmail:
		if r.RegistrantEmail == "" && !redacted(val) {
			if m := emailRe.FindString(val); m != "" {
				r.RegistrantEmail = strings.ToLower(m)
			}
		}
	}
}

func looksLikeHost(s string) bool {
	if !strings.Contains(s, ".") || len(s) > 253 {
		return false
	}
	for _, c := range s {
		if !(c == '.' || c == '-' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 0x80) {
			return false
		}
	}
	// An IPv4 address is glue, not a name server name.
	return strings.Trim(s, "0123456789.") != ""
}

func setDate(dst *time.Time, v string) {
	if !dst.IsZero() {
		return
	}
	if t, ok := ParseDate(v); ok {
		*dst = t
	}
}

var dateLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05Z0700",
	"2006-01-02T15:04:05Z07",
	"2006-01-02T15:04:05",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05 -0700",
	"2006-01-02 15:04:05-07",
	"2006-01-02 15:04:05 -07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02 15:04:05",
	"2006-01-02 15:04",
	"2006-01-02",
	"2006.01.02 15:04:05",
	"2006.01.02",
	"2006/01/02 15:04:05",
	"2006/01/02",
	"2006. 01. 02.",
	"02-Jan-2006 15:04:05",
	"02-Jan-2006",
	"2-Jan-2006",
	"02-January-2006",
	"02.01.2006 15:04:05",
	"02.01.2006",
	"02/01/2006 15:04:05",
	"02/01/2006",
	"02-01-2006",
	"January 2 2006",
	"Jan 2 2006",
	"2 January 2006",
	"02 Jan 2006",
	"Mon Jan 2 15:04:05 2006",
	"Mon Jan 2 2006",
	"20060102",
	"2006-Jan-02",
	"2006-01-02T15:04:05.999Z0700",
	"2.1.2006 15:04:05",
	"2.1.2006",
	"01/02/2006",
	"20060102 15:04:05",
	"2 Jan 2006",
}

var (
	tzWord     = regexp.MustCompile(`\s*\(?\b(UTC|GMT|[A-Z]{3,4}T)\b\)?\s*`)
	parenTail  = regexp.MustCompile(`\s*\(.*\)\s*$`)
	spaces     = regexp.MustCompile(`\s+`)
	ordinal    = regexp.MustCompile(`\b(\d{1,2})(st|nd|rd|th)\b`)
	beforeWord = regexp.MustCompile(`^(before|after)\s+`)
)

// ParseDate reads the date formats registries use. Times without a zone are
// taken as UTC.
func ParseDate(v string) (time.Time, bool) {
	v = strings.TrimSpace(v)
	v = parenTail.ReplaceAllString(v, "")
	v = beforeWord.ReplaceAllString(v, "")
	v = strings.TrimSpace(tzWord.ReplaceAllString(v, " "))
	v = strings.TrimSuffix(v, ".")
	v = spaces.ReplaceAllString(v, " ")
	v = strings.Replace(v, "-T", "T", 1)
	v = ordinal.ReplaceAllString(v, "$1")
	v = strings.ReplaceAll(v, ",", "")
	if v == "" {
		return time.Time{}, false
	}
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, v); err == nil {
			if t.Year() < 1980 || t.Year() > 2200 {
				return time.Time{}, false
			}
			return t.UTC(), true
		}
	}
	if strings.HasSuffix(v, ".") || strings.Count(v, ".") == 3 {
		if t, err := time.Parse("2006. 01. 02.", v+"."); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

var notFoundTexts = []string{
	"no match", "not found", "no entries found", "no data found", "no object found",
	"not registered", "nothing found", "no information available", "object does not exist",
	"does not exist", "status: free", "status: available", "is available for registration",
	"no records matching", "domain not found", "is free", "no such domain",
	"not exist", "not been registered", "returned 0 objects", "220 available",
	"not available for second level registration", "no found", "does not have any data",
	"domain unknown", "no matching record", "available\n", "domain name not known",
}

// NotFound reports whether an answer says the domain is not registered.
// Registries word it in many ways; the list comes from the recorded corpus.
// Only the head of the answer and the head of its non-comment lines are
// read (and the last comment line, where RoTLD says it): legal notices
// further down mention "not found" and "available" in passing.
func NotFound(raw string) bool {
	low := strings.ToLower(raw)
	var body strings.Builder
	lastComment := ""
	for _, l := range strings.Split(low, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "%") || strings.HasPrefix(t, "#") {
			lastComment = t
			continue
		}
		if len(t) < 100 && notFoundLine(t) {
			return true
		}
		if t == "" || body.Len() > 1500 {
			continue
		}
		t = spaces.ReplaceAllString(t, " ")
		body.WriteString(t + "\n")
	}
	for _, part := range []string{head(low, 1500), body.String(), lastComment} {
		for _, t := range notFoundTexts {
			if strings.Contains(part, t) {
				return true
			}
		}
	}
	return false
}

func head(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// notFoundLine matches a short line that is itself the verdict, wherever it
// sits in the answer.
func notFoundLine(t string) bool {
	for _, p := range []string{"no match", "not found", "no entries found", "no data found",
		"domain not found", "not available for registration", "not available for second level"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}
