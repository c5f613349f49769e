package api

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"strconv"

	"github.com/periscope-oss/periscope/internal/periscope"
)

// JSONErrorListener wraps ln so that the answers net/http writes by itself,
// before any handler runs, are the API's JSON error too: a request line or
// header it cannot parse (a control character, a space in the path), headers
// over MaxHeaderBytes (431), an unsupported transfer coding (501) or HTTP
// version (505). net/http writes those straight to the connection as
// text/plain; every other byte passes through untouched.
func JSONErrorListener(ln net.Listener) net.Listener { return jsonErrorListener{ln} }

type jsonErrorListener struct{ net.Listener }

func (l jsonErrorListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &jsonErrorConn{Conn: c}, nil
}

// jsonErrorConn rewrites net/http's own error answers as they are written.
type jsonErrorConn struct{ net.Conn }

func (c *jsonErrorConn) Write(p []byte) (int, error) {
	answer, ok := rewriteServerError(p)
	if !ok {
		return c.Conn.Write(p)
	}
	if _, err := c.Conn.Write(answer); err != nil {
		return 0, err
	}
	return len(p), nil
}

// CloseWrite half-closes the connection as net/http does after a 431, so
// the client reads the answer before the connection ends.
func (c *jsonErrorConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// serverErrorHeaders end the status line of every error net/http writes
// itself (net/http server.go, conn.serve). A handler's response always
// carries a Date header as well, so it never matches.
const serverErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// rewriteServerError returns the JSON answer replacing p when p is one of
// net/http's own error answers, written whole by one Fprintf.
func rewriteServerError(p []byte) ([]byte, bool) {
	const prefix = "HTTP/1.1 "
	if len(p) < len(prefix)+3 || string(p[:len(prefix)]) != prefix {
		return nil, false
	}
	head, _, ok := bytes.Cut(p, []byte(serverErrorHeaders))
	if !ok || bytes.IndexByte(head, '\n') >= 0 {
		return nil, false
	}
	status, err := strconv.Atoi(string(head[len(prefix) : len(prefix)+3]))
	if err != nil || status < 400 || status > 599 {
		return nil, false
	}
	// "400 Bad Request: missing required Host header": net/http's detail,
	// one of a few fixed phrases (never the client's bytes).
	detail := ""
	if _, d, ok := bytes.Cut(head, []byte(": ")); ok && plainPhrase(d) {
		detail = string(d)
	}
	body := errorBody{Status: status, Error: periscope.EInvalid, Message: serverErrorMessage(status, detail)}
	if status == http.StatusRequestHeaderFieldsTooLarge {
		body.Error = periscope.ETooLarge
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, false
	}
	b = append(b, '\n')
	var out bytes.Buffer
	out.Grow(len(b) + 200)
	out.WriteString(prefix + strconv.Itoa(status) + " " + http.StatusText(status))
	out.WriteString("\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(b)))
	out.WriteString("\r\nX-Request-Id: " + newRequestID() + "\r\nConnection: close\r\n\r\n")
	out.Write(b)
	return out.Bytes(), true
}

func serverErrorMessage(status int, detail string) string {
	switch status {
	case http.StatusRequestHeaderFieldsTooLarge:
		return "The request line and headers are too large; send long input in a JSON body."
	case http.StatusNotImplemented:
		return "The request's Transfer-Encoding is not supported; send chunked or a Content-Length."
	}
	if detail != "" {
		return "The request is not valid HTTP/1.1: " + detail + "."
	}
	return "The request is not valid HTTP/1.1: the request line or a header is malformed (spaces and control characters in a path must be percent-encoded)."
}

func plainPhrase(b []byte) bool {
	if len(b) == 0 || len(b) > 64 {
		return false
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == ' ') {
			return false
		}
	}
	return true
}
