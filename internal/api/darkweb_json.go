package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/periscope-oss/periscope/internal/darkweb"
	"github.com/periscope-oss/periscope/internal/darkwebstore"

	"github.com/periscope-oss/periscope/internal/jsontext"
)

// The dark-web answers are written by hand, not by encoding/json: a
// search or listing page holds up to 1,000 records (about 1 MB), and
// reflecting over them (plus building a darkwebRecord and a masked copy
// of each) was most of the CPU of such an answer. The output is byte for
// byte what encoding/json gives for darkwebRecord and discoveredEmail
// with HTML escaping off (TestDarkwebJSONMatchesEncodingJSON).

// darkwebRecordBytes is about the size of one record on the wire (a
// generated record is 700 to 1,100 bytes), to size a body.
const darkwebRecordBytes = 1024

// darkwebParallelMin is the page size from which records are encoded on
// every core (below it a goroutine costs more than it saves).
const darkwebParallelMin = 256

// appendDarkwebRecords appends res as a JSON array of darkwebRecord
// (secrets masked as d decides; vuln, when set, is the vulnerability
// every record carries, already encoded), on every core for large pages.
func appendDarkwebRecords(b []byte, res []darkwebstore.Result, d *darkweb.Disclosure, vuln []byte) []byte {
	b = append(b, '[')
	parts := min(runtime.GOMAXPROCS(0), len(res)/(darkwebParallelMin/2))
	if parts <= 1 {
		for i := range res {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendDarkwebRecord(b, &res[i], d, vuln)
		}
		return append(b, ']')
	}
	// Each part encodes a contiguous run of records: the first straight
	// into b, the others into buffers of their own, joined to b in order.
	bufs := make([][]byte, parts)
	var wg sync.WaitGroup
	for p := 1; p < parts; p++ {
		lo, hi := p*len(res)/parts, (p+1)*len(res)/parts
		wg.Go(func() {
			out := make([]byte, 0, (hi-lo)*darkwebRecordBytes)
			for i := lo; i < hi; i++ {
				out = append(out, ',')
				out = appendDarkwebRecord(out, &res[i], d, vuln)
			}
			bufs[p] = out
		})
	}
	for i := range len(res) / parts {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendDarkwebRecord(b, &res[i], d, vuln)
	}
	wg.Wait()
	size := 1
	for _, part := range bufs {
		size += len(part)
	}
	b = slices.Grow(b, size)
	for _, part := range bufs {
		b = append(b, part...)
	}
	return append(b, ']')
}

// appendDarkwebRecord appends one record in darkwebRecord's field order.
func appendDarkwebRecord(b []byte, res *darkwebstore.Result, d *darkweb.Disclosure, vuln []byte) []byte {
	r := &res.Record
	clear, reason := d.Decide(r)
	masked := !clear
	b = append(b, `{"id":`...)
	b = appendJSONString(b, res.ID)
	b = append(b, `,"email":`...)
	b = appendJSONString(b, r.Email)
	b = append(b, `,"username":`...)
	b = appendJSONString(b, r.Username)
	b = append(b, `,"password":`...)
	if masked {
		b = appendMasked(b, r.Password)
	} else {
		b = appendJSONString(b, r.Password)
	}
	b = append(b, `,"hashed_password":[`...)
	for i, h := range r.HashedPassword {
		if i > 0 {
			b = append(b, ',')
		}
		if masked {
			b = appendMasked(b, h)
		} else {
			b = appendJSONString(b, h)
		}
	}
	b = append(b, `],"hash_type":`...)
	b = appendJSONString(b, r.HashType)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, r.Name)
	b = append(b, `,"phone":`...)
	b = appendJSONString(b, r.Phone)
	b = append(b, `,"address":`...)
	b = appendJSONString(b, r.Address)
	b = append(b, `,"ipaddress":`...)
	b = appendJSONString(b, r.IP)
	b = append(b, `,"vin":`...)
	b = appendJSONString(b, r.VIN)
	b = append(b, `,"domain":`...)
	dom := r.Domain
	if dom == "" {
		_, dom, _ = strings.Cut(r.Email, "@")
	}
	b = appendJSONString(b, dom)
	b = append(b, `,"database_name":`...)
	b = appendJSONString(b, r.Breach)
	b = append(b, `,"breach_date":`...)
	b = appendJSONString(b, r.BreachDate)
	b = append(b, `,"date_added":`...)
	b = strconv.AppendInt(b, res.DateAdded, 10)
	b = append(b, `,"hostname":`...)
	b = appendJSONString(b, r.Hostname)
	b = append(b, `,"mac_address":`...)
	b = appendJSONString(b, r.MAC)
	b = append(b, `,"org_alias":`...)
	b = appendJSONString(b, r.OrgAlias)
	b = append(b, `,"bin":`...)
	b = appendJSONString(b, r.BIN)
	b = append(b, `,"url":`...)
	b = appendJSONString(b, r.URL)
	b = append(b, `,"source":`...)
	b = appendJSONString(b, r.Source)
	b = append(b, `,"masked":`...)
	b = strconv.AppendBool(b, masked)
	if reason != "" {
		b = append(b, `,"masked_reason":`...)
		b = appendJSONString(b, reason)
	}
	if vuln != nil {
		b = append(b, `,"vulnerability":`...)
		b = append(b, vuln...)
	}
	return append(b, '}')
}

