// Package probe holds active monitoring's probes: DNS questions to the
// configured resolvers (github.com/miekg/dns), TCP connects, one TLS
// handshake and one HTTP GET. Every connection to a target goes through an
// injected dial function (the SSRF-safe dialer in production) after a
// pacer grants it and an address policy allows its address; the probes know
// nothing of organizations or storage.
package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"
)

// DialFunc opens a connection, like (*net.Dialer).DialContext.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// AddressPolicy decides which addresses may be probed.
type AddressPolicy interface {
	Allowed(addr netip.Addr) bool
}

// Pacer grants connections: Wait blocks until one may be opened (or ctx
// ends). A nil Pacer grants at once.
type Pacer interface {
	Wait(ctx context.Context) error
}

// DefaultPorts are the TCP ports tried on every address: the services an
// organization most often exposes by accident or on purpose.
var DefaultPorts = []int{21, 22, 25, 80, 110, 143, 443, 465, 587, 993, 995, 3306, 3389, 5432, 8080, 8443}

// TLSPorts are the ports where a service speaks TLS from the first byte.
var TLSPorts = map[int]bool{443: true, 465: true, 636: true, 853: true, 993: true, 995: true, 8443: true, 9443: true}

// WebPorts are the ports that get one HTTP GET, and whether over TLS.
var WebPorts = map[int]bool{80: false, 443: true, 8000: false, 8008: false, 8080: false, 8443: true, 8888: false, 9443: true}

// Prober runs probes. Its zero value is not usable: Dial, Policy and (for
// DNS) Resolver must be set.
type Prober struct {
	Resolver Resolver
	Dial     DialFunc
	Policy   AddressPolicy
	// Pace, when set, is waited on before every connection.
	Pace Pacer
	// Timeout bounds each probe: one DNS question, one connect, one
	// handshake, one HTTP exchange (DefaultTimeout when 0).
	Timeout time.Duration
	// BodyLimit caps the bytes of an HTTP body read (DefaultBodyLimit
	// when 0).
	BodyLimit int64
}

// DefaultTimeout bounds one probe.
const DefaultTimeout = 5 * time.Second

// DefaultBodyLimit is how much of an HTTP body is read for its title.
const DefaultBodyLimit = 64 << 10

// ErrNotAllowed is returned for an address the policy refuses.
var ErrNotAllowed = errors.New("address not allowed for probing")

func (p *Prober) timeout() time.Duration {
	if p.Timeout > 0 {
		return p.Timeout
	}
	return DefaultTimeout
}

// connect opens a TCP connection to addr:port once the policy allows addr
// and the pacer grants a connection.
func (p *Prober) connect(ctx context.Context, addr netip.Addr, port int) (net.Conn, error) {
	if !p.Policy.Allowed(addr) {
		return nil, ErrNotAllowed
	}
	if p.Pace != nil {
		if err := p.Pace.Wait(ctx); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout())
	defer cancel()
	c, err := p.Dial(ctx, "tcp", net.JoinHostPort(addr.String(), strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", net.JoinHostPort(addr.String(), strconv.Itoa(port)), err)
	}
	return c, nil
}

// Open reports whether a TCP connection to addr:port is accepted. The
// connection is closed at once; nothing is sent.
func (p *Prober) Open(ctx context.Context, addr netip.Addr, port int) (bool, error) {
	c, err := p.connect(ctx, addr, port)
	if err != nil {
		if errors.Is(err, ErrNotAllowed) || ctx.Err() != nil {
			return false, err
		}
		return false, nil // refused, filtered or timed out: closed
	}
	c.Close()
	return true, nil
}
