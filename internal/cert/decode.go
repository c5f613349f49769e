package cert

import (
	"bufio"
	"bytes"
	"encoding/asn1"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

const (
	// maxDERSize bounds a DER file read into memory; real certificate files
	// are a few kilobytes, chains a few tens.
	maxDERSize = 16 << 20
	// maxBlockSize bounds the base64 text of one PEM block.
	maxBlockSize = 1 << 20
	// lineBufferSize bounds one line of PEM input; longer lines are skipped.
	lineBufferSize = 256 << 10
)

// Reject describes input that was skipped, and why.
type Reject struct {
	// Source names the input (a file path, or the name given to Decode).
	Source string
	// Line is the 1-based line where the skipped input starts; 0 when the
	// input is DER.
	Line int
	// Offset is the byte offset in DER input; 0 for PEM.
	Offset int64
	Reason string
}

func (r Reject) String() string {
	switch {
	case r.Line > 0:
		return fmt.Sprintf("%s:%d: %s", r.Source, r.Line, r.Reason)
	case r.Offset > 0:
		return fmt.Sprintf("%s: offset %d: %s", r.Source, r.Offset, r.Reason)
	}
	return fmt.Sprintf("%s: %s", r.Source, r.Reason)
}

// ReadDir decodes every regular file under dir (recursively; symbolic links
// are not followed). A file that cannot be opened is rejected and the walk
// continues; an error from emit stops it.
func ReadDir(dir string, emit func(Certificate) error, reject func(Reject)) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return fmt.Errorf("read certificate directory %q: %w", dir, err)
			}
			reject(Reject{Source: path, Reason: err.Error()})
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		err = ReadFile(path, emit, reject)
		var fe *fileError
		if errors.As(err, &fe) {
			reject(Reject{Source: path, Reason: fe.Error()})
			return nil
		}
		return err
	})
}

// fileError is a problem with one file (open, read) rather than with emit.
type fileError struct{ err error }

func (e *fileError) Error() string { return e.err.Error() }
func (e *fileError) Unwrap() error { return e.err }

// ReadFile decodes the PEM or DER certificates in the file at path.
func ReadFile(path string, emit func(Certificate) error, reject func(Reject)) error {
	f, err := os.Open(path)
	if err != nil {
		return &fileError{fmt.Errorf("open certificate file: %w", err)}
	}
	defer f.Close()
	return Decode(f, path, emit, reject)
}

// Decode reads certificates from r, which holds either DER (one or more
// concatenated certificates) or PEM text: CERTIFICATE blocks possibly with
// other text between them, such as `openssl x509 -text` output. name is used
// in rejects and errors. Each certificate is passed to emit; anything skipped
// (text that is not PEM, non-certificate blocks, unparseable certificates) is
// passed to reject with a reason. Decode returns an error only when reading
// fails or emit returns one.
func Decode(r io.Reader, name string, emit func(Certificate) error, reject func(Reject)) error {
	br := bufio.NewReaderSize(r, lineBufferSize)
	head, err := peekNonSpace(br)
	if err != nil {
		return &fileError{fmt.Errorf("read %s: %w", name, err)}
	}
	if head == 0 {
		reject(Reject{Source: name, Reason: "empty input"})
		return nil
	}
	if head == 0x30 {
		return decodeDER(br, name, emit, reject)
	}
	return decodePEM(br, name, emit, reject)
}

// peekNonSpace returns the first byte that is not ASCII white space without
// consuming anything, or 0 at end of input.
func peekNonSpace(br *bufio.Reader) (byte, error) {
	for n := 64; ; n *= 2 {
		b, err := br.Peek(n)
		for _, c := range b {
			if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
				return c, nil
			}
		}
		if err == io.EOF {
			return 0, nil
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return 0, err
		}
		if n >= lineBufferSize {
			return ' ', nil // only white space so far; treat as text
		}
	}
}

func decodeDER(br *bufio.Reader, name string, emit func(Certificate) error, reject func(Reject)) error {
	data, err := io.ReadAll(io.LimitReader(br, maxDERSize+1))
	if err != nil {
		return &fileError{fmt.Errorf("read %s: %w", name, err)}
	}
	if len(data) > maxDERSize {
		reject(Reject{Source: name, Reason: fmt.Sprintf("DER input larger than %d bytes", maxDERSize)})
		return nil
	}
	data = bytes.TrimRight(data, " \t\r\n")
	var off int64
	for len(data) > 0 {
		var raw asn1.RawValue
		rest, err := asn1.Unmarshal(data, &raw)
		if err != nil {
			reject(Reject{Source: name, Offset: off, Reason: fmt.Sprintf("not DER: %v", err)})
			return nil
		}
		c, err := Parse(raw.FullBytes)
		if err != nil {
			reject(Reject{Source: name, Offset: off, Reason: err.Error()})
		} else if err := emit(c); err != nil {
			return err
		}
		off += int64(len(raw.FullBytes))
		data = rest
	}
	return nil
}

