package api

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRESTResult keeps the tool result of every kind of REST answer: an
// object as text and structured content, a bare array wrapped, a JSON
// scalar as text only, a body that is not JSON and an error as tool errors.
func TestRESTResult(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     int
		body       string
		text       string
		structured string // "" for none
		isError    bool
	}{
		{"object", 200, " {\"host\":\"a.example.com\",\"ports\":[443]}\n", `{"host":"a.example.com","ports":[443]}`, `{"host":"a.example.com","ports":[443]}`, false},
		{"array", 200, `[{"id":1},{"id":2}]`, `{"count":2,"results":[{"id":1},{"id":2}]}`, `{"count":2,"results":[{"id":1},{"id":2}]}`, false},
		{"empty array", 200, `[]`, `{"count":0,"results":[]}`, `{"count":0,"results":[]}`, false},
		{"scalar", 200, `42`, `42`, "", false},
		{"string", 200, `"ok"`, `"ok"`, "", false},
		{"not JSON", 200, `{"host":`, "the route answered a body that is not JSON", "", true},
		{"array not JSON", 200, `[1,`, "the route answered a body that is not JSON", "", true},
		{"empty", 200, ``, "the route answered a body that is not JSON", "", true},
		{"not found", 404, `{"status":404,"error":"not_found","message":"No such host."}`, "no data found for that query", "", true},
		{"refused", 403, `{"status":403,"error":"oem_required","message":"This route needs the OEM module."}`, "403 oem_required: This route needs the OEM module.", "", true},
		{"refused without a message", 502, `<html>`, "502 Bad Gateway", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := restResult(tc.status, []byte(tc.body))
			if res.IsError != tc.isError || len(res.Content) != 1 {
				t.Fatalf("isError %v with %d content items, want %v and 1", res.IsError, len(res.Content), tc.isError)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != tc.text {
				t.Errorf("text %s, want %s", got, tc.text)
			}
			var structured string
			if res.StructuredContent != nil {
				b, err := json.Marshal(res.StructuredContent)
				if err != nil {
					t.Fatal(err)
				}
				structured = string(b)
			}
			if diff := cmp.Diff(tc.structured, structured); diff != "" {
				t.Errorf("structured content (-want +got):\n%s", diff)
			}
		})
	}
}
