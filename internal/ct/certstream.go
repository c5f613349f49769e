package ct

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/periscope-oss/periscope/internal/cert"
)

// maxCertstreamLine bounds one NDJSON message; a full message with a chain
// is some tens of kilobytes.
const maxCertstreamLine = 4 << 20

// CertstreamUpdate is one certificate seen by a certstream server.
type CertstreamUpdate struct {
	// Index is data.cert_index, the entry's index in its log.
	Index int64
	// Source is data.source.url, the log's URL; SourceName its name.
	Source, SourceName string
	Seen               time.Time
	// Precert is set for update_type "PrecertLogEntry".
	Precert bool
	// Domains are data.leaf_cert.all_domains (or the data of a dns_entries
	// message), lower case, deduplicated.
	Domains []string
	// Cert is parsed from data.leaf_cert.as_der; nil when the message has
	// no DER (the "lite" and domains-only streams) or it did not parse.
	Cert *cert.Certificate
}

type certstreamMessage struct {
	MessageType string          `json:"message_type"`
	Data        json.RawMessage `json:"data"`
}

type certstreamData struct {
	UpdateType string `json:"update_type"`
	LeafCert   struct {
		AllDomains []string `json:"all_domains"`
		AsDER      string   `json:"as_der"`
	} `json:"leaf_cert"`
	CertIndex *int64  `json:"cert_index"`
	Seen      float64 `json:"seen"`
	Source    struct {
		URL  string `json:"url"`
		Name string `json:"name"`
	} `json:"source"`
}

// ReadCertstream reads newline-delimited certstream JSON messages from r.
// "certificate_update" and "dns_entries" messages are passed to emit;
// "heartbeat" messages are ignored; anything else (bad JSON, unknown message
// types, undecodable DER) is passed to reject with its line, and reading
// continues. name labels the input in rejects. An error from emit or from
// reading stops it.
func ReadCertstream(r io.Reader, name string, emit func(CertstreamUpdate) error, reject func(cert.Reject)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	for line := 1; ; line++ {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf[:0], chunk...)
		tooLong := false
		for errors.Is(err, bufio.ErrBufferFull) {
			chunk, err = br.ReadSlice('\n')
			if len(buf)+len(chunk) > maxCertstreamLine {
				tooLong = true
			} else {
				buf = append(buf, chunk...)
			}
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("read certstream %s line %d: %w", name, line, err)
		}
		if tooLong {
			reject(cert.Reject{Source: name, Line: line, Reason: fmt.Sprintf("message longer than %d bytes", maxCertstreamLine)})
		} else if msg := bytes.TrimSpace(buf); len(msg) > 0 {
			u, ok, perr := ParseCertstreamMessage(msg)
			if perr != nil {
				reject(cert.Reject{Source: name, Line: line, Reason: perr.Error()})
			}
			if ok {
				if err := emit(u); err != nil {
					return err
				}
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// ParseCertstreamMessage parses one certstream JSON message. The bool is false for
// messages that carry no certificate (heartbeats) and for unusable ones, in
// which case the error says why. A message can be usable and still report an
// error, when its DER did not parse but its domains did.
func ParseCertstreamMessage(msg []byte) (CertstreamUpdate, bool, error) {
	var m certstreamMessage
	if err := json.Unmarshal(msg, &m); err != nil {
		return CertstreamUpdate{}, false, fmt.Errorf("bad JSON: %w", err)
	}
	switch m.MessageType {
	case "heartbeat":
		return CertstreamUpdate{}, false, nil
	case "dns_entries":
		var names []string
		if err := json.Unmarshal(m.Data, &names); err != nil {
			return CertstreamUpdate{}, false, fmt.Errorf("dns_entries: bad data: %w", err)
		}
		return CertstreamUpdate{Index: -1, Domains: normalize(names)}, true, nil
	case "certificate_update":
	case "":
		return CertstreamUpdate{}, false, errors.New("no message_type")
	default:
		return CertstreamUpdate{}, false, fmt.Errorf("unknown message_type %q", m.MessageType)
	}
	var d certstreamData
	if err := json.Unmarshal(m.Data, &d); err != nil {
		return CertstreamUpdate{}, false, fmt.Errorf("certificate_update: bad data: %w", err)
	}
	u := CertstreamUpdate{
		Index:      -1,
		Source:     d.Source.URL,
		SourceName: d.Source.Name,
		Precert:    d.UpdateType == "PrecertLogEntry",
		Domains:    normalize(d.LeafCert.AllDomains),
	}
	if d.CertIndex != nil {
		u.Index = *d.CertIndex
	}
	if d.Seen > 0 && d.Seen < math.MaxInt32*4 {
		sec, frac := math.Modf(d.Seen)
		u.Seen = time.Unix(int64(sec), int64(frac*1e9)).UTC()
	}
	if d.LeafCert.AsDER == "" {
		if len(u.Domains) == 0 {
			return CertstreamUpdate{}, false, errors.New("certificate_update without as_der or all_domains")
		}
		return u, true, nil
	}
	der, err := base64.StdEncoding.DecodeString(d.LeafCert.AsDER)
	if err != nil {
		return u, len(u.Domains) > 0, fmt.Errorf("certificate_update index %d: as_der: %w", u.Index, err)
	}
	c, err := cert.Parse(der)
	if err != nil {
		return u, len(u.Domains) > 0, fmt.Errorf("certificate_update index %d: %w", u.Index, err)
	}
	if u.Precert {
		c.IsPrecert = true
	}
	u.Cert = &c
	if len(u.Domains) == 0 {
		u.Domains = c.DNSNames
	}
	return u, true, nil
}

func normalize(names []string) []string {
	out := make([]string, 0, len(names))
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		n = cert.NormalizeName(n)
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		out = append(out, n)
	}
	return out
}
