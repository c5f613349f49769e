package whois

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/textenc"
)

// MaxReply caps how much of one server's answer is read.
const MaxReply = 64 << 10

// DefaultTimeout bounds a whole lookup, referral included.
const DefaultTimeout = 10 * time.Second

// DialFunc opens a connection; in Periscope it is (*egress.Dialer).DialContext.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Client queries WHOIS servers.
type Client struct {
	Dial    DialFunc
	Servers Servers
	Timeout time.Duration
	// Wait, when set, is called before each connection to a server with its
	// host:port, so the caller can rate-limit per upstream host.
	Wait func(ctx context.Context, server string) error
}

// Answer is one lookup's result: the final server's text and, when a
// referral was followed, the registry's text too.
type Answer struct {
	Server       string // the server whose text Raw is
	Raw          string
	Registry     string // the first server asked, when a referral was followed
	RegistryRaw  string
	Truncated    bool
	ReferralFail error // a referral that could not be followed; Raw is the registry's
}

// ErrLimited is returned (as a *LimitedError) when a server answers with a
// rate-limit text.
var ErrLimited = errors.New("whois: server rate limit")

// LimitedError names the server that refused.
type LimitedError struct{ Server string }

func (e *LimitedError) Error() string { return "whois: server rate limit: " + e.Server }

// Is makes errors.Is(err, ErrLimited) true.
func (e *LimitedError) Is(target error) bool { return target == ErrLimited }

// Lookup asks the server for domain's TLD, follows at most one referral
// (Registrar WHOIS Server:, refer:, whois:) and returns the answer.
func (c *Client) Lookup(ctx context.Context, domain, tld string) (Answer, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	server, known := c.Servers.Server(tld)
	if !known {
		// IANA answers for the TLD and names its server; that counts as the
		// one referral hop.
		raw, _, err := c.query(ctx, server, tld)
		if err != nil {
			return Answer{}, err
		}
		next := Referral(raw)
		if next == "" {
			return Answer{}, fmt.Errorf("whois: no server known for .%s", tld)
		}
		server = next
	}
	raw, trunc, err := c.query(ctx, server, domain)
	if err != nil {
		return Answer{}, err
	}
	if Limited(raw) {
		return Answer{}, &LimitedError{Server: server}
	}
	ans := Answer{Server: server, Raw: raw, Truncated: trunc}
	next := Referral(raw)
	if !known || next == "" || strings.EqualFold(next, server) {
		return ans, nil
	}
	raw2, trunc2, err := c.query(ctx, next, domain)
	if err != nil || Limited(raw2) || strings.TrimSpace(raw2) == "" {
		// The registry's answer still stands; the registrar is optional.
		if err == nil {
			err = &LimitedError{Server: next}
		}
		ans.ReferralFail = err
		return ans, nil
	}
	return Answer{Server: next, Raw: raw2, Truncated: trunc2, Registry: server, RegistryRaw: raw}, nil
}

// query sends one question and reads at most MaxReply bytes of answer.
func (c *Client) query(ctx context.Context, server, q string) (string, bool, error) {
	if c.Wait != nil {
		if err := c.Wait(ctx, server); err != nil {
			return "", false, err
		}
	}
	conn, err := c.Dial(ctx, "tcp", server)
	if err != nil {
		return "", false, fmt.Errorf("whois %s: %w", server, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	// Verisign's thin registries want "domain " to avoid matching hosts.
	question := q
	if host, _, _ := net.SplitHostPort(server); strings.EqualFold(host, "whois.verisign-grs.com") {
		question = "domain " + q
	}
	if _, err := io.WriteString(conn, question+"\r\n"); err != nil {
		return "", false, fmt.Errorf("whois %s: send: %w", server, err)
	}
	b, err := io.ReadAll(io.LimitReader(conn, MaxReply+1))
	if err != nil && len(b) == 0 {
		return "", false, fmt.Errorf("whois %s: read: %w", server, err)
	}
	trunc := len(b) > MaxReply
	if trunc {
		b = b[:MaxReply]
	}
	return textenc.String(string(b)), trunc, nil
}

// Referral returns the host:port an answer points to, or "".
func Referral(raw string) string {
	for _, line := range strings.Split(raw, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "registrar whois server", "refer", "whois", "whois server", "referralserver":
			v = strings.TrimSpace(v)
			v = strings.TrimPrefix(v, "whois://")
			v = strings.TrimPrefix(v, "rwhois://")
			if v == "" || strings.ContainsAny(v, " /") || strings.Contains(v, "://") || !strings.Contains(v, ".") {
				continue
			}
			if addr, err := hostPort(strings.ToLower(v)); err == nil {
				return addr
			}
		}
	}
	return ""
}

var limitTexts = []string{
	"limit exceeded", "query rate", "too many requests", "exceeded the maximum",
	"queries exceeded", "rate limit", "quota exceeded", "try again later",
	"access denied", "connection refused; access control limit",
}

// Limited reports whether an answer is a rate-limit refusal rather than
// data: it says so and carries no record (legal notices under real records
// mention rate limits too).
func Limited(raw string) bool {
	low := strings.ToLower(raw)
	said := false
	for _, t := range limitTexts {
		if strings.Contains(low, t) {
			said = true
			break
		}
	}
	if !said {
		return false
	}
	rec := Parse(raw)
	return rec.Registrar == "" && len(rec.NameServers) == 0 && rec.CreatedAt.IsZero() && rec.ExpiresAt.IsZero()
}
