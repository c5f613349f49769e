package main

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/periscope-oss/periscope/internal/egress"
)

// FeedPorts are the ports a feed download may reach without
// --allow-private-targets: HTTP and HTTPS, and their usual alternatives.
var FeedPorts = []int{80, 443, 8080, 8443}

// feedClient is the HTTP client of every download from an operator-given
// URL (vulnerability sync and ingest, CT logs, the Tor exit list, host
// files): it dials through the SSRF-safe dialer, like WHOIS and RDAP, so a
// URL leading to loopback, private, link-local or metadata space (by its
// address or its name's) is refused unless allowPrivate
// (--allow-private-targets).
func feedClient(allowPrivate bool, timeout time.Duration) *http.Client {
	c := egress.New(egress.Options{AllowPrivate: allowPrivate, Ports: FeedPorts}).HTTPClient(timeout)
	c.Transport = feedTransport{c.Transport}
	return c
}

// feedTransport names the switch in a refusal, for the operator who set
// the URL.
type feedTransport struct{ http.RoundTripper }

func (t feedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.RoundTripper.RoundTrip(r)
	if errors.Is(err, egress.ErrRefused) {
		err = fmt.Errorf("%w (a feed URL may reach loopback, private or metadata addresses, or ports other than 80, 443, 8080 and 8443, only with --allow-private-targets)", err)
	}
	return resp, err
}
