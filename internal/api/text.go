package api

import (
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/periscope-oss/periscope/internal/periscope"
)

// Every string a client sends must be text: valid UTF-8, no NUL, no lone
// UTF-16 surrogate. PostgreSQL refuses NUL in text (a 500 and a lost audit
// record), SQLite stores invalid bytes and echoes them raw inside JSON, and
// encoding/json silently turns invalid UTF-8 and lone surrogate escapes into
// U+FFFD, so the checks run on the raw bytes and escapes before anything is
// decoded, charged or stored.

// errText is the one answer to a request holding something that is not
// text; what names the parameter, field or part of the request.
func errText(what string) error {
	return periscope.Errorf(periscope.EInvalidText,
		"%s must be UTF-8 text without NUL characters or unpaired surrogates (\\ud800-\\udfff).", what)
}

// checkRequestText checks the path and the query string of a request.
func checkRequestText(r *http.Request) error {
	if !isText(r.URL.Path) {
		return errText("The request path")
	}
	if r.URL.RawQuery == "" {
		return nil
	}
	// Checked on the raw query as well as the decoded values: ParseQuery
	// stops at the first malformed pair, and later pairs still reach
	// handlers through r.URL.Query().
	q, _ := url.ParseQuery(r.URL.RawQuery)
	for k, vs := range q {
		if !isText(k) {
			return errText("Query parameter names")
		}
		for _, v := range vs {
			if !isText(v) {
				return errText(periscope.Clip(k, 64))
			}
		}
	}
	if raw, err := url.QueryUnescape(strings.ReplaceAll(r.URL.RawQuery, "+", " ")); err == nil && !isText(raw) {
		return errText("The query string")
	}
	return nil
}

// checkFormText checks the fields of a form-encoded body.
func checkFormText(fields url.Values) error {
	for k, vs := range fields {
		if !isText(k) {
			return errText("Form field names")
		}
		for _, v := range vs {
			if !isText(v) {
				return errText(periscope.Clip(k, 64))
			}
		}
	}
	return nil
}

// isText reports whether s is valid UTF-8 without NUL. (Surrogates cannot
// appear in valid UTF-8.)
func isText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// checkJSONText checks a JSON document before it is decoded: valid UTF-8,
// and no \u0000 or unpaired surrogate escape in any string (keys, values,
// query_tags alike). The error names the field holding the bad string. Raw
// control characters inside strings are refused by the JSON syntax check.
func checkJSONText(b []byte) error {
	key := "" // the last object key seen
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		end, ok := scanString(b, i+1)
		raw := b[i+1 : end]
		isKey := false
		for k := end + 1; k < len(b); k++ {
			if c := b[k]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				isKey = c == ':'
				break
			}
		}
		if !ok || !utf8.Valid(raw) {
			if isKey {
				return errText("Field names of the request body")
			}
			if key == "" {
				return errText("The request body")
			}
			return errText(periscope.Clip(key, 64))
		}
		if isKey {
			key = string(raw)
		}
		i = end
	}
	if !utf8.Valid(b) {
		return errText("The request body")
	}
	return nil
}

// scanString finds the closing quote of the JSON string starting at b[i]
// and reports whether the string is free of \u0000 and unpaired surrogate
// escapes.
func scanString(b []byte, i int) (end int, ok bool) {
	ok = true
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			return i, ok
		case '\\':
			if i+1 >= len(b) {
				return len(b), ok
			}
			if b[i+1] != 'u' {
				i++ // an escaped character, possibly a quote or backslash
				continue
			}
			u, valid := hex4(b, i+2)
			if !valid {
				i++
				continue // malformed: the syntax check reports it
			}
			switch {
			case u == 0, u >= 0xDC00 && u <= 0xDFFF:
				ok = false
			case u >= 0xD800 && u <= 0xDBFF:
				// A high surrogate must be followed at once by a low one.
				if i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
					if lo, valid := hex4(b, i+8); valid && lo >= 0xDC00 && lo <= 0xDFFF {
						i += 11
						continue
					}
				}
				ok = false
			}
			i += 5
		}
	}
	return len(b), ok
}

// hex4 reads four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
