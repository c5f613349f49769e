package probe

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestPublicOnly(t *testing.T) {
	for _, c := range []struct {
		addr string
		want bool
	}{
		{"8.8.8.8", true}, {"2606:4700::1111", true}, {"1.1.1.1", true},
		{"127.0.0.1", false}, {"10.1.2.3", false}, {"172.16.0.1", false}, {"192.168.1.1", false},
		{"169.254.169.254", false}, {"100.64.0.1", false}, {"0.0.0.0", false}, {"224.0.0.1", false},
		{"192.0.2.1", false}, {"198.18.0.1", false}, {"255.255.255.255", false},
		{"::1", false}, {"::", false}, {"fe80::1", false}, {"fd00::1", false}, {"2001:db8::1", false},
		{"::ffff:127.0.0.1", false}, {"::ffff:8.8.8.8", true}, {"64:ff9b::a00:1", false},
	} {
		a := netip.MustParseAddr(c.addr)
		if got := (PublicOnly{}).Allowed(a); got != c.want {
			t.Errorf("Allowed(%s) = %v, want %v", c.addr, got, c.want)
		}
		if !(PublicOnly{AllowPrivate: true}).Allowed(a) {
			t.Errorf("AllowPrivate refused %s", c.addr)
		}
	}
	if PublicPrefix(netip.MustParsePrefix("8.0.0.0/7")) != true || PublicPrefix(netip.MustParsePrefix("8.0.0.0/4")) {
		t.Error("PublicPrefix: 8.0.0.0/7 is public, 8.0.0.0/4 covers 10/8")
	}
}

// rawServer answers every connection with resp and closes it.
func rawServer(t *testing.T, resp func(c net.Conn)) (netip.Addr, int) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				c.Read(buf)
				resp(c)
			}()
		}
	}()
	ap := netip.MustParseAddrPort(l.Addr().String())
	return ap.Addr(), int(ap.Port())
}

func lab() *Prober {
	return &Prober{Dial: (&net.Dialer{}).DialContext, Policy: PublicOnly{AllowPrivate: true}, Timeout: 2 * time.Second, BodyLimit: 1024}
}

func TestGetReadsTitleAndTechnologies(t *testing.T) {
	addr, port := rawServer(t, func(c net.Conn) {
		fmt.Fprint(c, "HTTP/1.1 403 Forbidden\r\nServer: Apache/2.4.58\r\nX-Powered-By: PHP/8.3\r\nSet-Cookie: JSESSIONID=1\r\nStrict-Transport-Security: max-age=1\r\n\r\n")
		fmt.Fprint(c, "<html><TITLE lang=en>\n  Access \xff denied\n</TITLE>"+strings.Repeat("x", 5000)+"<title>late</title>")
	})
	pg, err := lab().Get(context.Background(), addr, port, "www.example.com", false)
	if err != nil {
		t.Fatal(err)
	}
	if pg.Status != 403 || pg.Title != "Access denied" || pg.Server != "Apache/2.4.58" {
		t.Fatalf("%+v", pg)
	}
	if want := []string{"Apache/2.4.58", "HSTS", "Java", "PHP/8.3"}; !slices.Equal(pg.Tech, want) {
		t.Fatalf("tech %v, want %v", pg.Tech, want)
	}
}

func TestGetBoundsHeaders(t *testing.T) {
	addr, port := rawServer(t, func(c net.Conn) {
		fmt.Fprint(c, "HTTP/1.1 200 OK\r\n")
		line := "X-Junk: " + strings.Repeat("a", 1000) + "\r\n"
		for range 1000 { // a megabyte of headers
			if _, err := fmt.Fprint(c, line); err != nil {
				return
			}
		}
	})
	if _, err := lab().Get(context.Background(), addr, port, "example.com", false); err == nil {
		t.Fatal("a megabyte of headers was read")
	}
}

func TestNotAllowedIsNeverDialled(t *testing.T) {
	dialled := false
	p := &Prober{Dial: func(ctx context.Context, n, a string) (net.Conn, error) { dialled = true; return nil, nil }, Policy: PublicOnly{}}
	for _, f := range []func() error{
		func() error { _, err := p.Open(context.Background(), netip.MustParseAddr("127.0.0.1"), 80); return err },
		func() error {
			_, err := p.Get(context.Background(), netip.MustParseAddr("10.0.0.1"), 80, "x", false)
			return err
		},
		func() error {
			_, err := p.Handshake(context.Background(), netip.MustParseAddr("::1"), 443, "x")
			return err
		},
	} {
		if err := f(); err != ErrNotAllowed && !strings.Contains(fmt.Sprint(err), ErrNotAllowed.Error()) {
			t.Errorf("err %v, want ErrNotAllowed", err)
		}
	}
	if dialled {
		t.Fatal("a private address was dialled")
	}
}

func FuzzTitle(f *testing.F) {
	f.Add([]byte("<title>Hello</title>"))
	f.Add([]byte("<TITLE>\x00a\xffb</TITLE>"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := title(b)
		if strings.ContainsRune(s, 0) || !strings.EqualFold(s, strings.ToValidUTF8(s, "")) || len([]rune(s)) > 256 {
			t.Fatalf("title %q", s)
		}
	})
}
