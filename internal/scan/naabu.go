package scan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/periscope-oss/periscope/internal/host"
)

type naabuRecord struct {
	Host      string    `json:"host"`
	IP        string    `json:"ip"`
	Port      naabuPort `json:"port"`
	Protocol  string    `json:"protocol"`
	TLS       bool      `json:"tls"`
	Timestamp string    `json:"timestamp"`
}

// naabuPort is a port as a number, a string, or (older naabu) an object
// {"Port":80,"Protocol":0,"TLS":false}.
type naabuPort struct {
	port int64
	tls  bool
}

func (p *naabuPort) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var o struct {
			Port flexInt `json:"port"` // encoding/json matches "Port" too
			TLS  bool    `json:"tls"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return err
		}
		p.port, p.tls = int64(o.Port), o.TLS
		return nil
	}
	var n flexInt
	if err := n.UnmarshalJSON(b); err != nil {
		return err
	}
	p.port = int64(n)
	return nil
}

// ParseNaabu parses naabu -json output: one open port per line, with the
// host name when naabu was given one and its IP.
func ParseNaabu(r io.Reader, emit func(host.Host) error) (Stats, error) {
	return parseLines(Naabu, r, emit, appending(naabuLine))
}

func naabuLine(line []byte) ([]host.Host, error) {
	var rec naabuRecord
	if err := json.Unmarshal(line, &rec); err != nil {
		return nil, errors.New(jsonReason(err))
	}
	name := rec.Host
	if name == rec.IP {
		name = ""
	}
	h, err := newHost(name, rec.IP)
	if err != nil {
		return nil, err
	}
	if h.IPAddress != "" && h.Host != h.IPAddress {
		addIP(&h, h.IPAddress)
	}
	seen, err := parseTime(rec.Timestamp)
	if err != nil {
		return nil, fmt.Errorf("timestamp: %w", err)
	}
	if rec.Port.port <= 0 || rec.Port.port > 65535 {
		return nil, fmt.Errorf("port %d out of range", rec.Port.port)
	}
	proto := strings.ToLower(rec.Protocol)
	if proto == "" {
		proto = "tcp"
	}
	var svc string
	if rec.TLS || rec.Port.tls {
		svc = "tls"
	}
	h.FirstSeen, h.LastSeen = seen, seen
	h.NetworkServices = []host.Service{{Port: int(rec.Port.port), Protocol: proto, Service: svc, FirstSeen: seen, LastSeen: seen}}
	return []host.Host{h}, nil
}
