// Package tor reads the Tor Project's published lists of exit relays: the
// TorDNSEL exit-addresses list (ExitNode, Published, LastStatus and
// ExitAddress lines) and the bulk exit list (one address a line), and keeps
// a store of them current from the Tor Project's URL.
package tor

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"
)

// DefaultURL is the Tor Project's exit-addresses list.
const DefaultURL = "https://check.torproject.org/exit-addresses"

// Exit is one exit address.
type Exit struct {
	IP          netip.Addr
	Fingerprint string    // the relay's, "" from the bulk list
	Published   time.Time // the relay descriptor's; zero from the bulk list
	Seen        time.Time // when the list saw the address exiting; zero from the bulk list
}

// maxLine bounds a line: the lists' lines are under 100 bytes.
const maxLine = 4096

// Parse reads either list and calls fn for each exit address, returning
// how many it read. A line it cannot read is an error naming the line; an
// input with no address at all is an error too (a page of HTML, say).
func Parse(r io.Reader, fn func(Exit) error) (int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256), maxLine)
	var node string
	var published time.Time
	n, line := 0, 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch f[0] {
		case "ExitNode":
			if len(f) != 2 {
				return n, fmt.Errorf("line %d: ExitNode wants a fingerprint", line)
			}
			node, published = f[1], time.Time{}
			continue
		case "Published":
			t, err := listTime(f[1:])
			if err != nil {
				return n, fmt.Errorf("line %d: %w", line, err)
			}
			published = t
			continue
		case "LastStatus":
			continue
		case "ExitAddress":
			if len(f) < 2 {
				return n, fmt.Errorf("line %d: ExitAddress wants an address", line)
			}
			ip, err := netip.ParseAddr(f[1])
			if err != nil {
				return n, fmt.Errorf("line %d: %q is not an address", line, f[1])
			}
			e := Exit{IP: ip.Unmap(), Fingerprint: node, Published: published}
			if len(f) > 2 {
				if e.Seen, err = listTime(f[2:]); err != nil {
					return n, fmt.Errorf("line %d: %w", line, err)
				}
			}
			if err := fn(e); err != nil {
				return n, err
			}
			n++
			continue
		}
		// The bulk list: an address alone on its line.
		ip, err := netip.ParseAddr(f[0])
		if err != nil || len(f) != 1 {
			return n, fmt.Errorf("line %d: neither an exit-addresses line nor an address: %q", line, clip(sc.Text()))
		}
		if err := fn(Exit{IP: ip.Unmap()}); err != nil {
			return n, err
		}
		n++
	}
	if err := sc.Err(); err != nil {
		return n, fmt.Errorf("line %d: %w", line+1, err)
	}
	if n == 0 {
		return 0, fmt.Errorf("no exit address in the list")
	}
	return n, nil
}

// listTime reads "2024-03-12 08:10:51" (UTC).
func listTime(f []string) (time.Time, error) {
	if len(f) != 2 {
		return time.Time{}, fmt.Errorf("want a time as YYYY-MM-DD HH:MM:SS")
	}
	t, err := time.Parse("2006-01-02 15:04:05", f[0]+" "+f[1])
	if err != nil {
		return time.Time{}, fmt.Errorf("want a time as YYYY-MM-DD HH:MM:SS, got %q", clip(f[0]+" "+f[1]))
	}
	return t, nil
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
