package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/periscope-oss/periscope/internal/periscope"
)

// writeJSON encodes v as the response body with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	buf := jsonBuffers.Get().(*bytes.Buffer)
	defer putJSONBuffer(buf)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		http.Error(w, `{"status":500,"error":"internal","message":"An internal error occurred."}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// jsonBuffers keeps encoding buffers between responses: most answers are
// small, and allocating (then collecting) a buffer per response is a
// measurable share of a cheap route such as /auth/status.
var jsonBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putJSONBuffer returns buf to the pool unless a large answer grew it
// (those are rare and would pin their memory).
func putJSONBuffer(buf *bytes.Buffer) {
	if buf.Cap() > 64<<10 {
		return
	}
	buf.Reset()
	jsonBuffers.Put(buf)
}

// decode reads the request body (already bounded and buffered by the route
// wrapper) into v. An empty body decodes as {}. Unknown fields are ignored.
// Type errors name the field and the type expected.
func decode(r *http.Request, v any) error {
	body := requestBody(r)
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return periscope.Errorf(periscope.EInvalidJSON, "The request body must hold one JSON object and nothing after it.")
	}
	return nil
}

func jsonError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return periscope.Errorf(periscope.EInvalidJSON, "The request body must be a JSON object.")
		}
		return periscope.Errorf(periscope.EInvalid, "%s must be %s, not a JSON %s.", typeErr.Field, jsonTypeName(typeErr.Type.String()), typeErr.Value)
	case errors.As(err, &syntaxErr):
		return periscope.Errorf(periscope.EInvalidJSON, "The request body is not valid JSON (%v at byte %d).", syntaxErr, syntaxErr.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return periscope.Errorf(periscope.EInvalidJSON, "The request body is truncated JSON.")
	}
	var fe *fieldError
	if errors.As(err, &fe) {
		return periscope.Errorf(periscope.EInvalid, "%s", fe.msg)
	}
	return periscope.Errorf(periscope.EInvalidJSON, "The request body is not valid JSON: %v.", err)
}

func jsonTypeName(goType string) string {
	switch {
	case strings.Contains(goType, "int"):
		return "an integer"
	case strings.Contains(goType, "float"):
		return "a number"
	case strings.Contains(goType, "bool"):
		return "a boolean"
	case strings.Contains(goType, "string"):
		return "a string"
	case strings.HasPrefix(goType, "map") || strings.Contains(goType, "RawMessage"):
		return "a JSON object"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	}
	return "of type " + goType
}

type fieldError struct{ msg string }

func (e *fieldError) Error() string { return e.msg }

// checkRange returns an invalid_parameter error when v is outside [lo, hi]
// (hi < lo means no upper bound).
func checkRange(name string, v, lo, hi int) error {
	if v < lo || (hi >= lo && v > hi) {
		if hi < lo {
			return periscope.Errorf(periscope.EInvalid, "%s must be >= %d (got %d).", name, lo, v)
		}
		return periscope.Errorf(periscope.EInvalid, "%s must be between %d and %d (got %d).", name, lo, hi, v)
	}
	return nil
}

// queryInt reads an integer query parameter with a default and bounds.
func queryInt(r *http.Request, name string, def, lo, hi int) (int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	var v int
	if _, err := fmt.Sscanf(s, "%d", &v); err != nil || fmt.Sprint(v) != strings.TrimLeft(s, "+") {
		return 0, periscope.Errorf(periscope.EInvalid, "%s must be an integer (got %q).", name, periscope.Clip(s, 32))
	}
	return v, checkRange(name, v, lo, hi)
}

// queryBool reads a boolean query parameter: 1/0/true/false/yes/no.
func queryBool(r *http.Request, name string) (bool, error) {
	switch strings.ToLower(r.URL.Query().Get(name)) {
	case "", "0", "false", "no", "off":
		return false, nil
	case "1", "true", "yes", "on":
		return true, nil
	}
	return false, periscope.Errorf(periscope.EInvalid, "%s must be true or false.", name)
}

// checkText bounds a free-text parameter: UTF-8 without control characters
// (a NUL would reach PostgreSQL, which refuses it with an error), at most
// maxRunes characters.
func checkText(name, v string, maxRunes int) error {
	if !utf8.ValidString(v) || strings.ContainsFunc(v, unicode.IsControl) {
		return periscope.Errorf(periscope.EInvalid, "%s must be UTF-8 text without control characters.", name)
	}
	if utf8.RuneCountInString(v) > maxRunes {
		return periscope.Errorf(periscope.EInvalid, "%s must be at most %d characters.", name, maxRunes)
	}
	return nil
}
