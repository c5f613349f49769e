package probe

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/periscope-oss/periscope/internal/cert"
)

// Handshake does one TLS handshake with addr:port, naming serverName (SNI;
// none for an address), and returns the leaf certificate the server
// presented. The certificate is read, not trusted: a monitor reports what
// is served, expired or self-signed included.
func (p *Prober) Handshake(ctx context.Context, addr netip.Addr, port int, serverName string) (cert.Certificate, error) {
	c, err := p.connect(ctx, addr, port)
	if err != nil {
		return cert.Certificate{}, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, p.timeout())
	defer cancel()
	tc := tls.Client(c, &tls.Config{ServerName: sni(serverName), InsecureSkipVerify: true}) //nolint:gosec // observing, not trusting
	if err := tc.HandshakeContext(ctx); err != nil {
		return cert.Certificate{}, fmt.Errorf("tls handshake with %s:%d: %w", addr, port, err)
	}
	chain := tc.ConnectionState().PeerCertificates
	if len(chain) == 0 {
		return cert.Certificate{}, fmt.Errorf("tls handshake with %s:%d: no certificate", addr, port)
	}
	return cert.Parse(chain[0].Raw)
}

func sni(name string) string {
	if _, err := netip.ParseAddr(name); err == nil {
		return ""
	}
	return name
}

// Page is what one HTTP GET saw.
type Page struct {
	Status int
	Title  string
	Server string
	// Tech are technologies named by the response headers.
	Tech []string
}

// Get sends one GET / to addr:port with Host hostName, over TLS when
// useTLS, on one connection, following no redirect, and reads at most
// BodyLimit bytes of the body for its title.
func (p *Prober) Get(ctx context.Context, addr netip.Addr, port int, hostName string, useTLS bool) (Page, error) {
	c, err := p.connect(ctx, addr, port)
	if err != nil {
		return Page{}, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, p.timeout())
	defer cancel()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	var conn net.Conn = c
	scheme := "http"
	if useTLS {
		tc := tls.Client(c, &tls.Config{ServerName: sni(hostName), InsecureSkipVerify: true, //nolint:gosec // observing, not trusting
			NextProtos: []string{"http/1.1"}})
		if err := tc.HandshakeContext(ctx); err != nil {
			return Page{}, fmt.Errorf("tls handshake with %s:%d: %w", addr, port, err)
		}
		conn, scheme = tc, "https"
	}
	authority := hostName
	if (useTLS && port != 443) || (!useTLS && port != 80) {
		authority = net.JoinHostPort(hostName, strconv.Itoa(port))
	} else if strings.Contains(hostName, ":") {
		authority = "[" + hostName + "]"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+authority+"/", nil)
	if err != nil {
		return Page{}, fmt.Errorf("build request for %s: %w", hostName, err)
	}
	req.Header.Set("User-Agent", "Periscope-Monitor/1 (+asset owner's monitoring)")
	req.Header.Set("Connection", "close")
	if err := req.Write(conn); err != nil {
		return Page{}, fmt.Errorf("send GET to %s:%d: %w", addr, port, err)
	}
	limit := p.BodyLimit
	if limit <= 0 {
		limit = DefaultBodyLimit
	}
	// The whole response read is bounded: headers included (ReadResponse
	// alone would read header lines without end).
	resp, err := http.ReadResponse(bufio.NewReader(io.LimitReader(conn, maxHeaderBytes+limit)), req)
	if err != nil {
		return Page{}, fmt.Errorf("read response of %s:%d: %w", addr, port, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, limit)) // a cut body still has its title
	pg := Page{Status: resp.StatusCode, Title: title(body), Server: clean(resp.Header.Get("Server"), 128)}
	pg.Tech = technologies(resp.Header)
	return pg, nil
}

// maxHeaderBytes bounds the status line and headers of a response.
const maxHeaderBytes = 64 << 10

var titleRE = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)

// title is the page's <title>, whitespace collapsed, at most 256 runes.
func title(body []byte) string {
	m := titleRE.FindSubmatch(body)
	if m == nil {
		return ""
	}
	return clean(strings.Join(strings.Fields(strings.ToValidUTF8(string(m[1]), "")), " "), 256)
}

// clean makes outside text safe to store: valid UTF-8, no NUL or other
// control characters, at most n runes.
func clean(s string, n int) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if utf8.RuneCountInString(s) > n {
		s = string([]rune(s)[:n])
	}
	return strings.TrimSpace(s)
}

// technologies names what the headers reveal: the server and framework
// headers as sent, and well-known session cookies.
func technologies(h http.Header) []string {
	var out []string
	for _, k := range []string{"Server", "X-Powered-By", "X-AspNet-Version", "X-AspNetMvc-Version", "X-Generator", "X-Drupal-Cache", "X-Varnish", "Via"} {
		v := clean(h.Get(k), 64)
		if v == "" {
			continue
		}
		switch k {
		case "X-AspNet-Version", "X-AspNetMvc-Version":
			v = "ASP.NET:" + v
		case "X-Drupal-Cache":
			v = "Drupal"
		case "X-Varnish":
			v = "Varnish"
		case "Via":
			if !strings.Contains(strings.ToLower(v), "varnish") {
				continue
			}
			v = "Varnish"
		}
		out = append(out, v)
	}
	for _, c := range h.Values("Set-Cookie") {
		name, _, _ := strings.Cut(c, "=")
		switch {
		case name == "PHPSESSID":
			out = append(out, "PHP")
		case name == "JSESSIONID":
			out = append(out, "Java")
		case name == "ASP.NET_SessionId":
			out = append(out, "ASP.NET")
		case name == "laravel_session":
			out = append(out, "Laravel")
		case strings.HasPrefix(name, "wordpress_") || strings.HasPrefix(name, "wp-settings"):
			out = append(out, "WordPress")
		case name == "csrftoken" || name == "django_language":
			out = append(out, "Django")
		}
	}
	if h.Get("Strict-Transport-Security") != "" {
		out = append(out, "HSTS")
	}
	slices.Sort(out)
	return slices.Compact(out)
}
