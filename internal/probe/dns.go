package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/miekg/dns"
	"github.com/periscope-oss/periscope/internal/host"
)

// Resolver answers one DNS question. A name that does not exist or has no
// record of the type gives no records and no error; an error means no
// answer could be had (timeout, SERVFAIL from every server).
type Resolver interface {
	Lookup(ctx context.Context, name string, qtype uint16) ([]dns.RR, error)
}

// DNSResolver asks its servers in turn, over UDP with a retry over TCP
// when the answer is truncated. Servers are "host:port" (port 53 assumed
// when missing); they are the operator's resolvers, not probe targets, so
// they are reached directly rather than through the probe dialer.
type DNSResolver struct {
	Servers []string
	Timeout time.Duration
}

// NewDNSResolver returns a resolver asking servers.
func NewDNSResolver(servers []string, timeout time.Duration) *DNSResolver {
	out := make([]string, 0, len(servers))
	for _, s := range servers {
		if _, _, err := net.SplitHostPort(s); err != nil {
			s = net.JoinHostPort(s, "53")
		}
		out = append(out, s)
	}
	return &DNSResolver{Servers: out, Timeout: timeout}
}

// Lookup implements Resolver.
func (r *DNSResolver) Lookup(ctx context.Context, name string, qtype uint16) ([]dns.RR, error) {
	if len(r.Servers) == 0 {
		return nil, errors.New("no DNS resolver configured")
	}
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.SetEdns0(4096, false)
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	var last error
	for _, srv := range r.Servers {
		for _, network := range []string{"udp", "tcp"} {
			c := &dns.Client{Net: network, Timeout: timeout}
			qctx, cancel := context.WithTimeout(ctx, timeout)
			in, _, err := c.ExchangeContext(qctx, m, srv)
			cancel()
			if err != nil {
				last = fmt.Errorf("ask %s for %s %s: %w", srv, dns.TypeToString[qtype], name, err)
				break // next server
			}
			if in.Truncated && network == "udp" {
				continue
			}
			switch in.Rcode {
			case dns.RcodeSuccess:
				return in.Answer, nil
			case dns.RcodeNameError:
				return nil, nil
			}
			last = fmt.Errorf("ask %s for %s %s: %s", srv, dns.TypeToString[qtype], name, dns.RcodeToString[in.Rcode])
			break
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return nil, last
}

// Records are the DNS facts of one name.
type Records struct {
	DNS host.DNS
	// Addresses are the A and AAAA addresses, in answer order.
	Addresses []netip.Addr
	// Failed counts the questions that got no answer.
	Failed int
}

// Exists reports whether the name has any record.
func (r Records) Exists() bool { return !r.DNS.Empty() }

// lookupTypes are the questions asked of every name.
var lookupTypes = []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeCNAME, dns.TypeMX, dns.TypeNS, dns.TypeTXT}

// Resolve asks the A, AAAA, CNAME, MX, NS and TXT questions of name. Only
// records owned by name or by the CNAME chain from it are kept.
func (p *Prober) Resolve(ctx context.Context, name string) (Records, error) {
	var rec Records
	seen := map[netip.Addr]bool{}
	for _, qt := range lookupTypes {
		rrs, err := p.Resolver.Lookup(ctx, name, qt)
		if err != nil {
			if ctx.Err() != nil {
				return rec, ctx.Err()
			}
			rec.Failed++
			continue
		}
		owners := map[string]bool{strings.ToLower(dns.Fqdn(name)): true}
		for _, rr := range rrs {
			if !owners[strings.ToLower(rr.Header().Name)] {
				continue // not about name: an answer is outside input
			}
			if c, ok := rr.(*dns.CNAME); ok {
				owners[strings.ToLower(c.Target)] = true
			}
			switch v := rr.(type) {
			case *dns.A:
				if a, ok := netip.AddrFromSlice(v.A.To4()); ok && !seen[a] {
					seen[a] = true
					rec.Addresses = append(rec.Addresses, a)
					rec.DNS.A = append(rec.DNS.A, a.String())
				}
			case *dns.AAAA:
				if a, ok := netip.AddrFromSlice(v.AAAA.To16()); ok && !seen[a] {
					seen[a] = true
					rec.Addresses = append(rec.Addresses, a)
					rec.DNS.AAAA = append(rec.DNS.AAAA, a.String())
				}
			case *dns.CNAME:
				rec.DNS.CNAME = appendName(rec.DNS.CNAME, v.Target)
			case *dns.MX:
				rec.DNS.MX = appendName(rec.DNS.MX, v.Mx)
			case *dns.NS:
				rec.DNS.NS = appendName(rec.DNS.NS, v.Ns)
			case *dns.TXT:
				if t := strings.Join(v.Txt, ""); validText(t) {
					rec.DNS.TXT = append(rec.DNS.TXT, t)
				}
			}
		}
	}
	return rec, nil
}

// appendName adds a DNS name from an answer, lower case without the root
// dot, when it is a valid host name (an answer is outside input).
func appendName(list []string, name string) []string {
	n, err := host.Normalize(strings.TrimSuffix(name, "."))
	if err != nil {
		return list
	}
	return append(list, n.Host)
}

// validText keeps TXT strings that are valid UTF-8 without NUL, bounded.
func validText(s string) bool {
	return len(s) <= 4096 && strings.ToValidUTF8(s, "\uFFFD") == s && !strings.ContainsRune(s, 0)
}

// TXT returns the TXT strings at name (each record's strings joined).
func (p *Prober) TXT(ctx context.Context, name string) ([]string, error) {
	rrs, err := p.Resolver.Lookup(ctx, name, dns.TypeTXT)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, rr := range rrs {
		if t, ok := rr.(*dns.TXT); ok && strings.EqualFold(strings.TrimSuffix(t.Hdr.Name, "."), name) {
			out = append(out, strings.Join(t.Txt, ""))
		}
	}
	return out, nil
}
