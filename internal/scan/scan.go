// Package scan parses scanner and passive-DNS outputs into host
// observations (host.Host), streaming: inputs are read record by record and
// never held whole in memory.
//
// Every parser has the same shape:
//
//	func ParseX(r io.Reader, emit func(host.Host) error) (Stats, error)
//
// emit is called once per observation, in input order; the store merges
// observations of the same host (host.Merge). A record that cannot be used
// is skipped and counted in Stats with its position (line and byte offset)
// and the reason; parsing goes on with the next record. The returned error
// is non-nil only when parsing cannot go on: a read error, an emit error
// (returned wrapped, so errors.Is works), or a structural error in a format
// that cannot resynchronise (nmap XML cut off mid-host). Such errors are
// *Error values naming the position. Stats are valid in every case and
// count everything done before the error.
package scan

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/periscope"
	"github.com/periscope-oss/periscope/internal/textenc"
)

// MaxRejects is how many rejected records Stats keeps in detail; all are
// counted in Stats.Rejected.
const MaxRejects = 100

// MaxLine is the longest line a line-oriented parser accepts; longer lines
// are rejected (and skipped without being held in memory).
const MaxLine = 4 << 20

// Stats reports what a parser did.
type Stats struct {
	Records  int      // input records read (lines with content, nmap hosts)
	Hosts    int      // observations emitted
	Skipped  int      // well-formed records with nothing to index (closed ports, hosts down, unsupported rrtypes)
	Rejected int      // records rejected as bad input
	Rejects  []Reject // the first MaxRejects rejected records
	// SkippedBy counts the skipped records by reason; Skips lists the
	// first MaxSkips with their positions (for --log-level debug).
	SkippedBy map[string]int
	Skips     []Reject
}

// Reject is one rejected input record.
type Reject struct {
	Line   int   // 1-based line number
	Offset int64 // byte offset of the record's start
	Reason string
}

func (r Reject) String() string {
	return fmt.Sprintf("line %d (byte %d): %s", r.Line, r.Offset, r.Reason)
}

func (s *Stats) reject(line int, off int64, reason string) {
	s.Rejected++
	if len(s.Rejects) < MaxRejects {
		s.Rejects = append(s.Rejects, Reject{Line: line, Offset: off, Reason: reason})
	}
}

