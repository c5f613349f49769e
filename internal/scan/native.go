package scan

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/periscope-oss/periscope/internal/host"
)

// ParseNative parses NDJSON of host objects, one per line, as written by
// Encoder (the export format, and the API's host object). Names are
// normalised again and domain, tld and subdomain recomputed from host, so
// an import cannot plant inconsistent keys; ip_address must be an IP.
// Lines are decoded as encoding/json/v2 decodes them (host.DecodeJSON, a
// hand-written reader of the common form with v2 behind it): member names
// match in any case as before, but a line with invalid UTF-8 or a member
// given twice is rejected rather than repaired or half-read.
func ParseNative(r io.Reader, emit func(host.Host) error) (Stats, error) {
	return parseLines(Native, r, emit, nativeLine)
}

func nativeLine(line []byte, dst []host.Host) ([]host.Host, error) {
	var h host.Host
	if err := host.DecodeJSON(line, &h); err != nil {
		return dst, errors.New(jsonReason(err))
	}
	if h.Host == "" {
		return dst, errors.New("host is missing")
	}
	n, err := host.Normalize(h.Host)
	if err != nil {
		return dst, err
	}
	setName(&h, n)
	if h.IPAddress != "" {
		ip, err := host.Normalize(h.IPAddress)
		if err != nil || !ip.IP {
			return dst, fmt.Errorf("bad ip_address %q", truncate(h.IPAddress, 64))
		}
		h.IPAddress = ip.Host
	} else if n.IP {
		h.IPAddress = n.Host
	}
	for _, p := range h.NetworkPorts {
		if p <= 0 || p > 65535 {
			return dst, fmt.Errorf("network_ports: port %d out of range", p)
		}
	}
	for _, s := range h.NetworkServices {
		if s.Port <= 0 || s.Port > 65535 {
			return dst, fmt.Errorf("network_services: port %d out of range", s.Port)
		}
	}
	h.Derive()
	return append(dst, h), nil
}

// Encoder writes hosts as NDJSON host objects, the format ParseNative
// reads. Output is buffered: call Flush when done.
type Encoder struct {
	w   *bufio.Writer
	enc *json.Encoder
}

// NewEncoder returns an Encoder writing to w.
func NewEncoder(w io.Writer) *Encoder {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &Encoder{w: bw, enc: enc}
}

// Encode writes h as one line.
func (e *Encoder) Encode(h host.Host) error {
	if err := e.enc.Encode(h); err != nil {
		return fmt.Errorf("encode host %q: %w", h.Host, err)
	}
	return nil
}

// Flush writes any buffered output to the underlying writer.
func (e *Encoder) Flush() error {
	if err := e.w.Flush(); err != nil {
		return fmt.Errorf("flush hosts: %w", err)
	}
	return nil
}
