package api

import (
	"net/http"

	"github.com/periscope-oss/periscope/internal/periscope"
)

// HandleTestRoute registers a route with the policy of a charged data route
// (monthly pool) or an OEM data route (oem pool), so the core's credit
// middleware can be tested before any data route exists.
func (s *Server) HandleTestRoute(pattern string, oem bool, h http.HandlerFunc) {
	p := charged
	if oem {
		p = oemCharged
	}
	s.handle(pattern, p, func(w http.ResponseWriter, r *http.Request) error {
		h(w, r)
		return nil
	})
}

// RouteNeeds describes each registered route's policy for the entitlement
// matrix: "public", or need ("none", "enterprise", "oem") and pool
// ("none", "monthly", "oem") joined by "/".
func (s *Server) RouteNeeds() map[string]string {
	out := map[string]string{}
	for _, r := range s.routes {
		if r.policy.public {
			out[r.Method+" "+r.Path] = "public"
			continue
		}
		need := map[entitlement]string{needNothing: "none", needEnterprise: "enterprise", needOEM: "oem", needPaid: "paid"}[r.policy.need]
		pool := map[periscope.Pool]string{periscope.PoolNone: "none", periscope.PoolMonthly: "monthly", periscope.PoolOEM: "oem"}[r.policy.pool]
		out[r.Method+" "+r.Path] = need + "/" + pool
	}
	return out
}

// RouteRates gives each registered route's per-key limit a minute at the
// default --rate-limit (FullHunt's figures), or 0 for a public route (no
// key, no per-key limit).
func (s *Server) RouteRates() map[string]int {
	out := map[string]int{}
	for _, r := range s.routes {
		if !r.policy.public {
			out[r.Method+" "+r.Path] = routeLimit(r.policy.rate, generalRate)
		} else {
			out[r.Method+" "+r.Path] = 0
		}
	}
	return out
}

// HandlePanicRoute registers a charged route whose handler panics.
func (s *Server) HandlePanicRoute(pattern string) {
	s.handle(pattern, charged, func(w http.ResponseWriter, r *http.Request) error { panic("boom") })
}

// MCPToolRoutes lists the routes of the tools the MCP server offers.
func MCPToolRoutes(s *Server) []string {
	out := make([]string, len(s.mcp.tools))
	for i, t := range s.mcp.tools {
		out[i] = t.route
	}
	return out
}

// MCPTool describes an offered tool for tests.
type MCPTool struct {
	Name        string
	Description string
	Route       string
	Args        []string
	Required    map[string]bool
	Writes      bool
}

// MCPTools lists the catalog tools the MCP server offers.
func MCPTools(s *Server) []MCPTool {
	var out []MCPTool
	for _, t := range s.mcp.tools {
		mt := MCPTool{Name: t.name, Description: t.desc, Route: t.route, Writes: t.writes(), Required: map[string]bool{}}
		for _, a := range t.args {
			mt.Args = append(mt.Args, a.name)
		}
		for _, r := range t.schema.Required {
			mt.Required[r] = true
		}
		out = append(out, mt)
	}
	return out
}
