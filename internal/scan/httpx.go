package scan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/host"
)

// httpxRecord is the part of an httpx -json line that the index uses.
type httpxRecord struct {
	Timestamp  string   `json:"timestamp"`
	Port       flexInt  `json:"port"`
	URL        string   `json:"url"`
	Input      string   `json:"input"`
	Host       string   `json:"host"`
	HostIP     string   `json:"host_ip"`
	Scheme     string   `json:"scheme"`
	Title      string   `json:"title"`
	Webserver  string   `json:"webserver"`
	StatusCode int      `json:"status_code"`
	A          []string `json:"a"`
	AAAA       []string `json:"aaaa"`
	CNAME      []string `json:"cname"`
	Tech       []string `json:"tech"`
	CDN        bool     `json:"cdn"`
	CDNName    string   `json:"cdn_name"`
	CDNType    string   `json:"cdn_type"`
	Failed     bool     `json:"failed"`
	// Body is the response body (httpx -include-response), read for the
	// page's facts (pageFacts).
	Body string `json:"body"`
	TLS  *struct {
		SubjectCN       string   `json:"subject_cn"`
		SubjectOrg      []string `json:"subject_org"`
		SubjectAN       []string `json:"subject_an"`
		IssuerCN        string   `json:"issuer_cn"`
		IssuerOrg       []string `json:"issuer_org"`
		NotBefore       string   `json:"not_before"`
		NotAfter        string   `json:"not_after"`
		Serial          string   `json:"serial"`
		FingerprintHash struct {
			MD5    string `json:"md5"`
			SHA1   string `json:"sha1"`
			SHA256 string `json:"sha256"`
		} `json:"fingerprint_hash"`
	} `json:"tls"`
}

// ParseHTTPX parses ProjectDiscovery httpx -json output: one JSON object per
// line, one observation per line. The host is the URL's host name (or the
// input's), its IP host_ip, host or the first A record; the probed port
// becomes a service named by the scheme with the web server as product;
// tech becomes web, the TLS certificate cert_object, cdn_name the CDN (or
// the cloud provider when cdn_type is "cloud"). timestamp sets first and
// last seen. A body (-include-response) gives the page's site name,
// description, logo and social links as extracted artefacts (pageFacts).
func ParseHTTPX(r io.Reader, emit func(host.Host) error) (Stats, error) {
	return parseLines(HTTPX, r, emit, appending(httpxLine))
}

