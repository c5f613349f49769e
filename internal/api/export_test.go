package api

import "net/http"

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
