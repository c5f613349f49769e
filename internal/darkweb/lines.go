package darkweb

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"

	"github.com/periscope-oss/periscope/internal/textenc"
)

// MaxLine is the longest line a parser accepts; a longer one is rejected.
const MaxLine = 64 << 10

// Encoding says how input bytes become text. Breach dumps are often
// Latin-1 or Windows-1252; Periscope never stores invalid UTF-8.
type Encoding string

// The encodings of --encoding.
const (
	// UTF8 rejects a line that is not valid UTF-8 (the default: a wrong
	// guess would store mojibake as someone's password).
	UTF8 Encoding = "utf-8"
	// Latin1 decodes every line as ISO 8859-1.
	Latin1 Encoding = "latin1"
	// Windows1252 decodes every line as Windows-1252.
	Windows1252 Encoding = "windows-1252"
	// Auto decodes as every other ingest kind does (package textenc):
	// valid UTF-8 kept, each other byte read as Windows-1252 (a superset
	// of Latin-1's printable characters).
	Auto Encoding = "auto"
)

// ParseEncoding returns the encoding named s ("" means UTF8).
func ParseEncoding(s string) (Encoding, error) {
	switch strings.ToLower(s) {
	case "", "utf-8", "utf8":
		return UTF8, nil
	case "latin1", "latin-1", "iso-8859-1":
		return Latin1, nil
	case "windows-1252", "cp1252":
		return Windows1252, nil
	case "auto":
		return Auto, nil
	}
	return "", fmt.Errorf("unknown encoding %q (utf-8, latin1, windows-1252 or auto)", s)
}

// decode turns a raw line into text or says why it cannot.
func (e Encoding) decode(b []byte) (string, error) {
	var cm *charmap.Charmap
	switch e {
	case Latin1:
		cm = charmap.ISO8859_1
	case Windows1252:
		cm = charmap.Windows1252
	case Auto:
		// The one decoding of every ingested text (package textenc):
		// UTF-8 where valid, each other byte as Windows-1252.
		return textenc.String(string(b)), nil
	default:
		if !utf8.Valid(b) {
			return "", errors.New("invalid UTF-8 (see --encoding)")
		}
		return string(b), nil
	}
	out, err := cm.NewDecoder().Bytes(b)
	if err != nil {
		return "", fmt.Errorf("decode %s: %w", e, err)
	}
	return string(out), nil
}

// Reject is a line (or record) left out, with where and why.
type Reject struct {
	File   string
	Line   int
	Reason string
}

func (r Reject) String() string { return fmt.Sprintf("%s:%d: %s", r.File, r.Line, r.Reason) }

// Sink receives what a parser finds: records to store and rejects to
// report. Returning an error from Record stops the parse.
type Sink struct {
	Record func(Record) error
	Reject func(Reject)
}

// lineReader yields decoded lines with their numbers, rejecting (and
// skipping) lines over MaxLine and lines that do not decode. Its first
// read checks the file's head (textInput): a binary file is refused whole,
// a gzip stream is read through.
type lineReader struct {
	br   *bufio.Reader
	enc  Encoding
	file string
	n    int
	sink Sink
	// binary counts NUL-holding lines: a file full of them is not text.
	binary  int
	sniffed bool
	// partial is set when the line last returned ended the file without
	// a newline (a record cut there may be truncated).
	partial bool
}

func newLineReader(r io.Reader, file string, enc Encoding, sink Sink) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), enc: enc, file: file, sink: sink}
}

// start checks the file's head once (textInput) before the first read.
func (l *lineReader) start() error {
	if l.sniffed {
		return nil
	}
	l.sniffed = true
	br, err := textInput(l.br, l.file)
	if err != nil {
		return err
	}
	l.br = br
	return nil
}

func (l *lineReader) reject(line int, format string, args ...any) {
	if l.sink.Reject != nil {
		l.sink.Reject(Reject{File: l.file, Line: line, Reason: fmt.Sprintf(format, args...)})
	}
}

// next returns the next line that decodes, or io.EOF. A read that fails
// mid-file (a gzip stream cut short, say) rejects the partial line and
// returns an error wrapping ErrIncomplete.
// each calls fn with every line and its number until the input ends (nil)
// or fn or the reader fails (that error).
func (l *lineReader) each(fn func(line string, n int) error) error {
	for {
		line, n, err := l.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(line, n); err != nil {
			return err
		}
	}
}

func (l *lineReader) next() (string, int, error) {
	if err := l.start(); err != nil {
		return "", 0, err
	}
	for {
		b, err := l.br.ReadSlice('\n')
		long := false
		if errors.Is(err, bufio.ErrBufferFull) {
			long = true
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = l.br.ReadSlice('\n')
			}
		}
		if err != nil && !errors.Is(err, io.EOF) {
			l.n++
			l.reject(l.n, "truncated: %v", err)
			return "", 0, fmt.Errorf("%s:%d: %w: read: %v (the records before line %d are stored)", l.file, l.n, ErrIncomplete, err, l.n)
		}
		if len(b) == 0 && err != nil {
			return "", 0, io.EOF
		}
		l.n++
		if long {
			l.reject(l.n, "line longer than %d bytes", MaxLine)
			continue
		}
		l.partial = err != nil
		b = bytes.TrimRight(b, "\r\n")
		if l.n == 1 {
			b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
		}
		if bytes.IndexByte(b, 0) >= 0 {
			l.binary++
			l.reject(l.n, "NUL byte (binary data?)")
			if l.binary >= 100 && l.binary == l.n {
				return "", 0, fmt.Errorf("%s: %w: nothing but NUL-holding lines", l.file, ErrBinary)
			}
			continue
		}
		s, derr := l.enc.decode(b)
		if derr != nil {
			l.reject(l.n, "%v", derr)
			continue
		}
		return s, l.n, nil
	}
}
