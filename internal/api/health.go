package api

import (
	"context"
	"net/http"
	"time"

	"github.com/periscope-oss/periscope/internal/periscope"
)

func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "version": s.cfg.Version})
	return nil
}

// handleReadyz reports whether the store answers (and any capability checks).
func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) error {
	if s.draining.Load() {
		return errUnavailable
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	checks := map[string]string{}
	if err := s.accounts.Ping(ctx); err != nil {
		s.logWarn(r, "readiness: store", err.Error())
		return periscope.Errorf(periscope.EUnavailable, "The database is unreachable.")
	}
	checks["store"] = "ok"
	for _, check := range s.ready {
		if err := check(ctx); err != nil {
			return &periscope.Error{Code: periscope.EUnavailable, Message: "Not ready: " + periscope.ErrorMessage(err), Err: err}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ready", "checks": checks, "engine": s.accounts.Engine()})
	return nil
}
