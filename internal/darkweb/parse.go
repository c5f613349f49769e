package darkweb

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Options are what every parser needs.
type Options struct {
	// File names the input in rejects.
	File string
	// Encoding decodes the input (UTF8 when empty).
	Encoding Encoding
	// Breach and BreachDate label every record (combolists carry no
	// breach of their own; other layouts use them as defaults).
	Breach     string
	BreachDate string
	// Map overrides CSV header mapping: column name (case-insensitive) →
	// field name ("" or "skip" ignores the column).
	Map map[string]string
	// HashType is the type of hashes whose source declares none
	// (--hash-type; see NormalizeHashAs).
	HashType string
}

func (o Options) enc() Encoding {
	if o.Encoding == "" {
		return UTF8
	}
	return o.Encoding
}

// emit labels r with the defaults of o and hands it to the sink.
func (o Options) emit(sink Sink, r Record, source string) error {
	if r.Breach == "" {
		r.Breach = o.Breach
	}
	if r.BreachDate == "" {
		r.BreachDate = o.BreachDate
	}
	if r.HashType == "" && len(r.HashedPassword) > 0 {
		r.HashType = o.HashType
	}
	r.Source = source
	return sink.Record(r)
}

// ParseCombolist reads a combolist: one credential a line, as
// email:password, username:password, email;password, or with the site:
// url:login:pass, url|login|pass or "url login pass". Blank lines and
// lines starting with # are skipped.
func ParseCombolist(r io.Reader, o Options, sink Sink) error {
	lr := newLineReader(r, o.File, o.enc(), sink)
	return lr.each(func(line string, n int) error {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			return nil
		}
		rec, reason := comboLine(line)
		if reason != "" {
			lr.reject(n, "%s", reason)
			return nil
		}
		if err := o.emit(sink, rec, "combolist"); err != nil {
			return err
		}
		return nil
	})
}

// comboLine splits one combolist line.
func comboLine(line string) (Record, string) {
	var rec Record
	var url, login, pass string
	switch {
	case strings.Count(line, "|") >= 2:
		parts := strings.SplitN(line, "|", 3)
		url, login, pass = parts[0], parts[1], parts[2]
	case strings.Contains(line, "://"):
		i := strings.Index(line, "://")
		rest := line[i+3:]
		// The URL ends at the first colon that is not a port.
		segs := strings.Split(rest, ":")
		end := 1
		for end < len(segs) && isPort(segs[end]) {
			end++
		}
		if len(segs)-end < 2 {
			if f := strings.Fields(line); len(f) == 3 {
				url, login, pass = f[0], f[1], f[2]
				break
			}
			return rec, "URL line without login and password (want url:login:pass)"
		}
		url = line[:i+3] + strings.Join(segs[:end], ":")
		login, pass = segs[end], strings.Join(segs[end+1:], ":")
	case len(strings.Fields(line)) == 3 && strings.ContainsAny(strings.Fields(line)[0], "./"):
		f := strings.Fields(line)
		url, login, pass = f[0], f[1], f[2]
	default:
		i := strings.IndexAny(line, ":;")
		if i < 0 {
			return rec, "no separator (want login:password or login;password)"
		}
		login, pass = line[:i], line[i+1:]
	}
	login = strings.TrimSpace(login)
	if login == "" {
		return rec, "empty login"
	}
	if pass == "" {
		return rec, "empty password"
	}
	rec.URL, rec.Password = strings.TrimSpace(url), pass
	if strings.Contains(login, "@") {
		rec.Email = login
	} else {
		rec.Username = login
	}
	return rec, ""
}

