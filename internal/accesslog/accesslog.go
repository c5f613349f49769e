// Package accesslog writes the API's access log: one JSON line a request,
// in the shape log/slog's JSONHandler gives the service's other lines
// ("time", "level", "msg", then the request's fields), written straight
// into a pooled buffer. Building a slog.Record of ten attributes and
// walking them through the JSON handler was the largest single cost the
// middleware added to a cheap request.
package accesslog

import (
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/periscope-oss/periscope/internal/jsontext"
)

// Writer writes log lines to an io.Writer, one Write call a line, under a
// mutex. It is itself an io.Writer (under the same mutex), so the service's
// slog handler can write through it and lines never interleave.
type Writer struct {
	mu   sync.Mutex
	w    io.Writer
	bufs sync.Pool
}

// New returns a Writer to w.
func New(w io.Writer) *Writer {
	return &Writer{w: w, bufs: sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}}
}

// Write writes p whole, under the writer's mutex.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// Entry is one request. Path must never hold the query string (a key pasted
// there must not reach a log); Key is the key's public prefix only.
type Entry struct {
	Time       time.Time
	RequestID  string
	Method     string
	Path       string
	Route      string
	Status     int
	Bytes      int64
	DurationUS int64
	Remote     string
	Key        string // empty for unauthenticated requests (then Account is not written)
	Account    string
}

// Log writes e as one line.
func (w *Writer) Log(e *Entry) error {
	bp := w.bufs.Get().(*[]byte)
	b := Append((*bp)[:0], e)
	_, err := w.Write(b)
	if cap(b) <= 64<<10 {
		*bp = b
		w.bufs.Put(bp)
	}
	return err
}

// Attrs are e's fields as slog attributes, in the order Append writes
// them: for a logger other than the service's (tests, embedders), where the
// line goes through that logger's handler instead.
func (e *Entry) Attrs() []slog.Attr {
	attrs := []slog.Attr{
		slog.String("request_id", e.RequestID), slog.String("method", e.Method),
		slog.String("path", e.Path), slog.String("route", e.Route), slog.Int("status", e.Status),
		slog.Int64("bytes", e.Bytes), slog.Int64("duration_us", e.DurationUS), slog.String("remote", e.Remote),
	}
	if e.Key != "" {
		attrs = append(attrs, slog.String("key", e.Key), slog.String("account", e.Account))
	}
	return attrs
}

// Append appends e's line, newline included, to b: byte for byte what
// slog.NewJSONHandler writes for the same record at level INFO with message
// "request" (a test compares them).
func Append(b []byte, e *Entry) []byte {
	b = append(b, `{"time":"`...)
	b = e.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"INFO","msg":"request","request_id":`...)
	b = jsontext.AppendString(b, e.RequestID, false)
	b = append(b, `,"method":`...)
	b = jsontext.AppendString(b, e.Method, false)
	b = append(b, `,"path":`...)
	b = jsontext.AppendString(b, e.Path, false)
	b = append(b, `,"route":`...)
	b = jsontext.AppendString(b, e.Route, false)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(e.Status), 10)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, e.Bytes, 10)
	b = append(b, `,"duration_us":`...)
	b = strconv.AppendInt(b, e.DurationUS, 10)
	b = append(b, `,"remote":`...)
	b = jsontext.AppendString(b, e.Remote, false)
	if e.Key != "" {
		b = append(b, `,"key":`...)
		b = jsontext.AppendString(b, e.Key, false)
		b = append(b, `,"account":`...)
		b = jsontext.AppendString(b, e.Account, false)
	}
	return append(b, "}\n"...)
}
