package darkweb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/transform"
)

// ParseDeHashed reads DeHashed's record shape: a JSON array, an object
// with an "entries" array (API v1 answers, often one long line), or NDJSON.
// Values are strings (v1) or arrays of strings (v2: each array's values
// are kept, the first for single-valued fields). database_name names the
// breach. A record of the wrong shape is rejected with its file:line and
// the rest is read; a document or NDJSON file that ends inside a record
// keeps the complete records, rejects the cut one and returns an error
// wrapping ErrIncomplete.
func ParseDeHashed(r io.Reader, o Options, sink Sink) error {
	lr := newLineReader(r, o.File, o.enc(), sink)
	doc, err := isDocument(lr)
	if err != nil {
		return err
	}
	if doc {
		return dehashedDocument(lr, o, sink)
	}
	return lr.each(func(line string, n int) error {
		if strings.TrimSpace(line) == "" {
			return nil
		}
		rec, err := dehashedRecord([]byte(line))
		switch {
		case err != nil && lr.partial && !json.Valid([]byte(line)):
			lr.reject(n, "truncated record: the file ends inside it")
			return fmt.Errorf("%s:%d: %w: the last NDJSON record is cut short (the records before it are stored)", o.File, n, ErrIncomplete)
		case err != nil:
			lr.reject(n, "%v", err)
		default:
			if err := o.emit(sink, rec, "dehashed"); err != nil {
				return err
			}
		}
		return nil
	})
}

// isDocument tells a whole JSON document (an array, or an object that is
// not one NDJSON record: an API answer with "entries", or one too long or
// too broken for a line) from NDJSON, by the head of the file.
func isDocument(lr *lineReader) (bool, error) {
	if err := lr.start(); err != nil {
		return false, err
	}
	head, _ := lr.br.Peek(MaxLine)
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	t := bytes.TrimLeft(head, " \t\r\n")
	switch {
	case len(t) == 0:
		return false, nil
	case t[0] == '[':
		return true, nil
	case t[0] != '{':
		return false, nil
	}
	line, _, ok := bytes.Cut(t, []byte("\n"))
	if !ok && len(head) == MaxLine {
		return true, nil // a first line over 64 KiB: an API answer on one line
	}
	return !json.Valid(line) || hasEntries(line), nil
}

// hasEntries reports whether a one-line JSON object is an API answer
// wrapping its records in "entries".
func hasEntries(t []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(t, &m) != nil {
		return false
	}
	_, ok := m["entries"]
	return ok
}

// maxDocRecord bounds one record of a JSON document in memory: past it
// the document is abandoned (records over MaxLine are rejected one by one).
const maxDocRecord = 16 << 20