func isPort(s string) bool {
	p := s
	if i := strings.IndexAny(p, "/?#"); i >= 0 {
		p = p[:i]
	}
	if p == "" || len(p) > 5 {
		return false
	}
	for _, c := range p {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// fieldAliases maps lower-cased column names to record fields.
var fieldAliases = map[string]string{
	"email": "email", "e-mail": "email", "mail": "email", "email_address": "email", "emailaddress": "email",
	"username": "username", "user": "username", "login": "username", "user_name": "username", "nick": "username", "nickname": "username",
	"password": "password", "pass": "password", "passwd": "password", "pwd": "password", "plaintext": "password",
	"hash": "hash", "hashed_password": "hash", "password_hash": "hash", "passwordhash": "hash", "pw_hash": "hash",
	"hash_type": "hash_type", "hashtype": "hash_type", "algorithm": "hash_type",
	"ntlm": "ntlm", "nt_hash": "ntlm", "nthash": "ntlm", "ntlm_hash": "ntlm", "nt": "ntlm",
	"salt": "salt",
	"name": "name", "full_name": "name", "fullname": "name", "display_name": "name",
	"first_name": "first_name", "firstname": "first_name", "last_name": "last_name", "lastname": "last_name", "surname": "last_name",
	"phone": "phone", "phone_number": "phone", "telephone": "phone", "mobile": "phone", "tel": "phone",
	"address": "address", "street": "address", "street_address": "address",
	"ip": "ip", "ip_address": "ip", "ipaddress": "ip", "last_ip": "ip", "reg_ip": "ip",
	"dob": "dob", "birthdate": "dob", "birthday": "dob", "date_of_birth": "dob",
	"vin": "vin", "mac": "mac", "mac_address": "mac", "hostname": "hostname", "computer_name": "hostname",
	"domain": "domain", "url": "url", "website": "url", "company": "org_alias", "org": "org_alias", "organization": "org_alias", "org_alias": "org_alias",
	"card": "bin", "card_number": "bin", "cc": "bin", "bin": "bin", "country": "country", "cve": "cve",
}

// recordFields are the field names --map accepts.
var recordFields = []string{"email", "username", "password", "hash", "hash_type", "ntlm", "salt", "name", "first_name", "last_name",
	"phone", "address", "ip", "dob", "vin", "mac", "hostname", "domain", "url", "org_alias", "bin", "country", "cve", "skip"}

// CheckMap validates --map overrides.
func CheckMap(m map[string]string) error {
	for col, f := range m {
		if !slices.Contains(recordFields, f) {
			return fmt.Errorf("--map %s=%s: unknown field (fields: %s)", col, f, strings.Join(recordFields, ", "))
		}
	}
	return nil
}

// set stores a mapped value in r.
func set(r *Record, field, v string) {
	if strings.TrimSpace(v) == "" {
		return
	}
	switch field {
	case "email":
		r.Email = v
	case "username":
		r.Username = v
	case "password":
		r.Password = v
	case "hash":
		r.HashedPassword = append(r.HashedPassword, v)
	case "hash_type":
		r.HashType = v
	case "ntlm":
		r.HashedPassword = append(r.HashedPassword, v)
		r.HashType = "ntlm"
	case "salt":
		r.Salt = v
	case "name":
		r.Name = v
	case "first_name":
		r.Name = strings.TrimSpace(v + " " + r.Name)
	case "last_name":
		r.Name = strings.TrimSpace(r.Name + " " + v)
	case "phone":
		r.Phone = v
	case "address":
		r.Address = v
	case "ip":
		r.IP = v
	case "dob":
		r.DOB = v
	case "vin":
		r.VIN = v
	case "mac":
		r.MAC = v
	case "hostname":
		r.Hostname = v
	case "domain":
		r.Domain = v
	case "url":
		r.URL = v
	case "org_alias":
		r.OrgAlias = v
	case "bin":
		r.BIN = v
	case "country":
		r.Country = v
	case "cve":
		r.CVEs = append(r.CVEs, cveFindRE.FindAllString(v, -1)...)
	}
}

// ParseCSV reads a CSV or TSV dump (the delimiter is guessed from the
// header: tab, comma, semicolon or pipe) whose header names its columns.
// A header with no recognisable column is an error before any record.
func ParseCSV(r io.Reader, o Options, sink Sink) error {
	lr := newLineReader(r, o.File, o.enc(), sink)
	header, _, err := lr.next()
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: empty file", o.File)
	}
	if err != nil {
		return err
	}
	delim := ','
	best := 0
	for _, d := range []rune{'\t', ',', ';', '|'} {
		if c := strings.Count(header, string(d)); c > best {
			delim, best = d, c
		}
	}
	cols, err := csvSplit(header, delim)
	if err != nil {
		return fmt.Errorf("%s:1: header: %w", o.File, err)
	}
	over := map[string]string{}
	for k, v := range o.Map {
		over[strings.ToLower(strings.TrimSpace(k))] = v
	}
	fields := make([]string, len(cols))
	known := 0
	for i, c := range cols {
		c = strings.ToLower(strings.TrimSpace(c))
		f, ok := over[c]
		if !ok {
			f = fieldAliases[c]
		}
		if f == "skip" {
			f = ""
		}
		fields[i] = f
		if f != "" {
			known++
		}
	}
	if known == 0 {
		seen := make([]string, 0, min(len(cols), 12))
		for _, c := range cols[:min(len(cols), 12)] {
			seen = append(seen, strconv.Quote(clip(strings.TrimSpace(c), 40)))
		}
		if len(cols) > 12 {
			seen = append(seen, fmt.Sprintf("and %d more", len(cols)-12))
		}
		return fmt.Errorf("%s:1: no recognisable column in the header: saw %s; name the columns (email, username, password, hash, name, phone…) or map them with --map col=field (fields: %s): nothing stored",
			o.File, strings.Join(seen, ", "), strings.Join(recordFields[:len(recordFields)-1], ", "))
	}
	return lr.each(func(line string, n int) error {
		if strings.TrimSpace(line) == "" {
			return nil
		}
		vals, err := csvSplit(line, delim)
		if err != nil {
			lr.reject(n, "%v", err)
			return nil
		}
		if len(vals) != len(cols) {
			lr.reject(n, "%d columns, the header has %d", len(vals), len(cols))
			return nil
		}
		var rec Record
		for i, v := range vals {
			set(&rec, fields[i], v)
		}
		if err := o.emit(sink, rec, "breach-csv"); err != nil {
			return err
		}
		return nil
	})
}

// csvSplit parses one CSV line (quoted fields may not span lines: a dump
// is read line by line so one bad line cannot swallow the file).
func csvSplit(line string, delim rune) ([]string, error) {
	if line != "" && !strings.ContainsAny(line, "\"\r\n") {
		// Without quotes or line ends, encoding/csv splits at every
		// delimiter; a reader (and its 4 KiB buffer) a line was a sixth
		// of parsing a dump.
		return strings.Split(line, string(delim)), nil
	}
	cr := csv.NewReader(strings.NewReader(line))
	cr.Comma = delim
	cr.LazyQuotes = true
	cr.FieldsPerRecord = -1
	rec, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("bad CSV line: %w", err)
	}
	return rec, nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// dehashedFields maps DeHashed's record keys to record fields.
var dehashedFields = map[string]string{
	"email": "email", "username": "username", "password": "password", "hashed_password": "hash", "hash_type": "hash_type",
	"name": "name", "phone": "phone", "address": "address", "ip_address": "ip", "vin": "vin", "domain": "domain",
	"url": "url", "dob": "dob", "company": "org_alias", "social": "", "cryptocurrency_address": "",
}

// jsonStrings reads a JSON value that is a string, an array of strings
// or null (no value). The value is valid JSON already (its object was
// decoded); a string without escapes is taken as it stands.
func jsonStrings(raw json.RawMessage) ([]string, error) {
	errShape := errors.New("want a string or an array of strings")
	switch {
	case len(raw) == 0:
		return nil, errShape
	case raw[0] == '"':
		if len(raw) >= 2 && bytes.IndexByte(raw, '\\') < 0 {
			return []string{string(raw[1 : len(raw)-1])}, nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, errShape
		}
		return []string{s}, nil
	case raw[0] == '[':
		var vals []string
		if err := json.Unmarshal(raw, &vals); err != nil {
			return nil, errShape
		}
		return vals, nil
	case string(raw) == "null":
		return nil, nil
	}
	return nil, errShape
}

func dehashedRecord(b []byte) (Record, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return Record{}, fmt.Errorf("not a JSON object: %v", err)
	}
	var rec Record
	for k, raw := range m {
		if f, ok := dehashedFields[k]; (!ok || f == "") && k != "database_name" {
			continue // id, and fields Periscope does not keep
		}
		vals, err := jsonStrings(raw)
		if err != nil {
			return Record{}, fmt.Errorf("field %q: %v", k, err)
		}
		switch k {
		case "database_name":
			if len(vals) > 0 {
				rec.Breach = vals[0]
			}
			continue
		case "id":
			continue
		}
		f, ok := dehashedFields[k]
		if !ok || f == "" {
			continue
		}
		for i, v := range vals {
			if i > 0 && f != "hash" && f != "cve" {
				break
			}
			set(&rec, f, v)
		}
	}
	return rec, nil
}

