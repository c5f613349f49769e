// Package periscope holds the domain types shared by the store, the HTTP API and
// the command line: accounts, keys, organizations, assets, audit records and the
// one error type every layer speaks.
package periscope

import (
	"errors"
	"fmt"
)

// Error codes. They are stable: clients match on them. The HTTP status of each
// lives in one table in package api.
const (
	EInvalid             = "invalid_parameter"
	EMissing             = "missing_parameter"
	EInvalidJSON         = "invalid_json"
	EInvalidText         = "invalid_text"
	EDefaultOrganization = "default_organization"
	EUnauthorized        = "unauthorized"
	EEnterpriseRequired  = "enterprise_required"
	EOEMRequired         = "oem_required"
	ECreditsExhausted    = "credits_exhausted"
	EOEMCreditsExhausted = "oem_credits_exhausted"
	EQuotaExceeded       = "quota_exceeded"
	EForbidden           = "forbidden"
	ENotFound            = "not_found"
	EMethodNotAllowed    = "method_not_allowed"
	EConflict            = "conflict"
	ETooLarge            = "payload_too_large"
	EUnsupportedMedia    = "unsupported_media_type"
	ERateLimited         = "rate_limited"
	EInternal            = "internal"
	EUnavailable         = "unavailable"
	// EUnprocessable is a missing or invalid parameter of the routes that
	// answer FullHunt's 422 for it (/intel/*, /nexus/*, /enterprise/assets).
	EUnprocessable = "unprocessable_parameter"
	// EQueryInvalid is a host query (package hostquery) that does not
	// parse or plan: the message names the position and the token.
	EQueryInvalid = "query_invalid"
)

// Error is an error that is safe to show to a client: a stable code and a
// sentence for people. Internal causes are wrapped in Err and never shown.
type Error struct {
	Code    string
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return e.Code + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, or EInternal.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err == nil {
		return ""
	}
	return EInternal
}

// ErrorMessage returns the safe message of err, or a generic sentence when err
// carries no *Error.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "An internal error occurred."
}

// IsNotFound reports whether err carries the not_found code.
func IsNotFound(err error) bool { return ErrorCode(err) == ENotFound }

// Clip shortens s to its first n characters for an error message, marking
// the cut: a message quotes what it refuses, and hostile input must neither
// make it long nor have a character cut in two.
func Clip(s string, n int) string {
	chars := 0
	for i := range s {
		if chars == n {
			return s[:i] + "…"
		}
		chars++
	}
	return s
}
