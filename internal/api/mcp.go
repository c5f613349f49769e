package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/periscope-oss/periscope/internal/periscope"
)

// POST /api/v1/mcp: FullHunt's agent interface, a Model Context Protocol
// server over Streamable HTTP (stateless, the official Go SDK). The route's
// own policy checks the key (X-API-KEY or Authorization: Bearer), the paid
// plan and the endpoint's rate limit; each tool call is then a REST request
// dispatched in process through ServeHTTP with the caller's key, so it is
// checked, limited, charged and audited exactly as the REST route is.

const mcpPaidOnly = "Periscope's agent interface (MCP) is only available for paid plans."

// mcpServer is the MCP side of the API.
type mcpServer struct {
	api     *Server
	tools   []*mcpBound
	byName  map[string]*mcpBound
	handler http.Handler
}

// mcpBound is a catalog tool bound to its route and resolved schema.
type mcpBound struct {
	mcpTool
	method, path string
	schema       *jsonschema.Schema
	resolved     *jsonschema.Resolved
	argByName    map[string]mcpArg
}

// mcpCaller is what the tool calls of one MCP request act with.
type mcpCaller struct {
	key, remoteAddr, forwardedFor, requestID string
}

type mcpCallerKey struct{}

// newMCPServer binds the catalog to the registered routes. A tool whose
// route is not registered is left out; a tool whose arguments do not match
// the route's OpenAPI document is a build defect (the test fails on it).
func newMCPServer(s *Server, doc []byte) (*mcpServer, error) {
	var openapi map[string]any
	if err := json.Unmarshal(doc, &openapi); err != nil {
		return nil, err
	}
	registered := map[string]bool{}
	for _, r := range s.routes {
		registered[r.Method+" "+r.Path] = true
	}
	m := &mcpServer{api: s, byName: map[string]*mcpBound{}}
	impl := &mcp.Implementation{Name: "periscope", Title: "Periscope attack-surface and threat intelligence", Version: s.cfg.Version}
	srv := mcp.NewServer(impl, &mcp.ServerOptions{
		Instructions: "Tools of Periscope, a FullHunt-compatible attack-surface and threat-intelligence service. " +
			"Each tool call costs what its REST route costs; auth_status shows the credit balance. search is free and returns ids for fetch.",
	})
	for _, t := range mcpCatalog {
		if !registered[t.route] {
			continue
		}
		b, err := bindTool(t, openapi)
		if err != nil {
			return nil, fmt.Errorf("mcp tool %s: %w", t.name, err)
		}
		m.tools = append(m.tools, b)
		m.byName[b.name] = b
		srv.AddTool(&mcp.Tool{Name: b.name, Description: b.desc, InputSchema: b.schema,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: !b.writes(), OpenWorldHint: ptr(false)}}, m.callTool(b))
	}
	m.addDiscovery(srv)
	m.handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: s.log,
			// Every request carries an API key, which a page that rebinds a
			// name to 127.0.0.1 does not have; the SDK's Host check would
			// only refuse deployments behind a proxy.
			DisableLocalhostProtection: true})
	return m, nil
}

func ptr[T any](v T) *T { return &v }

// writes reports whether the tool starts work beyond its answer (a scan).
func (t *mcpBound) writes() bool {
	return strings.Contains(t.path, "on-demand-scan") && !strings.HasSuffix(t.path, "scan-status")
}