// Machine is what a stealer log says of the infected machine.
type Machine struct {
	Hostname, IP, MAC, Country, User string
}

// ParseStealer reads a stealer-log folder: every Passwords.txt-style file
// (blocks of "Key: value" lines separated by ===== lines or blank lines,
// keys URL/Host/HOSTNAME, USER/Login/Username, PASS/Password) below root,
// each labelled with the machine facts of the System.txt,
// UserInformation.txt or Information.txt beside it.
//
// A passwords file that is binary or cut short is rejected (its complete
// blocks kept) and the other logs are read; the folder's error then wraps
// ErrIncomplete.
func ParseStealer(root string, o Options, sink Sink) error {
	var bad []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !isPasswordsFile(d.Name()) {
			return nil
		}
		m := machineFacts(filepath.Dir(path), o, sink)
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		po := o
		po.File = path
		err = parsePasswords(f, po, m, sink)
		if errors.Is(err, ErrBinary) {
			if sink.Reject != nil {
				sink.Reject(Reject{File: path, Line: 1, Reason: strings.TrimPrefix(err.Error(), path+": ")})
			}
			bad = append(bad, path)
			return nil
		}
		if errors.Is(err, ErrIncomplete) {
			bad = append(bad, path)
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s: %w: %d passwords file(s) refused or cut short (first %s); the other logs are stored", root, ErrIncomplete, len(bad), bad[0])
	}
	return nil
}

