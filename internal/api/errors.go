package api

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/store"
)

// statusOf is the one table from error code to HTTP status.
var statusOf = map[string]int{
	periscope.EInvalid:             http.StatusBadRequest,
	periscope.EMissing:             http.StatusBadRequest,
	periscope.EInvalidJSON:         http.StatusBadRequest,
	periscope.EInvalidText:         http.StatusBadRequest,
	periscope.EDefaultOrganization: http.StatusBadRequest,
	periscope.EUnauthorized:        http.StatusUnauthorized,
	periscope.EEnterpriseRequired:  http.StatusForbidden,
	periscope.EOEMRequired:         http.StatusForbidden,
	periscope.ECreditsExhausted:    http.StatusForbidden,
	periscope.EOEMCreditsExhausted: http.StatusForbidden,
	periscope.EQuotaExceeded:       http.StatusForbidden,
	periscope.EForbidden:           http.StatusForbidden,
	periscope.ENotFound:            http.StatusNotFound,
	periscope.EMethodNotAllowed:    http.StatusMethodNotAllowed,
	periscope.EConflict:            http.StatusConflict,
	periscope.ETooLarge:            http.StatusRequestEntityTooLarge,
	periscope.EUnsupportedMedia:    http.StatusUnsupportedMediaType,
	periscope.ERateLimited:         http.StatusTooManyRequests,
	periscope.EInternal:            http.StatusInternalServerError,
	periscope.EUnavailable:         http.StatusServiceUnavailable,
	periscope.EUnprocessable:       http.StatusUnprocessableEntity,
	periscope.EQueryInvalid:        http.StatusBadRequest,
}

// errorBody is the JSON body of every error (docs/api.md "Errors").
type errorBody struct {
	Status     int    `json:"status"`
	Error      string `json:"error"`
	Message    string `json:"message"`
	RetryAfter *int   `json:"retry_after,omitempty"`
}

// retryError is an error that tells the client when to come back.
type retryError struct {
	err   *periscope.Error
	after int
}

func (e *retryError) Error() string { return e.err.Error() }
func (e *retryError) Unwrap() error { return e.err }

// writeError writes err as the JSON error body. Causes without a safe
// message are logged with the request id and answered with a generic 500.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if periscope.ErrorCode(err) == periscope.EInternal && store.IsUnavailable(err) {
		// The database is down or overloaded: a retryable 503, not a 500.
		s.log.WarnContext(r.Context(), "database unavailable", "request_id", requestID(r.Context()), "path", r.URL.Path, "err", err)
		err = &periscope.Error{Code: periscope.EUnavailable, Message: "The database is unavailable; retry shortly.", Err: err}
	}
	code := periscope.ErrorCode(err)
	status, ok := statusOf[code]
	if !ok {
		status, code = http.StatusInternalServerError, periscope.EInternal
	}
	msg := periscope.ErrorMessage(err)
	if status == http.StatusInternalServerError {
		s.log.ErrorContext(r.Context(), "request failed", "request_id", requestID(r.Context()), "path", r.URL.Path, "err", err)
		msg = "An internal error occurred; it was logged with request id " + requestID(r.Context()) + "."
	}
	body := errorBody{Status: status, Error: code, Message: msg}
	var re *retryError
	if errors.As(err, &re) {
		n := re.after
		body.RetryAfter = &n
		w.Header().Set("Retry-After", strconv.Itoa(n))
	} else if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "5")
	}
	writeJSON(w, status, body)
}

func (s *Server) logWarn(r *http.Request, msg string, args ...any) {
	s.log.LogAttrs(r.Context(), slog.LevelWarn, msg, slog.String("request_id", requestID(r.Context())), slog.Any("detail", args))
}
