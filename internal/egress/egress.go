// Package egress is the one way Periscope opens a connection on a user's behalf
// (WHOIS, RDAP, webhooks, probes). It resolves the name itself, checks every
// resolved address against the non-public ranges, and dials the checked IP, so
// a DNS answer that changes between check and connect (rebinding) cannot steer
// a connection into the operator's network. A net.Dialer Control hook checks
// the final socket address once more before connect.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// ErrRefused is returned (wrapped) when a destination is not allowed.
var ErrRefused = errors.New("egress: destination refused")

// DefaultPorts are the ports reached without AllowPrivate: WHOIS and HTTPS.
// Port 80 is only added by callers whose protocol needs it.
var DefaultPorts = []int{43, 443}

// Resolver looks names up; *net.Resolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configure a Dialer.
type Options struct {
	// AllowPrivate lifts every address and port check. Labs and tests only:
	// it is the --allow-private-targets setting.
	AllowPrivate bool
	// Ports allowed when AllowPrivate is false; nil means DefaultPorts.
	Ports []int
	// Resolver; nil means net.DefaultResolver.
	Resolver Resolver
	// Timeout for one connect attempt; zero means 10 s.
	Timeout time.Duration
}

// Dialer opens checked connections. The zero value is not usable; call New.
type Dialer struct {
	allowPrivate bool
	ports        []int
	resolver     Resolver
	timeout      time.Duration
}

// New returns a Dialer for opts.
func New(opts Options) *Dialer {
	d := &Dialer{allowPrivate: opts.AllowPrivate, ports: opts.Ports, resolver: opts.Resolver, timeout: opts.Timeout}
	if d.ports == nil {
		d.ports = DefaultPorts
	}
	if d.resolver == nil {
		d.resolver = net.DefaultResolver
	}
	if d.timeout <= 0 {
		d.timeout = 10 * time.Second
	}
	return d
}

// AllowPrivate reports whether the dialer lets connections reach private space.
func (d *Dialer) AllowPrivate() bool { return d.allowPrivate }

// DialContext resolves addr's host, refuses non-public addresses and
// disallowed ports, and connects to the first allowed address that answers.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, fmt.Errorf("%w: network %q", ErrRefused, network)
	}
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("egress: address %q: %w", addr, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port <= 0 || port > 65535 {
		return nil, fmt.Errorf("%w: port %q", ErrRefused, portText)
	}
	ips, err := d.resolve(ctx, network, host)
	if err != nil {
		return nil, err
	}
	nd := &net.Dialer{Timeout: d.timeout, Control: d.control}
	var firstErr error
	for _, ip := range ips {
		if err := d.Check(ip); err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("egress: %s resolves to %s: %w", host, ip, err)
			}
			continue
		}
		// The address first, so that a loopback URL on an odd port is
		// refused for being loopback.
		if !d.allowPrivate && !slices.Contains(d.ports, port) {
			return nil, fmt.Errorf("%w: port %d not allowed", ErrRefused, port)
		}
		conn, err := nd.DialContext(ctx, network, netip.AddrPortFrom(ip, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		if firstErr == nil || errors.Is(firstErr, ErrRefused) {
			firstErr = err
		}
	}
	if firstErr == nil {
		firstErr = fmt.Errorf("egress: %s: no addresses", host)
	}
	return nil, firstErr
}

func (d *Dialer) resolve(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	ipNet := "ip"
	switch network {
	case "tcp4":
		ipNet = "ip4"
	case "tcp6":
		ipNet = "ip6"
	}
	ips, err := d.resolver.LookupNetIP(ctx, ipNet, host)
	if err != nil {
		return nil, fmt.Errorf("egress: resolve %q: %w", host, err)
	}
	return ips, nil
}

// control runs on the socket just before connect: the last word on the
// address actually used.
func (d *Dialer) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: address %q", ErrRefused, address)
	}
	if err := d.Check(ap.Addr()); err != nil {
		return err
	}
	if !d.allowPrivate && !slices.Contains(d.ports, int(ap.Port())) {
		return fmt.Errorf("%w: port %d not allowed", ErrRefused, ap.Port())
	}
	return nil
}