// dehashedDocument streams a JSON array of records, or the "entries"
// array of an API answer, record by record, so a document cut short keeps
// the records before the cut.
func dehashedDocument(lr *lineReader, o Options, sink Sink) error {
	if head, _ := lr.br.Peek(3); bytes.Equal(head, []byte("\xef\xbb\xbf")) {
		lr.br.Discard(3) // a UTF-8 byte-order mark, which JSON does not allow
	}
	var src io.Reader = lr.br
	switch o.enc() {
	case Latin1:
		src = transform.NewReader(src, charmap.ISO8859_1.NewDecoder())
	case Windows1252:
		src = transform.NewReader(src, charmap.Windows1252.NewDecoder())
	}
	js := &jsonStream{src: src}
	dec := json.NewDecoder(js)
	fail := func(err error) error {
		line := js.lineAt(dec.InputOffset())
		var se *json.SyntaxError
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			lr.reject(line, "truncated record: the file ends inside it")
			return fmt.Errorf("%s:%d: %w: the JSON document is cut short (the records before line %d are stored)", o.File, line, ErrIncomplete, line)
		case errors.As(err, &se):
			lr.reject(line, "invalid JSON: %v", err)
			return fmt.Errorf("%s:%d: %w: invalid JSON, the rest of the document cannot be read (the records before line %d are stored)", o.File, line, ErrIncomplete, line)
		case errors.Is(err, errRecordTooBig):
			lr.reject(line, "a record over %d bytes", maxDocRecord)
			return fmt.Errorf("%s:%d: %w: a record over %d bytes, the rest of the document is not read", o.File, line, ErrIncomplete, maxDocRecord)
		}
		lr.reject(line, "truncated: %v", err)
		return fmt.Errorf("%s:%d: %w: read: %v (the records before line %d are stored)", o.File, line, ErrIncomplete, err, line)
	}
	tok, err := dec.Token()
	if err != nil {
		return fail(err)
	}
	if tok == json.Delim('{') {
		found := false
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return fail(err)
			}
			if key != "entries" {
				var skip json.RawMessage
				if err := dec.Decode(&skip); err != nil {
					return fail(err)
				}
				js.mark(dec.InputOffset())
				continue
			}
			if tok, err := dec.Token(); err != nil {
				return fail(err)
			} else if tok != json.Delim('[') {
				return fmt.Errorf("%s:%d: \"entries\" is not an array: nothing stored", o.File, js.lineAt(dec.InputOffset()))
			}
			found = true
			break
		}
		if !found {
			if _, err := dec.Token(); err != nil {
				return fail(err)
			}
			return fmt.Errorf("%s: a JSON object without \"entries\" (want an array of records, {\"entries\": […]} or NDJSON): nothing stored", o.File)
		}
	}
	for i := 1; dec.More(); i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fail(err)
		}
		js.mark(dec.InputOffset())
		line := js.lineAt(dec.InputOffset() - int64(len(raw)))
		if len(raw) > MaxLine {
			lr.reject(line, "record %d: longer than %d bytes", i, MaxLine)
			continue
		}
		if !utf8.Valid(raw) {
			if o.enc() != Auto {
				lr.reject(line, "record %d: invalid UTF-8 (see --encoding)", i)
				continue
			}
			s, err := Windows1252.decode(raw)
			if err != nil {
				lr.reject(line, "record %d: %v", i, err)
				continue
			}
			raw = json.RawMessage(s)
		}
		rec, err := dehashedRecord(raw)
		if err != nil {
			lr.reject(line, "record %d: %v", i, err)
			continue
		}
		if err := o.emit(sink, rec, "dehashed"); err != nil {
			return err
		}
	}
	// The closing bracket: its absence is a document cut between records.
	if _, err := dec.Token(); err != nil {
		return fail(err)
	}
	return nil
}

var errRecordTooBig = errors.New("record too big")

// jsonStream feeds a JSON decoder and maps its offsets back to line
// numbers; it fails a read when one record would pass maxDocRecord.
type jsonStream struct {
	src    io.Reader
	end    int64 // stream offset just past the bytes read
	lines  int   // newlines before end
	marked int64 // where the record being read starts, roughly
	kept   []chunk
}

// chunk is a piece of the stream kept until lineAt passes it.
type chunk struct {
	off  int64
	line int // of its first byte
	data []byte
}

func (j *jsonStream) Read(p []byte) (int, error) {
	if j.end-j.marked > maxDocRecord {
		return 0, errRecordTooBig
	}
	n, err := j.src.Read(p)
	if n > 0 {
		j.kept = append(j.kept, chunk{off: j.end, line: j.lines + 1, data: append([]byte(nil), p[:n]...)})
		j.lines += bytes.Count(p[:n], []byte("\n"))
		j.end += int64(n)
	}
	return n, err
}

// mark notes where the next record starts.
func (j *jsonStream) mark(off int64) { j.marked = off }

// lineAt returns the number of the line holding the first byte at or
// after off that is not blank, a comma or a colon (where the next value
// starts), and forgets what comes before. Offsets must not decrease.
func (j *jsonStream) lineAt(off int64) int {
	for len(j.kept) > 0 {
		c := j.kept[0]
		if off < c.off {
			off = c.off
		}
		if rel := off - c.off; rel < int64(len(c.data)) {
			rest := c.data[rel:]
			if i := bytes.IndexFunc(rest, func(r rune) bool { return !bytes.ContainsRune([]byte(" \t\r\n,:"), r) }); i >= 0 {
				return c.line + bytes.Count(c.data[:rel+int64(i)], []byte("\n"))
			}
		}
		if len(j.kept) == 1 {
			return c.line + bytes.Count(c.data, []byte("\n"))
		}
		j.kept = j.kept[1:]
	}
	return j.lines + 1
}
