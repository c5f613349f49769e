package config

import (
	"flag"
	"fmt"
	"strconv"
)

// Outbound configures every connection Periscope makes on a user's behalf
// (WHOIS, RDAP, and the webhooks and probes that follow) or to a URL the
// operator gave (feeds, ingest sources): they all go through
// internal/egress, which AllowPrivateTargets opens to loopback and private
// space.
type Outbound struct {
	// AllowPrivateTargets lets outbound connections reach loopback, private,
	// link-local and other non-public addresses on any port. Labs and tests
	// only; off by default.
	AllowPrivateTargets bool
	// WhoisServers is a `tld host[:port]` file laid over the bundled table.
	WhoisServers string
	// RDAPBootstrap is a file in IANA's dns.json format replacing the RDAP
	// dns bootstrap registry.
	RDAPBootstrap string
	// WhoisRate is the requests per minute allowed to each WHOIS/RDAP host.
	WhoisRate float64
	// WhoisBurst is how many requests may go to one host at once.
	WhoisBurst int
	// RDAPRefresh turns on the daily refresh of IANA's RDAP bootstrap
	// registries (serve; off in --demo, which must not need network).
	RDAPRefresh bool
}

// RegisterAllowPrivate adds --allow-private-targets to fs (serve, whois
// and ingest, whose URLs are fetched under the same rule).
func (c *Config) RegisterAllowPrivate(fs *flag.FlagSet, getenv Getenv) error {
	allow := false
	if v := getenv("PERISCOPE_ALLOW_PRIVATE_TARGETS"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("PERISCOPE_ALLOW_PRIVATE_TARGETS must be true or false (got %q)", v)
		}
		allow = b
	}
	fs.BoolVar(&c.Outbound.AllowPrivateTargets, "allow-private-targets", allow, "let outbound connections (WHOIS, RDAP, webhooks, probes, feed and ingest URLs) reach loopback, private, link-local and metadata addresses on any port, and organizations claim private IP ranges; labs, tests and internal networks only (env PERISCOPE_ALLOW_PRIVATE_TARGETS)")
	return nil
}

// RegisterOutbound adds the outbound flags to fs (serve and whois).
func (c *Config) RegisterOutbound(fs *flag.FlagSet, getenv Getenv) error {
	o := &c.Outbound
	if err := c.RegisterAllowPrivate(fs, getenv); err != nil {
		return err
	}
	rate := 30.0
	if v := getenv("PERISCOPE_WHOIS_RATE"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("PERISCOPE_WHOIS_RATE must be a number (got %q)", v)
		}
		rate = f
	}
	fs.StringVar(&o.WhoisServers, "whois-servers", getenv("PERISCOPE_WHOIS_SERVERS"), "file of \"tld host[:port]\" lines overriding the bundled WHOIS server table (env PERISCOPE_WHOIS_SERVERS)")
	fs.StringVar(&o.RDAPBootstrap, "rdap-bootstrap", getenv("PERISCOPE_RDAP_BOOTSTRAP"), "file in IANA's RDAP dns.json format replacing the dns bootstrap registry (env PERISCOPE_RDAP_BOOTSTRAP)")
	fs.Float64Var(&o.WhoisRate, "whois-rate", rate, "requests per minute to each WHOIS/RDAP server (env PERISCOPE_WHOIS_RATE)")
	fs.IntVar(&o.WhoisBurst, "whois-burst", 5, "requests that may go to one WHOIS/RDAP server back to back")
	fs.BoolVar(&o.RDAPRefresh, "rdap-refresh", true, "refresh IANA's RDAP bootstrap registries daily (serve)")
	return nil
}

// ValidateOutbound checks the outbound settings.
func (c *Config) ValidateOutbound() error {
	if c.Outbound.WhoisRate <= 0 {
		return fmt.Errorf("--whois-rate must be > 0")
	}
	if c.Outbound.WhoisBurst < 1 {
		return fmt.Errorf("--whois-burst must be >= 1")
	}
	return nil
}