// handleMCP answers POST /api/v1/mcp (the policy has authenticated the key
// and checked the plan).
func (s *Server) handleMCP(w http.ResponseWriter, r *http.Request) error {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return unsupportedMedia(ct)
	}
	if accept := strings.Join(r.Header.Values("Accept"), ","); !strings.Contains(accept, "application/json") || !strings.Contains(accept, "text/event-stream") {
		return periscope.Errorf(periscope.EInvalid, "An MCP request must accept both application/json and text/event-stream (Streamable HTTP).")
	}
	caller := mcpCaller{key: mcpKey(r), remoteAddr: r.RemoteAddr,
		forwardedFor: r.Header.Get("X-Forwarded-For"), requestID: requestID(r.Context())}
	r2 := r.WithContext(context.WithValue(r.Context(), mcpCallerKey{}, caller))
	// The wrapper has read and checked the body; the SDK reads it again.
	r2.Body = io.NopCloser(bytes.NewReader(requestBody(r)))
	// Answers are JSON (JSONResponse), so they are held and checked: the
	// SDK's own refusals are plain text, and every answer here is JSON.
	rec := newBufferedResponse()
	s.mcp.handler.ServeHTTP(rec, r2)
	if status := rec.statusCode(); status >= 400 && !strings.HasPrefix(rec.header.Get("Content-Type"), "application/json") {
		code := periscope.EInvalid
		if status >= 500 {
			code = periscope.EInternal
		}
		return &periscope.Error{Code: code, Message: "The MCP request was refused: " + periscope.Clip(strings.TrimSpace(rec.body.String()), 200)}
	}
	rec.flush(w)
	return nil
}

// mcpKey returns the key of an MCP request: X-API-KEY, else a Bearer token.
func mcpKey(r *http.Request) string {
	if k := r.Header.Get("X-Api-Key"); k != "" {
		return k
	}
	if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(v)
	}
	return ""
}

// callTool returns the handler of a catalog tool.
func (m *mcpServer) callTool(t *mcpBound) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := t.decodeArgs(req.Params.Arguments)
		if err != nil {
			return toolError(err.Error()), nil
		}
		return m.dispatch(ctx, t, args), nil
	}
}

// decodeArgs parses and validates a tool's arguments against its schema.
func (t *mcpBound) decodeArgs(raw json.RawMessage) (map[string]any, error) {
	args := map[string]any{}
	if len(bytes.TrimSpace(raw)) > 0 && string(bytes.TrimSpace(raw)) != "null" {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil {
			return nil, fmt.Errorf("invalid arguments: the arguments must be a JSON object")
		}
	}
	// The validator wants plain JSON values.
	plain := map[string]any{}
	for k, v := range args {
		if n, ok := v.(json.Number); ok {
			f, err := n.Float64()
			if err != nil {
				return nil, fmt.Errorf("invalid arguments: %s is not a number", k)
			}
			plain[k] = f
			continue
		}
		plain[k] = v
	}
	if err := t.resolved.Validate(plain); err != nil {
		return nil, fmt.Errorf("invalid arguments: %s", periscope.Clip(err.Error(), 300))
	}
	return args, nil
}

// dispatch sends the REST request of a tool call through the API's own
// chain and turns its answer into a tool result.
func (m *mcpServer) dispatch(ctx context.Context, t *mcpBound, args map[string]any) *mcp.CallToolResult {
	caller, ok := ctx.Value(mcpCallerKey{}).(mcpCaller)
	if !ok {
		return toolError("internal error: the call has no caller")
	}
	req, err := t.request(ctx, args)
	if err != nil {
		return toolError(err.Error())
	}
	req.RemoteAddr = caller.remoteAddr
	req.Header.Set("X-Api-Key", caller.key)
	if caller.forwardedFor != "" {
		req.Header.Set("X-Forwarded-For", caller.forwardedFor)
	}
	if caller.requestID != "" {
		req.Header.Set("X-Request-Id", caller.requestID)
	}
	rec := newBufferedResponse()
	m.api.ServeHTTP(rec, req)
	return restResult(rec.statusCode(), rec.body.Bytes())
}

