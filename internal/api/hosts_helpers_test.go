package api_test

import (
	"bytes"
	"encoding/json"
	"flag"
)

var update = flag.Bool("update", false, "rewrite golden files")

// strictDecode decodes like Go clients do: integers into int fail on 1.5
// or "12", and unknown fields are allowed.
func strictDecode(b []byte, v any) error {
	return json.NewDecoder(bytes.NewReader(b)).Decode(v)
}
