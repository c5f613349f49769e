package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// IsUnavailable reports whether err means the database could not be reached
// or could not take the work now (as opposed to a query the database
// refused): connection refused or lost, PostgreSQL shutting down or out of
// connections, SQLite busy past its timeout or its file unreachable. Callers
// answer these with a retryable 503; database/sql reconnects by itself once
// the database is back.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Class 08: connection exception; 53: insufficient resources
		// (too many connections, out of memory or disk); 57P01-57P03:
		// the server is shutting down or starting.
		c := pgErr.Code
		return strings.HasPrefix(c, "08") || strings.HasPrefix(c, "53") || c == "57P01" || c == "57P02" || c == "57P03"
	}
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) {
		switch sqErr.Code() & 0xff { // the primary code of an extended one
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL:
			return true
		}
		return false
	}
	var netErr *net.OpError
	if errors.As(err, &netErr) {
		return true
	}
	// pgx reports a connection that died mid-query without a typed error
	// ("conn closed", "unexpected EOF" while reading); a query that was
	// safe to retry or timed out talking to the server is the same case.
	if pgconn.SafeToRetry(err) || pgconn.Timeout(err) && !errors.Is(err, context.Canceled) {
		return true
	}
	// A connection cut mid-read surfaces as io.ErrUnexpectedEOF.
	return errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "conn closed")
}