// request builds the REST request of a call.
func (t *mcpBound) request(ctx context.Context, args map[string]any) (*http.Request, error) {
	path := t.path
	query := url.Values{}
	bodyFields := map[string]any{}
	for k, v := range t.fixed {
		if strings.Contains(path, "{"+k+"}") {
			path = strings.ReplaceAll(path, "{"+k+"}", url.PathEscape(v))
		} else {
			query.Set(k, v)
		}
	}
	names := make([]string, 0, len(args))
	for k := range args {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		a, ok := t.argByName[name]
		if !ok {
			return nil, fmt.Errorf("invalid arguments: unknown argument %q", periscope.Clip(name, 64))
		}
		v := args[name]
		param := a.restName()
		switch a.in {
		case "path":
			s, err := queryValue(v)
			if err != nil || s == "" {
				return nil, fmt.Errorf("invalid arguments: %s must be a non-empty string", name)
			}
			path = strings.ReplaceAll(path, "{"+param+"}", url.PathEscape(s))
		case "query":
			s, err := queryValue(v)
			if err != nil {
				return nil, fmt.Errorf("invalid arguments: %s: %v", name, err)
			}
			query.Set(param, s)
		default:
			bodyFields[param] = v
		}
	}
	target := path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	var body io.Reader = http.NoBody
	if t.method != http.MethodGet {
		b, err := json.Marshal(bodyFields)
		if err != nil {
			return nil, fmt.Errorf("invalid arguments: %v", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, t.method, target, body)
	if err != nil {
		return nil, fmt.Errorf("invalid arguments: %v", err)
	}
	if t.method != http.MethodGet {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// queryValue renders a JSON argument as a query-string value.
func queryValue(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case bool:
		return strconv.FormatBool(x), nil
	case nil:
		return "", nil
	}
	return "", fmt.Errorf("must be a string, number or boolean")
}

// restResult turns a REST answer into a tool result: the REST JSON as is,
// bare arrays wrapped as {"results":[...],"count":n}; errors as tool
// errors, a 404 always "no data found for that query" (FullHunt's words).
func restResult(status int, body []byte) *mcp.CallToolResult {
	if status == http.StatusNotFound {
		return toolError("no data found for that query")
	}
	if status < 200 || status > 299 {
		var e struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		if json.Unmarshal(body, &e) == nil && e.Message != "" {
			return toolError(fmt.Sprintf("%d %s: %s", status, e.Error, e.Message))
		}
		return toolError(fmt.Sprintf("%d %s", status, http.StatusText(status)))
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var arr []json.RawMessage
		if err := json.Unmarshal(trimmed, &arr); err == nil {
			if arr == nil {
				arr = []json.RawMessage{}
			}
			wrapped, _ := json.Marshal(map[string]any{"results": arr, "count": len(arr)})
			trimmed = wrapped
		}
	}
	// Checked, not decoded: the SDK encodes the route's JSON as it is, and
	// decoding it into maps only to learn that it is an object cost about
	// a tenth of a fullhunt_host call (BenchmarkMCPServerCPU).
	if !json.Valid(trimmed) {
		return toolError("the route answered a body that is not JSON")
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(trimmed)}}}
	if trimmed[0] == '{' {
		res.StructuredContent = json.RawMessage(trimmed)
	}
	return res
}

func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// restName is the REST parameter an argument fills.
func (a mcpArg) restName() string {
	if a.param != "" {
		return a.param
	}
	return a.name
}

// bindTool resolves a catalog tool against the OpenAPI document: its input
// schema is built from the route's parameters and body properties.
func bindTool(t mcpTool, doc map[string]any) (*mcpBound, error) {
	method, path, _ := strings.Cut(t.route, " ")
	paths, _ := doc["paths"].(map[string]any)
	item, _ := paths[path].(map[string]any)
	op, _ := item[strings.ToLower(method)].(map[string]any)
	if op == nil {
		return nil, fmt.Errorf("route %s has no OpenAPI operation", t.route)
	}
	params := map[string]map[string]any{} // "query:name" -> parameter object
	var queryNames []string
	plist, _ := op["parameters"].([]any)
	for _, p := range plist {
		pm, _ := resolveRef(doc, p, 0).(map[string]any)
		if pm == nil {
			continue
		}
		in, _ := pm["in"].(string)
		name, _ := pm["name"].(string)
		params[in+":"+name] = pm
		if in == "query" {
			queryNames = append(queryNames, name)
		}
	}
	var bodyProps map[string]any
	var bodyNames []string
	if rb, ok := op["requestBody"].(map[string]any); ok {
		content, _ := rb["content"].(map[string]any)
		js, _ := content["application/json"].(map[string]any)
		schema, _ := resolveRef(doc, js["schema"], 0).(map[string]any)
		bodyProps, _ = schema["properties"].(map[string]any)
		for name := range bodyProps {
			if name != "query_tags" {
				bodyNames = append(bodyNames, name)
			}
		}
		sort.Strings(bodyNames)
	}
	args := append([]mcpArg(nil), t.args...)
	if t.queryFromSchema {
		for _, name := range queryNames {
			args = append(args, q(name))
		}
		for k := range params {
			if in, name, _ := strings.Cut(k, ":"); in == "path" {
				if _, fixed := t.fixed[name]; !fixed {
					args = append(args, pathArg(name))
				}
			}
		}
	}
	if t.bodyFromSchema {
		for _, name := range bodyNames {
			args = append(args, body(name))
		}
	}
	b := &mcpBound{mcpTool: t, method: method, path: path, argByName: map[string]mcpArg{}}
	b.args = args
	props := map[string]*jsonschema.Schema{}
	var required []string
	for _, a := range args {
		var src map[string]any
		desc := a.desc
		switch a.in {
		case "path", "query":
			pm := params[a.in+":"+a.restName()]
			if pm == nil {
				return nil, fmt.Errorf("argument %s: the route has no %s parameter %q", a.name, a.in, a.restName())
			}
			src, _ = resolveRef(doc, pm["schema"], 0).(map[string]any)
			if desc == "" {
				desc, _ = pm["description"].(string)
			}
			if r, _ := pm["required"].(bool); r {
				a.required = true
			}
		default:
			src, _ = resolveRef(doc, bodyProps[a.restName()], 0).(map[string]any)
			if src == nil {
				return nil, fmt.Errorf("argument %s: the route's body has no property %q", a.name, a.restName())
			}
		}
		s, err := argSchema(doc, src, desc, a.enum)
		if err != nil {
			return nil, fmt.Errorf("argument %s: %w", a.name, err)
		}
		props[a.name] = s
		if a.required {
			required = append(required, a.name)
		}
		b.argByName[a.name] = a
	}
	sort.Strings(required)
	b.schema = &jsonschema.Schema{Type: "object", Properties: props, Required: required,
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}
	resolved, err := b.schema.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	b.resolved = resolved
	return b, nil
}

// argSchema converts an OpenAPI 3.1 schema (JSON Schema 2020-12) into the
// argument's schema, with $refs inlined and the description set.
func argSchema(doc map[string]any, src map[string]any, desc string, enum []string) (*jsonschema.Schema, error) {
	inlined := inlineRefs(doc, src, 0)
	m, _ := inlined.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	delete(m, "example")
	if desc != "" {
		m["description"] = desc
	}
	if len(enum) > 0 {
		vals := make([]any, len(enum))
		for i, v := range enum {
			vals[i] = v
		}
		m["enum"] = vals
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// resolveRef follows a local "$ref" (to depth 8).
func resolveRef(doc map[string]any, v any, depth int) any {
	m, ok := v.(map[string]any)
	if !ok || depth > 8 {
		return v
	}
	ref, ok := m["$ref"].(string)
	if !ok {
		return v
	}
	var cur any = doc
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		cm, _ := cur.(map[string]any)
		cur = cm[part]
	}
	return resolveRef(doc, cur, depth+1)
}

// inlineRefs returns a copy of v with every local $ref replaced by its target.
func inlineRefs(doc map[string]any, v any, depth int) any {
	if depth > 12 {
		return map[string]any{}
	}
	switch x := resolveRef(doc, v, 0).(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = inlineRefs(doc, e, depth+1)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = inlineRefs(doc, e, depth+1)
		}
		return out
	default:
		return x
	}
}