func httpxLine(line []byte) ([]host.Host, error) {
	var rec httpxRecord
	if err := json.Unmarshal(line, &rec); err != nil {
		return nil, errors.New(jsonReason(err))
	}
	ip := rec.HostIP
	if ip == "" && net.ParseIP(rec.Host) != nil {
		ip = rec.Host
	}
	if ip == "" && len(rec.A) > 0 {
		ip = rec.A[0]
	}
	if ip == "" && len(rec.AAAA) > 0 {
		ip = rec.AAAA[0]
	}
	u, _ := url.Parse(rec.URL)
	var name string
	for _, cand := range []string{hostOf(u), inputHost(rec.Input), rec.Host} {
		if n, err := host.Normalize(cand); err == nil && !n.IP {
			name = cand
			break
		}
	}
	if name == "" && ip == "" {
		name = hostOf(u)
		if name == "" {
			name = inputHost(rec.Input)
		}
	}
	h, err := newHost(name, ip)
	if err != nil {
		return nil, err
	}
	seen, err := parseTime(rec.Timestamp)
	if err != nil {
		return nil, fmt.Errorf("timestamp: %w", err)
	}
	h.FirstSeen, h.LastSeen = seen, seen
	for _, a := range rec.A {
		addIP(&h, a)
	}
	for _, a := range rec.AAAA {
		addIP(&h, a)
	}
	h.DNS.CNAME = lowerAll(rec.CNAME)
	if rec.Failed {
		return []host.Host{h}, nil
	}

	port := int(rec.Port)
	if port == 0 && u != nil {
		port, _ = strconv.Atoi(u.Port())
	}
	scheme := strings.ToLower(rec.Scheme)
	if scheme == "" && u != nil {
		scheme = strings.ToLower(u.Scheme)
	}
	if port == 0 {
		switch scheme {
		case "http":
			port = 80
		case "https":
			port = 443
		}
	}
	if port < 0 || port > 65535 {
		return nil, fmt.Errorf("port %d out of range", port)
	}
	if port > 0 {
		h.NetworkServices = []host.Service{{
			Port: port, Protocol: "tcp", Service: scheme, Product: rec.Webserver,
			FirstSeen: seen, LastSeen: seen,
		}}
	}
	h.HTTPStatusCode = rec.StatusCode
	h.HTTPTitle = rec.Title
	if rec.Body != "" {
		if facts := pageFacts(rec.Body, u); len(facts) > 0 {
			h.Extracted = facts
		}
	}
	h.Web = rec.Tech
	if rec.Webserver != "" {
		h.Products = []string{rec.Webserver}
	}
	switch {
	case rec.CDNName != "" && strings.EqualFold(rec.CDNType, "cloud"):
		h.Cloud.Provider = strings.ToLower(rec.CDNName)
	case rec.CDNName != "":
		h.CDN = strings.ToLower(rec.CDNName)
	case rec.CDN:
		h.IsCDN = true
	}
	if t := rec.TLS; t != nil {
		h.Cert = host.Cert{
			SubjectCommonName: t.SubjectCN,
			SubjectOrg:        strings.Join(t.SubjectOrg, ", "),
			IssuerCommonName:  t.IssuerCN,
			IssuerOrg:         strings.Join(t.IssuerOrg, ", "),
			DNSNames:          lowerAll(t.SubjectAN),
			SerialNumber:      t.Serial,
			SHA256Fingerprint: strings.ToLower(t.FingerprintHash.SHA256),
			SHA1Fingerprint:   strings.ToLower(t.FingerprintHash.SHA1),
			MD5Fingerprint:    strings.ToLower(t.FingerprintHash.MD5),
		}
		if h.Cert.NotBefore, err = parseTime(t.NotBefore); err != nil {
			return nil, fmt.Errorf("tls.not_before: %w", err)
		}
		if h.Cert.NotAfter, err = parseTime(t.NotAfter); err != nil {
			return nil, fmt.Errorf("tls.not_after: %w", err)
		}
	}
	return []host.Host{h}, nil
}

func hostOf(u *url.URL) string {
	if u == nil {
		return ""
	}
	return u.Hostname()
}

// inputHost extracts the host from an httpx input: a bare name, host:port,
// or a URL.
func inputHost(in string) string {
	if strings.Contains(in, "://") {
		u, err := url.Parse(in)
		if err != nil {
			return ""
		}
		return u.Hostname()
	}
	if h, _, err := net.SplitHostPort(in); err == nil {
		return h
	}
	return in
}

func lowerAll(s []string) []string {
	out := make([]string, 0, len(s))
	for _, v := range s {
		out = append(out, strings.TrimSuffix(strings.ToLower(v), "."))
	}
	return out
}

// parseTime reads an RFC 3339 time or a Unix epoch (seconds, as digits) and
// returns epoch seconds; "" is 0 (unknown).
func parseTime(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("%q is neither RFC 3339 nor epoch seconds", truncate(s, 40))
	}
	if t.IsZero() || t.Unix() < 0 {
		return 0, nil
	}
	return t.Unix(), nil
}

// flexInt is an integer written as a JSON number or a string of digits, as
// scanners do for ports and timestamps.
type flexInt int64

func (f *flexInt) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	if len(b) > 1 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if s == "" {
			*f = 0
			return nil
		}
		b = []byte(s)
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		// Epoch times sometimes come as floats ("1652173341.123").
		fl, ferr := strconv.ParseFloat(string(b), 64)
		if ferr != nil || fl < -1e18 || fl > 1e18 {
			return fmt.Errorf("%q is not an integer", truncate(string(b), 40))
		}
		n = int64(fl)
	}
	*f = flexInt(n)
	return nil
}