func isPasswordsFile(name string) bool {
	n := strings.ToLower(name)
	return n == "passwords.txt" || n == "all passwords.txt" || n == "allpasswords_list.txt"
}

// machineFacts reads the facts file of a log folder, if any.
func machineFacts(dir string, o Options, sink Sink) Machine {
	var m Machine
	for _, name := range []string{"System.txt", "UserInformation.txt", "Information.txt", "system_info.txt"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		lr := newLineReader(f, filepath.Join(dir, name), o.enc(), sink)
		for {
			line, _, err := lr.next()
			if err != nil {
				break
			}
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			k, v = strings.ToLower(strings.Trim(strings.TrimSpace(k), "-*• ")), strings.TrimSpace(v)
			switch k {
			case "computer name", "computername", "machinename", "machine name", "pc name", "hostname", "computer":
				m.Hostname = v
			case "ip", "ip address", "ipaddress", "ip addr":
				m.IP = v
			case "mac", "mac address", "macaddress", "hwid mac":
				m.MAC = v
			case "country", "country code":
				m.Country = v
			case "user name", "username", "user":
				m.User = v
			}
		}
		f.Close()
	}
	return m
}

// parsePasswords reads one Passwords.txt.
func parsePasswords(r io.Reader, o Options, m Machine, sink Sink) error {
	lr := newLineReader(r, o.File, o.enc(), sink)
	var cur Record
	start, have := 0, false
	flush := func() error {
		defer func() { cur, have = Record{}, false }()
		if !have {
			return nil
		}
		if cur.Password == "" || cur.Email == "" && cur.Username == "" {
			lr.reject(start, "block without login and password")
			return nil
		}
		cur.Hostname, cur.IP, cur.MAC, cur.Country = m.Hostname, m.IP, m.MAC, m.Country
		if n, err := (Normalizer{}).Normalize(IP, cur.IP); err != nil || n == "" {
			cur.IP = ""
		}
		if _, err := normMAC(cur.MAC); err != nil {
			cur.MAC = ""
		}
		if _, err := normHostname(cur.Hostname); err != nil {
			cur.Hostname = ""
		}
		return o.emit(sink, cur, "stealer")
	}
	if err := lr.each(func(line string, n int) error {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "===") || strings.HasPrefix(t, "---") || strings.HasPrefix(t, "***") {
			if err := flush(); err != nil {
				return err
			}
			return nil
		}
		k, v, ok := strings.Cut(t, ":")
		if !ok {
			return nil
		}
		v = strings.TrimSpace(v)
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "url", "host", "hostname", "site", "origin":
			if have && cur.URL != "" {
				if err := flush(); err != nil {
					return err
				}
			}
			cur.URL = v
		case "user", "login", "username", "user name", "email":
			if strings.Contains(v, "@") {
				cur.Email = v
			} else {
				cur.Username = v
			}
		case "pass", "password", "pwd":
			cur.Password = v
		default:
			return nil
		}
		if !have {
			start, have = n, true
		}
		return nil
	}); err != nil {
		return err
	}
	return flush()
}

