package scan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"

	"github.com/periscope-oss/periscope/internal/host"
)

// pdnsRecord is a passive DNS record in the Common Output Format
// (draft-dulaunoy-dnsop-passive-dns-cof): rrname, rrtype, rdata,
// time_first and time_last are mandatory; count, bailiwick, sensor_id,
// zone_time_first, zone_time_last, origin, time_first_ms and time_last_ms
// are optional.
type pdnsRecord struct {
	RRName        string    `json:"rrname"`
	RRType        flexType  `json:"rrtype"`
	RData         flexRData `json:"rdata"`
	TimeFirst     flexInt   `json:"time_first"`
	TimeLast      flexInt   `json:"time_last"`
	ZoneTimeFirst flexInt   `json:"zone_time_first"`
	ZoneTimeLast  flexInt   `json:"zone_time_last"`
	TimeFirstMS   flexInt   `json:"time_first_ms"`
	TimeLastMS    flexInt   `json:"time_last_ms"`
	Count         flexInt   `json:"count"`
}

// flexRData is rdata as one string or a list of strings (both are COF).
type flexRData []string

func (r *flexRData) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		return json.Unmarshal(b, (*[]string)(r))
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*r = []string{s}
	return nil
}

// flexType is an RR type as a mnemonic ("A") or a number (1, "28").
type flexType string

var rrTypeNumbers = map[string]string{"1": "A", "2": "NS", "5": "CNAME", "12": "PTR", "15": "MX", "16": "TXT", "28": "AAAA"}

func (t *flexType) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	var s string
	switch v := v.(type) {
	case string:
		s = v
	case float64:
		s = strconv.FormatFloat(v, 'f', -1, 64)
	default:
		return fmt.Errorf("rrtype must be a string or a number")
	}
	s = strings.ToUpper(strings.TrimSpace(s))
	if m, ok := rrTypeNumbers[s]; ok {
		s = m
	}
	*t = flexType(s)
	return nil
}

// ParsePDNS parses passive DNS in the Common Output Format, one JSON object
// per line. A and AAAA records give the host its IP addresses; CNAME, MX,
// NS and TXT records fill the host's dns lists; a PTR record (rrname in
// in-addr.arpa or ip6.arpa) gives the bare-IP host its dns.ptr. Other
// record types are skipped. time_first/time_last (or the zone_ and _ms
// variants) set first and last seen.
func ParsePDNS(r io.Reader, emit func(host.Host) error) (Stats, error) {
	return parseLines(PDNS, r, emit, appending(pdnsLine))
}

func pdnsLine(line []byte) ([]host.Host, error) {
	var rec pdnsRecord
	if err := json.Unmarshal(line, &rec); err != nil {
		return nil, errors.New(jsonReason(err))
	}
	if rec.RRName == "" {
		return nil, errors.New("rrname is missing")
	}
	if rec.RRType == "" {
		return nil, errors.New("rrtype is missing")
	}
	if len(rec.RData) == 0 {
		return nil, errors.New("rdata is missing")
	}
	first := firstNonZero(int64(rec.TimeFirst), int64(rec.ZoneTimeFirst), int64(rec.TimeFirstMS)/1000)
	last := firstNonZero(int64(rec.TimeLast), int64(rec.ZoneTimeLast), int64(rec.TimeLastMS)/1000)
	if first < 0 || last < 0 {
		return nil, errors.New("negative time")
	}

	var h host.Host
	var err error
	switch rec.RRType {
	case "PTR":
		ip, ok := ptrAddr(rec.RRName)
		if !ok {
			return nil, fmt.Errorf("PTR rrname %q is not a reverse name", truncate(rec.RRName, 80))
		}
		if h, err = newHost("", ip); err != nil {
			return nil, err
		}
		for _, d := range rec.RData {
			n, err := host.Normalize(d)
			if err != nil {
				return nil, fmt.Errorf("PTR rdata: %w", err)
			}
			h.DNS.PTR = append(h.DNS.PTR, n.Host)
		}
	case "A", "AAAA", "CNAME", "MX", "NS", "TXT":
		n, err := host.Normalize(rec.RRName)
		if err != nil {
			return nil, fmt.Errorf("rrname: %w", err)
		}
		if n.IP {
			return nil, fmt.Errorf("rrname %q is an IP address", n.Host)
		}
		if h, err = newHost(n.Host, ""); err != nil {
			return nil, err
		}
		if err := pdnsData(&h, string(rec.RRType), rec.RData); err != nil {
			return nil, err
		}
	default:
		return nil, skip("unsupported record types")
	}
	h.FirstSeen, h.LastSeen = first, max(first, last)
	return []host.Host{h}, nil
}

func pdnsData(h *host.Host, typ string, rdata []string) error {
	for _, d := range rdata {
		d = strings.TrimSpace(d)
		switch typ {
		case "A", "AAAA":
			a, err := netip.ParseAddr(d)
			if err != nil || a.Zone() != "" || (typ == "A") != a.Is4() {
				return fmt.Errorf("%s rdata %q is not an IPv%s address", typ, truncate(d, 64), map[bool]string{true: "4", false: "6"}[typ == "A"])
			}
			addIP(h, a.String())
			if h.IPAddress == "" {
				h.IPAddress = a.String()
			}
		case "CNAME", "NS", "MX":
			if typ == "MX" {
				// "10 mx.example.com": keep the exchange, drop the preference.
				if f := strings.Fields(d); len(f) == 2 {
					d = f[1]
				}
			}
			n, err := host.Normalize(d)
			if err != nil {
				return fmt.Errorf("%s rdata: %w", typ, err)
			}
			switch typ {
			case "CNAME":
				h.DNS.CNAME = append(h.DNS.CNAME, n.Host)
			case "NS":
				h.DNS.NS = append(h.DNS.NS, n.Host)
			default:
				h.DNS.MX = append(h.DNS.MX, n.Host)
			}
		case "TXT":
			h.DNS.TXT = append(h.DNS.TXT, d)
		}
	}
	return nil
}

func firstNonZero(v ...int64) int64 {
	for _, x := range v {
		if x != 0 {
			return x
		}
	}
	return 0
}

// ptrAddr turns "4.3.2.1.in-addr.arpa" or a nibble ip6.arpa name into the
// IP address it names.
func ptrAddr(name string) (string, bool) {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	if v4, ok := strings.CutSuffix(name, ".in-addr.arpa"); ok {
		p := strings.Split(v4, ".")
		if len(p) != 4 {
			return "", false
		}
		a, err := netip.ParseAddr(p[3] + "." + p[2] + "." + p[1] + "." + p[0])
		return a.String(), err == nil
	}
	if v6, ok := strings.CutSuffix(name, ".ip6.arpa"); ok {
		p := strings.Split(v6, ".")
		if len(p) != 32 {
			return "", false
		}
		var b strings.Builder
		for i := 31; i >= 0; i-- {
			if len(p[i]) != 1 {
				return "", false
			}
			b.WriteString(p[i])
			if i%4 == 0 && i > 0 {
				b.WriteByte(':')
			}
		}
		a, err := netip.ParseAddr(b.String())
		return a.String(), err == nil
	}
	return "", false
}