// Check returns nil when ip may be reached by this dialer.
func (d *Dialer) Check(ip netip.Addr) error {
	if d.allowPrivate {
		return nil
	}
	if reason := NonPublic(ip); reason != "" {
		return fmt.Errorf("%w: %s is %s", ErrRefused, ip, reason)
	}
	return nil
}

type prefixReason struct {
	p      netip.Prefix
	reason string
}

// blocked lists the special-purpose ranges (IANA IPv4/IPv6 Special-Purpose
// Address Registries, RFC 6890 and successors) that are never a public host.
var blocked = func() []prefixReason {
	list := []struct{ p, r string }{
		{"0.0.0.0/8", "this-network"},
		{"10.0.0.0/8", "private"},
		{"100.64.0.0/10", "shared address space (CGNAT)"},
		{"127.0.0.0/8", "loopback"},
		{"169.254.0.0/16", "link-local (cloud metadata)"},
		{"172.16.0.0/12", "private"},
		{"192.0.0.0/24", "IETF protocol assignments"},
		{"192.0.2.0/24", "documentation"},
		{"192.31.196.0/24", "AS112"},
		{"192.52.193.0/24", "AMT"},
		{"192.88.99.0/24", "6to4 relay anycast"},
		{"192.168.0.0/16", "private"},
		{"192.175.48.0/24", "AS112"},
		{"198.18.0.0/15", "benchmarking"},
		{"198.51.100.0/24", "documentation"},
		{"203.0.113.0/24", "documentation"},
		{"224.0.0.0/4", "multicast"},
		{"240.0.0.0/4", "reserved"},
		{"::/128", "unspecified"},
		{"::1/128", "loopback"},
		{"64:ff9b:1::/48", "local-use NAT64"},
		{"100::/64", "discard-only"},
		{"2001::/23", "IETF protocol assignments"},
		{"2001:db8::/32", "documentation"},
		{"2002::/16", "6to4"},
		{"3fff::/20", "documentation"},
		{"5f00::/16", "SRv6 SIDs"},
		{"fc00::/7", "unique local"},
		{"fe80::/10", "link-local"},
		{"fec0::/10", "site-local"},
		{"ff00::/8", "multicast"},
	}
	out := make([]prefixReason, len(list))
	for i, e := range list {
		out[i] = prefixReason{netip.MustParsePrefix(e.p), e.r}
	}
	return out
}()

var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// NonPublic returns why ip is not a public unicast address, or "" when it is.
// IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible and NAT64 (64:ff9b::/96)
// addresses are judged by the IPv4 address they carry.
func NonPublic(ip netip.Addr) string {
	if !ip.IsValid() {
		return "invalid"
	}
	ip = ip.WithZone("")
	if ip.Is4In6() {
		ip = ip.Unmap()
	} else if ip.Is6() && nat64.Contains(ip) {
		b := ip.As16()
		ip = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	} else if ip.Is6() {
		b := ip.As16()
		// IPv4-compatible ::a.b.c.d (deprecated; some stacks still route it).
		if [12]byte(b[:12]) == [12]byte{} && !(b[12] == 0 && b[13] == 0 && b[14] == 0 && b[15] <= 1) {
			ip = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		}
	}
	if ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return "broadcast"
	}
	for _, b := range blocked {
		if b.p.Contains(ip) {
			return b.reason
		}
	}
	if ip.Is6() && !netip.MustParsePrefix("2000::/3").Contains(ip) {
		// Only 2000::/3 is allocated for global unicast.
		return "reserved"
	}
	return ""
}

// HTTPClient returns a client whose every connection goes through d, which
// refuses redirects that change host (or leave https unless AllowPrivate)
// and stops after 3 redirects.
func (d *Dialer) HTTPClient(timeout time.Duration) *http.Client {
	tr := &http.Transport{
		DialContext:           d.DialContext,
		Proxy:                 nil, // a proxy would bypass the address check
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          32,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return fmt.Errorf("%w: too many redirects", ErrRefused)
			}
			if req.URL.Host != via[0].URL.Host {
				return fmt.Errorf("%w: redirect from %s to another host %s", ErrRefused, via[0].URL.Host, req.URL.Host)
			}
			return nil
		},
	}
}