// appendDiscoveredEmail appends one item in discoveredEmail's field order.
func appendDiscoveredEmail(b []byte, e *darkwebstore.EmailRow) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, e.ID)
	b = append(b, `,"email":`...)
	b = appendJSONString(b, e.Email)
	b = append(b, `,"domain":`...)
	b = appendJSONString(b, e.Domain)
	b = append(b, `,"date_added":`...)
	b = strconv.AppendInt(b, e.LastSeen, 10)
	b = append(b, `,"breach_date":`...)
	b = appendJSONString(b, e.BreachDate)
	b = append(b, `,"breaches":`...)
	if e.Breaches == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, s := range e.Breaches {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, s)
		}
		b = append(b, ']')
	}
	b = append(b, `,"first_seen":`...)
	b = strconv.AppendInt(b, e.FirstSeen, 10)
	b = append(b, `,"last_seen":`...)
	b = strconv.AppendInt(b, e.LastSeen, 10)
	return append(b, '}')
}

// appendMasked appends darkweb.Mask(s) as a JSON string without building
// it: the first and last character, a star for each one between (all
// stars for two characters or fewer).
func appendMasked(b []byte, s string) []byte {
	n := utf8.RuneCountInString(s)
	b = append(b, '"')
	if n <= 2 {
		for range n {
			b = append(b, '*')
		}
		return append(b, '"')
	}
	first, fs := utf8.DecodeRuneInString(s)
	last, ls := utf8.DecodeLastRuneInString(s)
	b = appendJSONChars(b, maskRune(s[:fs], first))
	for range n - 2 {
		b = append(b, '*')
	}
	b = appendJSONChars(b, maskRune(s[len(s)-ls:], last))
	return append(b, '"')
}

// maskRune returns the text darkweb.Mask keeps for a rune: a byte that is
// not UTF-8 becomes U+FFFD, as a []rune conversion makes it.
func maskRune(s string, r rune) string {
	if r == utf8.RuneError && len(s) == 1 {
		return "\uFFFD"
	}
	return s
}

// appendJSONString appends s as a JSON string, escaped as encoding/json
// does with HTML escaping off (writeJSON's setting).
func appendJSONString(b []byte, s string) []byte { return jsontext.AppendString(b, s, false) }

// appendJSONChars appends the escaped characters of s, without quotes.
func appendJSONChars(b []byte, s string) []byte { return jsontext.AppendChars(b, s, false) }

// appendJSONValue appends v encoded by encoding/json with HTML escaping
// off, without the encoder's trailing newline.
func appendJSONValue(b []byte, v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b, err
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// writeJSONBody writes a whole JSON body built by hand (with the newline
// encoding/json's encoder ends with) in one write, with its length. An
// answer held for the audit (bufferedResponse) takes the slice itself
// instead of a copy.
func writeJSONBody(w http.ResponseWriter, status int, body []byte) {
	body = append(body, '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if br, ok := w.(*bufferedResponse); ok && br.body.Len() == 0 {
		br.WriteHeader(status)
		br.body = *bytes.NewBuffer(body)
		return
	}
	w.WriteHeader(status)
	w.Write(body)
}
