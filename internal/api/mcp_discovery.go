package api

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// search and fetch are FullHunt's discovery pair (the ChatGPT/Deep-Research
// style): search classifies the query text (a domain, host, IP, CVE id or
// company name) into result ids without reading any data, so it is free;
// fetch expands one id through the tool, and so the route, it names.

// mcpFetchKinds maps an id prefix to the tool that expands it and the
// argument the id's value fills.
var mcpFetchKinds = []struct {
	prefix, tool, arg, title string
}{
	{"domain", "fullhunt_domain_details", "domain", "Hosts of %s with full details"},
	{"subdomains", "fullhunt_domain_subdomains", "domain", "Subdomains of %s"},
	{"whois", "nexus_whois_lookup", "domain", "WHOIS record of %s"},
	{"host", "fullhunt_host", "host", "Host %s"},
	{"cve", "search_vulnerabilities", "query", "Vulnerability %s"},
	{"exploits", "search_exploits", "query", "Exploits for %s"},
	{"advisory", "search_advisories", "query", "Advisories matching %s"},
	{"ip", "nexus_ip_lookup", "ip", "What is known of %s"},
	{"iphosts", "intel_ip_to_hosts", "ip", "Host names that resolve to %s"},
	{"org", "search_organizations", "query", "Organizations matching %s"},
}

var cveID = regexp.MustCompile(`^(?i)CVE-\d{4}-\d{4,}$`)

// mcpSearchResult is one id search returns.
type mcpSearchResult struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Tool  string `json:"tool"`
}

// classify returns the ids a query can be expanded into, for the tools this
// server offers.
func (m *mcpServer) classify(query string) []mcpSearchResult {
	query = strings.TrimSpace(query)
	var kinds []string
	var value string
	switch {
	case cveID.MatchString(query):
		value, kinds = strings.ToUpper(query), []string{"cve", "exploits"}
	default:
		if n, err := host.Normalize(query); err == nil && !strings.ContainsAny(query, " \t") {
			switch {
			case n.IP:
				value, kinds = n.Host, []string{"ip", "iphosts", "host"}
			case n.Subdomain == "":
				value, kinds = n.Host, []string{"domain", "subdomains", "whois"}
			default:
				out := m.results(n.Host, []string{"host"})
				return append(out, m.results(n.Domain, []string{"domain", "subdomains", "whois"})...)
			}
		} else {
			value, kinds = query, []string{"org", "cve", "exploits", "advisory"}
		}
	}
	return m.results(value, kinds)
}

func (m *mcpServer) results(value string, kinds []string) []mcpSearchResult {
	var out []mcpSearchResult
	for _, k := range kinds {
		for _, fk := range mcpFetchKinds {
			if fk.prefix == k && m.byName[fk.tool] != nil {
				out = append(out, mcpSearchResult{ID: k + ":" + value, Title: fmt.Sprintf(fk.title, value), Tool: fk.tool})
			}
		}
	}
	return out
}

// addDiscovery registers search and fetch.
func (m *mcpServer) addDiscovery(srv *mcp.Server) {
	str := func(desc string, max int) *jsonschema.Schema {
		return &jsonschema.Schema{Type: "string", Description: desc, MinLength: ptr(1), MaxLength: ptr(max)}
	}
	closed := &jsonschema.Schema{Not: &jsonschema.Schema{}}
	searchSchema := &jsonschema.Schema{Type: "object", Required: []string{"query"}, AdditionalProperties: closed,
		Properties: map[string]*jsonschema.Schema{"query": str("A domain, host name, IP address, CVE id or company name.", 256)}}
	fetchSchema := &jsonschema.Schema{Type: "object", Required: []string{"id"}, AdditionalProperties: closed,
		Properties: map[string]*jsonschema.Schema{"id": str("An id from search: domain:, subdomains:, whois:, host:, cve:, exploits:, advisory:, ip:, iphosts: or org: followed by the value.", 300)}}
	searchResolved, err1 := searchSchema.Resolve(nil)
	fetchResolved, err2 := fetchSchema.Resolve(nil)
	if err1 != nil || err2 != nil {
		panic(fmt.Sprintf("mcp discovery schemas: %v %v", err1, err2))
	}
	srv.AddTool(&mcp.Tool{Name: "search", InputSchema: searchSchema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		Description: "Classify a domain, host, IP address, CVE id or company name and return the ids fetch can expand. Reads no data; no credit."},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				Query string `json:"query"`
			}
			if err := validArgs(searchResolved, req.Params.Arguments, &in); err != nil {
				return toolError(err.Error()), nil
			}
			if !isText(in.Query) {
				return toolError("invalid arguments: query holds characters that are not text"), nil
			}
			res := m.classify(in.Query)
			if res == nil {
				res = []mcpSearchResult{}
			}
			b, _ := json.Marshal(map[string]any{"results": res, "count": len(res)})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "fetch", InputSchema: fetchSchema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		Description: "Expand an id returned by search through its route; costs what that route costs."},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				ID string `json:"id"`
			}
			if err := validArgs(fetchResolved, req.Params.Arguments, &in); err != nil {
				return toolError(err.Error()), nil
			}
			prefix, value, ok := strings.Cut(in.ID, ":")
			value = strings.TrimSpace(value)
			if !ok || value == "" {
				return toolError("invalid arguments: an id is a prefix and a value, e.g. domain:example.com"), nil
			}
			for _, fk := range mcpFetchKinds {
				if fk.prefix != prefix {
					continue
				}
				t := m.byName[fk.tool]
				if t == nil {
					return toolError(fmt.Sprintf("%s: ids are not offered by this server", prefix)), nil
				}
				return m.dispatch(ctx, t, map[string]any{fk.arg: value}), nil
			}
			return toolError(fmt.Sprintf("invalid arguments: unknown id prefix %q", periscope.Clip(prefix, 32))), nil
		})
}

// validArgs validates raw arguments against a schema and decodes them.
func validArgs(rs *jsonschema.Resolved, raw json.RawMessage, v any) error {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return fmt.Errorf("invalid arguments: the arguments must be a JSON object")
	}
	if err := rs.Validate(m); err != nil {
		return fmt.Errorf("invalid arguments: %s", periscope.Clip(err.Error(), 300))
	}
	return json.Unmarshal(raw, v)
}