// BreachInfo is a breach's metadata, in HIBP's breach shape.
type BreachInfo struct {
	Name        string   `json:"Name"`
	Title       string   `json:"Title"`
	Domain      string   `json:"Domain"`
	BreachDate  string   `json:"BreachDate"`
	AddedDate   string   `json:"AddedDate"`
	PwnCount    int64    `json:"PwnCount"`
	DataClasses []string `json:"DataClasses"`
	Description string   `json:"Description"`
}

// ParseBreaches reads a breach catalogue: a JSON array of HIBP breach
// objects. An entry without a Name, or with a BreachDate not YYYY-MM-DD,
// is rejected.
func ParseBreaches(r io.Reader, o Options, emit func(BreachInfo) error, reject func(Reject)) error {
	br, err := textInput(bufio.NewReaderSize(r, 64<<10), o.File)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(io.LimitReader(br, 256<<20))
	var raw []json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return fmt.Errorf("%s: not a JSON array of breaches (truncated?): %w", o.File, err)
	}
	for i, e := range raw {
		if !json.Valid(e) {
			continue
		}
		var b BreachInfo
		if err := json.Unmarshal(e, &b); err != nil {
			reject(Reject{File: o.File, Line: i + 1, Reason: fmt.Sprintf("entry %d: %v", i+1, err)})
			continue
		}
		b.Name = strings.TrimSpace(b.Name)
		bad := ""
		switch {
		case b.Name == "":
			bad = "no Name"
		case CheckText(b.Name+b.Title+b.Domain+b.Description) != nil:
			bad = "invalid text"
		case b.BreachDate != "" && !validDate(b.BreachDate):
			bad = "BreachDate is not YYYY-MM-DD"
		}
		if bad != "" {
			reject(Reject{File: o.File, Line: i + 1, Reason: fmt.Sprintf("entry %d: %s", i+1, bad)})
			continue
		}
		if err := emit(b); err != nil {
			return err
		}
	}
	return nil
}

func validDate(s string) bool {
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}
