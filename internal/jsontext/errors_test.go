package jsontext

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestExplain(t *testing.T) {
	type inner struct {
		Roles []string `json:"roles"`
	}
	type doc struct {
		Code     int     `json:"errorCode"`
		Entities []inner `json:"entities"`
		Score    float64 `json:"score"`
	}
	for _, tc := range []struct{ in, want string }{
		{`{"errorCode":"400"}`, "field errorCode: a string where a whole number belongs (line 1, column 19)"},
		{"{\n\"entities\":[{\"roles\":\"registrar\"}]}", "field entities.roles: a string where a list belongs (line 2, column 33)"},
		{`{"score":true}`, "field score: true or false where a number belongs (line 1, column 14)"},
		{`{"entities":{}}`, "field entities: an object where a list belongs"},
		{`[1]`, "field (the document): an array where an object belongs"},
		{`{"score":`, "truncated JSON at line 1, column 10"},
		{`{"score":x}`, "invalid JSON at line 1, column 11"},
	} {
		var d doc
		err := Explain([]byte(tc.in), json.Unmarshal([]byte(tc.in), &d))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.in, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "jsontext.")) {
			t.Errorf("%s: Go names in %q", tc.in, err)
		}
	}
}