// Error is an error that stopped a parser, with the input position.
type Error struct {
	Format string
	Line   int   // 1-based line number, 0 when unknown
	Offset int64 // byte offset
	Err    error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: line %d (byte %d): %v", e.Format, e.Line, e.Offset, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Format names an input format.
type Format string

// The formats Parse understands.
const (
	HTTPX   Format = "httpx"   // ProjectDiscovery httpx -json lines
	Nmap    Format = "nmap"    // nmap -oX XML
	Masscan Format = "masscan" // masscan -oJ (JSON array) or -oD (NDJSON)
	Naabu   Format = "naabu"   // naabu -json lines
	PDNS    Format = "pdns"    // passive DNS Common Output Format NDJSON
	Native  Format = "native"  // NDJSON of host objects (see Encoder)
)

// Formats lists every Format, for help texts.
func Formats() []Format { return []Format{HTTPX, Nmap, Masscan, Naabu, PDNS, Native} }

// ParseFormat returns the Format named s (case-insensitive).
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats() {
		if strings.EqualFold(s, string(f)) {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown scan format %q (want one of %v)", s, Formats())
}

// Parse parses r in format f. The scanners' outputs are read through
// textenc, the one decoding of every ingested text (a banner or title in
// Windows-1252 is decoded, not stored as invalid UTF-8); the native format,
// which Periscope writes itself, is read as it is and rejects a line that
// is not UTF-8 as corrupt.
func Parse(f Format, r io.Reader, emit func(host.Host) error) (Stats, error) {
	if f != Native {
		r = textenc.NewReader(r)
	}
	switch f {
	case HTTPX:
		return ParseHTTPX(r, emit)
	case Nmap:
		return ParseNmap(r, emit)
	case Masscan:
		return ParseMasscan(r, emit)
	case Naabu:
		return ParseNaabu(r, emit)
	case PDNS:
		return ParsePDNS(r, emit)
	case Native:
		return ParseNative(r, emit)
	}
	return Stats{}, fmt.Errorf("unknown scan format %q", f)
}

// errSkip is what a record parser returns, wrapped with the reason by
// skip, for a well-formed record that has nothing to index.
var errSkip = errors.New("nothing to index")

// skipError is errSkip with the reason, in the plural form a summary
// counts ("hosts down").
type skipError struct{ reason string }

func (e *skipError) Error() string        { return e.reason }
func (e *skipError) Is(target error) bool { return target == errSkip }

func skip(reason string) error { return &skipError{reason} }

// MaxSkips bounds the skipped records Stats lists with their positions.
const MaxSkips = 10000

// skip counts a skipped record by its reason and, while fewer than
// MaxSkips are, lists it with its position.
func (s *Stats) skip(line int, off int64, err error) {
	reason := err.Error()
	if se, ok := err.(*skipError); ok {
		reason = se.reason
	}
	s.Skipped++
	if s.SkippedBy == nil {
		s.SkippedBy = map[string]int{}
	}
	s.SkippedBy[reason]++
	if len(s.Skips) < MaxSkips {
		s.Skips = append(s.Skips, Reject{Line: line, Offset: off, Reason: reason})
	}
}

// recordFunc turns one line into observations; an error rejects the line
// (errSkip skips it).
type recordFunc func(line []byte) ([]host.Host, error)

// appendFunc is a recordFunc that appends the observations to dst: a batch
// of lines shares one slice of hosts rather than one per line.
type appendFunc func(line []byte, dst []host.Host) ([]host.Host, error)

// appending makes an appendFunc of a recordFunc.
func appending(parse recordFunc) appendFunc {
	return func(line []byte, dst []host.Host) ([]host.Host, error) {
		hs, err := parse(line)
		return append(dst, hs...), err
	}
}

// parseLines runs parse over every non-blank line of r. Lines are read in
// batches by one goroutine, parsed by GOMAXPROCS workers (JSON decoding is
// the cost of every line format) and emitted in input order by the caller's
// goroutine, so emit needs no locking. All goroutines have stopped when
// parseLines returns.
func parseLines(format Format, r io.Reader, emit func(host.Host) error, parse appendFunc) (Stats, error) {
	var st Stats
	done := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(done)

	workers := max(1, runtime.GOMAXPROCS(0))
	jobs := make(chan *lineBatch, workers)
	order := make(chan *lineBatch, 2*workers)
	// Emitted batches' buffers go back to the reader: the parsers copy
	// what they keep of a line.
	free := make(chan []byte, 3*workers+1)
	freeHosts := make(chan []host.Host, 3*workers+1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(jobs)
		defer close(order)
		readBatches(r, jobs, order, free, done)
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range jobs {
				select {
				case b.hosts = <-freeHosts:
				default:
				}
				b.parse(parse)
				close(b.ready)
			}
		}()
	}
	for b := range order {
		select {
		case <-b.ready:
		case <-done:
		}
		for i := range b.lines {
			l := &b.lines[i]
			if l.blank {
				continue
			}
			st.Records++
			switch {
			case l.tooLong:
				st.reject(l.no, l.off, fmt.Sprintf("line longer than %d bytes", MaxLine))
				continue
			case errors.Is(l.err, errSkip):
				st.skip(l.no, l.off, l.err)
				continue
			case l.err != nil:
				st.reject(l.no, l.off, l.err.Error())
				continue
			}
			for _, h := range b.hosts[l.lo:l.hi] {
				if err := emit(h); err != nil {
					return st, &Error{Format: string(format), Line: l.no, Offset: l.off, Err: err}
				}
				st.Hosts++
			}
		}
		if b.err != nil {
			return st, &Error{Format: string(format), Line: b.errLine, Offset: b.errOff, Err: b.err}
		}
		// A batch of very long lines does not keep its buffer.
		if cap(b.buf) <= maxKeptBuffer {
			select {
			case free <- b.buf[:0]:
			default:
			}
		}
		clear(b.hosts) // drop the strings they held
		select {
		case freeHosts <- b.hosts[:0]:
		default:
		}
	}
	return st, nil
}

// maxKeptBuffer bounds the line buffers kept for the next batches: lines
// may be up to MaxLine long, and a few batches of those are not kept.
const maxKeptBuffer = 8 << 20

// batchLines is how many lines a worker parses at a time.
const batchLines = 256

type lineBatch struct {
	buf   []byte
	lines []batchLine
	hosts []host.Host   // every line's observations
	ready chan struct{} // closed when parsed
	// err is a read error after the batch's lines.
	err     error
	errLine int
	errOff  int64
}

type batchLine struct {
	no         int
	off        int64
	start, end int // in buf
	blank      bool
	tooLong    bool
	lo, hi     int // the line's observations in the batch's hosts
	err        error
}

func (b *lineBatch) parse(parse appendFunc) {
	for i := range b.lines {
		l := &b.lines[i]
		if l.blank || l.tooLong {
			continue
		}
		l.lo = len(b.hosts)
		b.hosts, l.err = parse(b.buf[l.start:l.end], b.hosts)
		if l.err != nil {
			b.hosts = b.hosts[:l.lo] // a rejected line adds nothing
		}
		l.hi = len(b.hosts)
	}
}

// readBatches reads r into batches, sending each to order (for the emitter)
// and then to jobs (for a worker), until EOF, a read error or done. A
// batch's buffer is one from free when there is one.
func readBatches(r io.Reader, jobs, order chan<- *lineBatch, free <-chan []byte, done <-chan struct{}) {
	lr := newLineReader(r)
	for {
		b := &lineBatch{ready: make(chan struct{}), lines: make([]batchLine, 0, batchLines)}
		select {
		case b.buf = <-free:
		default:
		}
		var err error
		for len(b.lines) < batchLines {
			var line []byte
			var tooLong bool
			line, tooLong, err = lr.next()
			if err != nil {
				break
			}
			line = bytes.TrimSpace(line)
			start := len(b.buf)
			b.buf = append(b.buf, line...)
			b.lines = append(b.lines, batchLine{
				no: lr.line, off: lr.start, start: start, end: len(b.buf),
				blank: len(line) == 0 && !tooLong, tooLong: tooLong,
			})
		}
		if err != nil && err != io.EOF {
			b.err, b.errLine, b.errOff = err, lr.line+1, lr.off
		}
		select {
		case order <- b:
		case <-done:
			return
		}
		select {
		case jobs <- b:
		case <-done:
			return
		}
		if err != nil {
			return
		}
	}
}

// lineReader reads lines with their numbers and byte offsets, without
// holding more than MaxLine bytes of one line.
type lineReader struct {
	r     *bufio.Reader
	line  int   // number of the line last returned
	start int64 // offset of the line last returned
	off   int64 // offset of the next line
	buf   []byte
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next line without its line ending. tooLong reports a line
// over MaxLine bytes (its content is dropped). err is io.EOF after the last
// line.
func (l *lineReader) next() (line []byte, tooLong bool, err error) {
	l.buf = l.buf[:0]
	l.start = l.off
	for {
		chunk, err := l.r.ReadSlice('\n')
		l.off += int64(len(chunk))
		if !tooLong {
			if len(l.buf)+len(chunk) > MaxLine+2 {
				tooLong = true
				l.buf = l.buf[:0]
			} else if err == nil && len(l.buf) == 0 {
				// The common case: the whole line is in bufio's buffer.
				line = chunk
			} else {
				l.buf = append(l.buf, chunk...)
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF:
			if l.off == l.start {
				return nil, false, io.EOF
			}
		case err != nil:
			return nil, false, err
		}
		l.line++
		if line == nil {
			line = l.buf
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if tooLong || len(line) > MaxLine {
			return nil, true, nil
		}
		return line, false, nil
	}
}

// newHost starts an observation of the host called name (or, when name is
// empty or not a host name, of the bare IP ip). ip, when given, must be an
// IP address; it becomes ip_address.
func newHost(name, ip string) (host.Host, error) {
	var h host.Host
	if ip != "" {
		n, err := host.Normalize(ip)
		if err != nil || !n.IP {
			return h, fmt.Errorf("bad IP address %q", truncate(ip, 64))
		}
		h.IPAddress = n.Host
	}
	if name != "" {
		n, err := host.Normalize(name)
		if err != nil {
			if h.IPAddress == "" {
				return h, err
			}
			// The IP is still worth indexing under its own name.
			n = host.Name{Host: h.IPAddress, IP: true}
		}
		setName(&h, n)
		if n.IP && h.IPAddress == "" {
			h.IPAddress = n.Host
		}
		return h, nil
	}
	if h.IPAddress == "" {
		return h, errors.New("no host name or IP address")
	}
	setName(&h, host.Name{Host: h.IPAddress, IP: true})
	return h, nil
}

func setName(h *host.Host, n host.Name) {
	h.Host, h.Domain, h.TLD, h.Subdomain = n.Host, n.Domain, n.TLD, n.Subdomain
}

// addIP records ip in the host's A or AAAA list.
func addIP(h *host.Host, ip string) {
	if strings.Contains(ip, ":") {
		h.DNS.AAAA = append(h.DNS.AAAA, ip)
	} else {
		h.DNS.A = append(h.DNS.A, ip)
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// jsonReason shortens an encoding/json error for a Reject.
func jsonReason(err error) string {
	// The decoder quotes what it refuses (a member name, a value): a
	// hostile line must not make its reject message long.
	return "invalid JSON: " + periscope.Clip(strings.TrimPrefix(err.Error(), "json: "), 200)
}
