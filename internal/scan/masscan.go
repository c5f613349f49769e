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

type masscanRecord struct {
	IP        string  `json:"ip"`
	Timestamp flexInt `json:"timestamp"`
	// -oJ: one or more ports per record.
	Ports []struct {
		Port    flexInt `json:"port"`
		Proto   string  `json:"proto"`
		Status  string  `json:"status"`
		Service *struct {
			Name   string `json:"name"`
			Banner string `json:"banner"`
		} `json:"service"`
	} `json:"ports"`
	// -oD: one port per record.
	Port    flexInt `json:"port"`
	Proto   string  `json:"proto"`
	RecType string  `json:"rec_type"`
	Data    struct {
		Status      string `json:"status"`
		ServiceName string `json:"service_name"`
		Banner      string `json:"banner"`
	} `json:"data"`
}

// ParseMasscan parses masscan -oJ output (a JSON array written one element
// per line, with the quirks of masscan versions: lines of "[", "]" or ",",
// trailing commas, and a final "{finished: 1}" that is not JSON) and -oD
// output (NDJSON with rec_type "status" or "banner"). Each open port, and
// each banner, becomes an observation of the bare IP; closed ports are
// skipped.
func ParseMasscan(r io.Reader, emit func(host.Host) error) (Stats, error) {
	return parseLines(Masscan, r, emit, appending(masscanLine))
}

func masscanLine(line []byte) ([]host.Host, error) {
	line = bytes.TrimPrefix(line, []byte("["))
	line = bytes.TrimSuffix(bytes.TrimSpace(line), []byte("]"))
	line = bytes.Trim(bytes.TrimSpace(line), ",")
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, skip("lines without a record (array brackets)")
	}
	if isFinished(line) {
		return nil, skip("end-of-scan markers")
	}
	var rec masscanRecord
	if err := json.Unmarshal(line, &rec); err != nil {
		return nil, errors.New(jsonReason(err))
	}
	h, err := newHost("", rec.IP)
	if err != nil {
		return nil, err
	}
	seen := int64(rec.Timestamp)
	if seen < 0 {
		seen = 0
	}
	h.FirstSeen, h.LastSeen = seen, seen
	var svcs []host.Service
	add := func(port flexInt, proto, status, name, banner string) error {
		if port <= 0 || port > 65535 {
			return fmt.Errorf("port %d out of range", port)
		}
		if status != "" && status != "open" {
			return nil
		}
		if proto == "" {
			proto = "tcp"
		}
		svcs = append(svcs, host.Service{
			Port: int(port), Protocol: strings.ToLower(proto), Service: name, Banner: banner,
			FirstSeen: seen, LastSeen: seen,
		})
		return nil
	}
	for _, p := range rec.Ports {
		var name, banner string
		if p.Service != nil {
			name, banner = p.Service.Name, p.Service.Banner
		}
		if err := add(p.Port, p.Proto, p.Status, name, banner); err != nil {
			return nil, err
		}
	}
	if len(rec.Ports) == 0 && rec.Port != 0 {
		if err := add(rec.Port, rec.Proto, rec.Data.Status, rec.Data.ServiceName, rec.Data.Banner); err != nil {
			return nil, err
		}
	}
	if len(svcs) == 0 {
		if len(rec.Ports) == 0 && rec.Port == 0 {
			return nil, errors.New("record has no port")
		}
		return nil, skip("closed ports")
	}
	h.NetworkServices = svcs
	return []host.Host{h}, nil
}

// isFinished reports masscan's closing "{finished: 1}" line (not JSON).
func isFinished(line []byte) bool {
	if len(line) > 32 {
		return false
	}
	s := strings.ReplaceAll(string(line), " ", "")
	return strings.HasPrefix(s, "{finished:") || strings.HasPrefix(s, `{"finished":`)
}
