package egress

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fixedResolver answers every name with the same addresses, like a
// rebinding DNS server would.
type fixedResolver []netip.Addr

func (r fixedResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return r, nil
}

func TestNonPublic(t *testing.T) {
	for _, tc := range []struct {
		ip     string
		public bool
	}{
		{"127.0.0.1", false},
		{"10.0.0.1", false},
		{"172.16.5.4", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false},
		{"100.64.0.1", false},
		{"0.0.0.0", false},
		{"224.0.0.1", false},
		{"255.255.255.255", false},
		{"192.0.2.1", false},
		{"198.18.0.1", false},
		{"240.0.0.1", false},
		{"::1", false},
		{"::", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:169.254.169.254", false},
		{"64:ff9b::a00:1", false},  // NAT64 of 10.0.0.1
		{"64:ff9b::7f00:1", false}, // NAT64 of 127.0.0.1
		{"::7f00:1", false},        // IPv4-compatible 127.0.0.1
		{"fe80::1", false},
		{"fc00::1", false},
		{"fd12:3456::1", false},
		{"ff02::1", false},
		{"2001:db8::1", false},
		{"fe80::1%eth0", false},
		{"8.8.8.8", true},
		{"192.0.47.59", true}, // whois.iana.org
		{"::ffff:8.8.8.8", true},
		{"64:ff9b::808:808", true},
		{"2001:500:88:200::8", true},
	} {
		reason := NonPublic(netip.MustParseAddr(tc.ip))
		if (reason == "") != tc.public {
			t.Errorf("NonPublic(%s) = %q, want public=%v", tc.ip, reason, tc.public)
		}
	}
}

func listen(t *testing.T) (port int) {
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
			io.WriteString(c, "hello\n")
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

func TestDialRefusesPrivate(t *testing.T) {
	ctx := context.Background()
	d := New(Options{Ports: []int{43, 443}, Timeout: time.Second})
	for _, addr := range []string{"127.0.0.1:43", "10.0.0.1:43", "169.254.169.254:443", "[::1]:43", "[::ffff:127.0.0.1]:443", "[64:ff9b::a9fe:a9fe]:443"} {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			t.Errorf("DialContext(%s) connected, want refused", addr)
			continue
		}
		if !errors.Is(err, ErrRefused) {
			t.Errorf("DialContext(%s) = %v, want ErrRefused", addr, err)
		}
	}
}

func TestDialRefusesRebindingName(t *testing.T) {
	port := listen(t)
	d := New(Options{Ports: []int{port}, Resolver: fixedResolver{netip.MustParseAddr("127.0.0.1")}})
	_, err := d.DialContext(context.Background(), "tcp", "rebind.example:"+strconv.Itoa(port))
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("name resolving to loopback: err = %v, want ErrRefused", err)
	}
}

func TestDialRefusesPort(t *testing.T) {
	d := New(Options{Resolver: fixedResolver{netip.MustParseAddr("8.8.8.8")}})
	_, err := d.DialContext(context.Background(), "tcp", "dns.google:25")
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "port 25") {
		t.Fatalf("port 25: err = %v, want port refusal", err)
	}
}

func TestControlRefusesPrivate(t *testing.T) {
	d := New(Options{})
	if err := d.control("tcp4", "127.0.0.1:443", nil); !errors.Is(err, ErrRefused) {
		t.Fatalf("control on loopback = %v, want ErrRefused", err)
	}
	if err := d.control("tcp4", "8.8.8.8:443", nil); err != nil {
		t.Fatalf("control on public = %v", err)
	}
}

func TestAllowPrivateReachesLoopback(t *testing.T) {
	port := listen(t)
	d := New(Options{AllowPrivate: true, Resolver: fixedResolver{netip.MustParseAddr("127.0.0.1")}})
	for _, addr := range []string{"127.0.0.1:" + strconv.Itoa(port), "lab.example:" + strconv.Itoa(port)} {
		c, err := d.DialContext(context.Background(), "tcp", addr)
		if err != nil {
			t.Fatalf("AllowPrivate dial %s: %v", addr, err)
		}
		b, _ := io.ReadAll(c)
		c.Close()
		if string(b) != "hello\n" {
			t.Fatalf("read %q", b)
		}
	}
}

func TestHTTPClient(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "other") }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case "/cross":
			http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+"/x", http.StatusFound)
		default:
			io.WriteString(w, "ok")
		}
	}))
	defer srv.Close()

	if _, err := New(Options{}).HTTPClient(time.Second).Get(srv.URL); !errors.Is(err, ErrRefused) {
		t.Fatalf("private HTTP without AllowPrivate: err = %v, want ErrRefused", err)
	}
	c := New(Options{AllowPrivate: true}).HTTPClient(2 * time.Second)
	resp, err := c.Get(srv.URL + "/same")
	if err != nil {
		t.Fatalf("same-host redirect: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "ok" {
		t.Fatalf("same-host redirect body %q", b)
	}
	if _, err := c.Get(srv.URL + "/cross"); !errors.Is(err, ErrRefused) {
		t.Fatalf("cross-host redirect: err = %v, want ErrRefused", err)
	}
}