// pemState is the scanner for PEM text, one line at a time.
type pemState struct {
	name   string
	emit   func(Certificate) error
	reject func(Reject)

	line int

	// text not inside a block
	junkStart, junkLines int
	junkOpenSSL          bool

	// the block being read
	inBlock    bool
	blockType  string
	blockStart int
	b64        []byte
	oversize   bool

	blocks int
}

func decodePEM(br *bufio.Reader, name string, emit func(Certificate) error, reject func(Reject)) error {
	s := &pemState{name: name, emit: emit, reject: reject}
	for {
		line, err := br.ReadSlice('\n')
		tooLong := errors.Is(err, bufio.ErrBufferFull)
		if len(line) > 0 || tooLong {
			s.line++
			if tooLong {
				// Drain the rest of the line; it cannot be PEM we accept.
				for errors.Is(err, bufio.ErrBufferFull) {
					_, err = br.ReadSlice('\n')
				}
				s.longLine()
			} else if perr := s.feed(line); perr != nil {
				return perr
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil && !tooLong {
			return &fileError{fmt.Errorf("read %s: %w", name, err)}
		}
	}
	if s.blocks == 0 && !s.inBlock {
		s.reject(Reject{Source: name, Line: 1, Reason: fmt.Sprintf("no PEM blocks found in %d lines", s.line)})
		return nil
	}
	s.flushJunk()
	if s.inBlock {
		s.reject(Reject{Source: name, Line: s.blockStart, Reason: fmt.Sprintf("PEM block %q has no END line", s.blockType)})
	}
	return nil
}

func (s *pemState) longLine() {
	if s.inBlock {
		s.oversize = true
		return
	}
	s.junk("(line too long)")
}

func (s *pemState) feed(raw []byte) error {
	line := strings.TrimSpace(string(raw))
	if t, ok := pemMarker(line, "-----BEGIN "); ok {
		s.flushJunk()
		if s.inBlock {
			s.reject(Reject{Source: s.name, Line: s.blockStart, Reason: fmt.Sprintf("PEM block %q has no END line before the next BEGIN", s.blockType)})
		}
		s.inBlock, s.blockType, s.blockStart, s.b64, s.oversize = true, t, s.line, s.b64[:0], false
		return nil
	}
	if !s.inBlock {
		s.junk(line)
		return nil
	}
	if t, ok := pemMarker(line, "-----END "); ok {
		s.inBlock = false
		s.blocks++
		if t != s.blockType {
			s.reject(Reject{Source: s.name, Line: s.blockStart, Reason: fmt.Sprintf("PEM block BEGIN %q ends with END %q", s.blockType, t)})
			return nil
		}
		return s.block()
	}
	if strings.Contains(line, ":") {
		return nil // RFC 1421 header such as Proc-Type; not part of the data
	}
	if len(s.b64)+len(line) > maxBlockSize {
		s.oversize = true
	}
	if !s.oversize {
		s.b64 = append(s.b64, line...)
	}
	return nil
}

func (s *pemState) block() error {
	if s.oversize {
		s.reject(Reject{Source: s.name, Line: s.blockStart, Reason: fmt.Sprintf("PEM block %q larger than %d bytes", s.blockType, maxBlockSize)})
		return nil
	}
	switch s.blockType {
	case "CERTIFICATE", "X509 CERTIFICATE", "TRUSTED CERTIFICATE":
	default:
		s.reject(Reject{Source: s.name, Line: s.blockStart, Reason: fmt.Sprintf("PEM block %q is not a certificate", s.blockType)})
		return nil
	}
	der := make([]byte, base64.StdEncoding.DecodedLen(len(s.b64)))
	n, err := base64.StdEncoding.Decode(der, s.b64)
	if err != nil {
		s.reject(Reject{Source: s.name, Line: s.blockStart, Reason: fmt.Sprintf("PEM block %q: bad base64: %v", s.blockType, err)})
		return nil
	}
	der = der[:n]
	if s.blockType == "TRUSTED CERTIFICATE" {
		// OpenSSL appends trust settings after the certificate.
		var raw asn1.RawValue
		if _, err := asn1.Unmarshal(der, &raw); err == nil {
			der = raw.FullBytes
		}
	}
	c, err := Parse(der)
	if err != nil {
		s.reject(Reject{Source: s.name, Line: s.blockStart, Reason: err.Error()})
		return nil
	}
	return s.emit(c)
}

func (s *pemState) junk(line string) {
	if s.junkLines == 0 {
		if line == "" {
			return // blank lines between blocks are not worth a reject
		}
		s.junkStart = s.line
		s.junkOpenSSL = strings.HasPrefix(line, "Certificate:")
	}
	s.junkLines++
}

func (s *pemState) flushJunk() {
	if s.junkLines == 0 {
		return
	}
	what := "text that is not PEM"
	if s.junkOpenSSL {
		what = "openssl text output"
	}
	s.reject(Reject{Source: s.name, Line: s.junkStart, Reason: fmt.Sprintf("skipped %d lines of %s", s.junkLines, what)})
	s.junkLines = 0
}

// pemMarker reports whether line is "<prefix>TYPE-----" and returns TYPE.
func pemMarker(line, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(line, prefix)
	if !ok {
		return "", false
	}
	t, ok := strings.CutSuffix(rest, "-----")
	return t, ok
}
