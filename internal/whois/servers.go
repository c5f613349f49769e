// Package whois speaks the port-43 WHOIS protocol (RFC 3912) and parses the
// free-text answers registries and registrars send.
package whois

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
)

//go:embed servers.txt
var bundledServers string

// IANAServer is asked for TLDs the table does not know; its "whois:" line
// names the registry's server.
const IANAServer = "whois.iana.org:43"

// Servers maps a TLD (lower case, A-label) to its WHOIS server host:port.
type Servers map[string]string

// BundledServers returns the table built into the binary.
func BundledServers() Servers {
	s, err := ParseServers(strings.NewReader(bundledServers))
	if err != nil {
		panic(fmt.Sprintf("whois: bundled servers.txt: %v", err)) // a build defect, caught by tests
	}
	return s
}

// LoadServers reads a `tld host[:port]` file (the --whois-servers flag) and
// lays it over the bundled table.
func LoadServers(path string) (Servers, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("whois servers: %w", err)
	}
	defer f.Close()
	over, err := ParseServers(f)
	if err != nil {
		return nil, fmt.Errorf("whois servers %s: %w", path, err)
	}
	s := BundledServers()
	for k, v := range over {
		s[k] = v
	}
	return s, nil
}

// ParseServers reads `tld host[:port]` lines; blank lines and # comments are
// skipped. A host without a port gets 43.
func ParseServers(r io.Reader) (Servers, error) {
	s := Servers{}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("line %d: want \"tld host[:port]\", got %q", n, line)
		}
		tld := strings.ToLower(strings.Trim(f[0], "."))
		addr, err := hostPort(f[1])
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		s[tld] = addr
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

// hostPort adds the WHOIS port to a bare host name.
func hostPort(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" || strings.ContainsAny(v, "/ \t") {
		return "", fmt.Errorf("bad whois server %q", v)
	}
	if _, _, err := net.SplitHostPort(v); err == nil {
		return v, nil
	}
	return net.JoinHostPort(strings.Trim(v, "[]"), "43"), nil
}

// Server returns the server for the TLD of domain, or IANAServer.
func (s Servers) Server(tld string) (addr string, known bool) {
	if a, ok := s[strings.ToLower(tld)]; ok {
		return a, true
	}
	return IANAServer, false
}
