package whois

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/egress"
)

// fakeServer answers port-43 questions from a map, like a registry would.
func fakeServer(t *testing.T, answers func(q string) string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				q, _ := bufio.NewReader(c).ReadString('\n')
				io.WriteString(c, answers(strings.TrimSpace(q)))
			}()
		}
	}()
	return ln.Addr().String()
}

func TestClientFollowsOneReferral(t *testing.T) {
	registrarRaw, _ := os.ReadFile("testdata/found/com_google.com.txt")
	var asked []string
	registrar := fakeServer(t, func(q string) string { asked = append(asked, "registrar:"+q); return string(registrarRaw) })
	registry := fakeServer(t, func(q string) string {
		asked = append(asked, "registry:"+q)
		return "Domain Name: GOOGLE.COM\nRegistrar WHOIS Server: " + registrar + "\nName Server: NS1.GOOGLE.COM\n"
	})
	c := &Client{Dial: egress.New(egress.Options{AllowPrivate: true}).DialContext, Servers: Servers{"com": registry}}
	ans, err := c.Lookup(context.Background(), "google.com", "com")
	if err != nil {
		t.Fatal(err)
	}
	if ans.Server != registrar || ans.Registry != registry || !strings.Contains(ans.RegistryRaw, "GOOGLE.COM") {
		t.Fatalf("answer servers %q / %q", ans.Server, ans.Registry)
	}
	if rec := Parse(ans.Raw); rec.Registrar != "MarkMonitor, Inc." {
		t.Fatalf("registrar %q", rec.Registrar)
	}
	if strings.Join(asked, ",") != "registry:google.com,registrar:google.com" {
		t.Fatalf("asked %v", asked)
	}
}

func TestClientRefusesPrivateReferral(t *testing.T) {
	// The registry is reached (AllowPrivate only for it, by a dialer that
	// lets exactly that address through); its referral to 127.0.0.1,
	// 10.0.0.1 or 169.254.169.254 must be refused by the real egress check.
	for _, target := range []string{"127.0.0.1", "10.0.0.1", "169.254.169.254"} {
		registry := fakeServer(t, func(q string) string {
			return "Domain Name: EXAMPLE.COM\nRegistrar WHOIS Server: " + target + "\nName Server: NS1.EXAMPLE.COM\n"
		})
		strict := egress.New(egress.Options{})
		lab := egress.New(egress.Options{AllowPrivate: true})
		var refused error
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr == registry {
				return lab.DialContext(ctx, network, addr)
			}
			c, err := strict.DialContext(ctx, network, addr)
			refused = err
			return c, err
		}
		c := &Client{Dial: dial, Servers: Servers{"com": registry}, Timeout: 2 * time.Second}
		ans, err := c.Lookup(context.Background(), "example.com", "com")
		if err != nil {
			t.Fatal(err)
		}
		if !errors.Is(refused, egress.ErrRefused) || !errors.Is(ans.ReferralFail, egress.ErrRefused) {
			t.Fatalf("referral to %s: dial err %v, referral err %v; want refused", target, refused, ans.ReferralFail)
		}
		if ans.Server != registry {
			t.Fatalf("answer from %s, want the registry's", ans.Server)
		}
	}
}

func TestClientCapsReply(t *testing.T) {
	big := fakeServer(t, func(string) string { return strings.Repeat("x", MaxReply*2) })
	c := &Client{Dial: egress.New(egress.Options{AllowPrivate: true}).DialContext, Servers: Servers{"com": big}}
	ans, err := c.Lookup(context.Background(), "big.com", "com")
	if err != nil {
		t.Fatal(err)
	}
	if len(ans.Raw) != MaxReply || !ans.Truncated {
		t.Fatalf("reply %d bytes, truncated %v", len(ans.Raw), ans.Truncated)
	}
}

func TestClientRateLimitText(t *testing.T) {
	srv := fakeServer(t, func(string) string { return "Query rate limit exceeded\n" })
	c := &Client{Dial: egress.New(egress.Options{AllowPrivate: true}).DialContext, Servers: Servers{"com": srv}}
	if _, err := c.Lookup(context.Background(), "x.com", "com"); !errors.Is(err, ErrLimited) {
		t.Fatalf("err = %v, want ErrLimited", err)
	}
}

func TestServersFile(t *testing.T) {
	s := BundledServers()
	if s["com"] != "whois.verisign-grs.com:43" || len(s) < 90 {
		t.Fatalf("bundled table: com=%q, %d entries", s["com"], len(s))
	}
	if _, err := ParseServers(strings.NewReader("com\n")); err == nil {
		t.Fatal("a line without host accepted")
	}
	got, err := ParseServers(strings.NewReader("# lab\nCOM 127.0.0.1:4343\nnet whois.example\n"))
	if err != nil || got["com"] != "127.0.0.1:4343" || got["net"] != "whois.example:43" {
		t.Fatalf("ParseServers = %v, %v", got, err)
	}
}
