package config

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Monitor is the configuration of active monitoring (serve's --monitor-*
// flags). Whether private and loopback targets are allowed is the shared
// --allow-private-targets setting of the SSRF-safe dialer.
type Monitor struct {
	Enabled     bool
	Interval    time.Duration
	Resolvers   string // comma-separated host[:port]
	Ports       string // comma-separated TCP ports
	Rate        float64
	OrgRate     float64
	Concurrency int
	Timeout     time.Duration
}

// monitorDefaults are documented in docs/api.md ("Active monitoring") and docs/operations.md.
var monitorDefaults = Monitor{
	Enabled: true, Interval: 24 * time.Hour, Resolvers: "1.1.1.1,8.8.8.8",
	Ports: "21,22,25,80,110,143,443,465,587,993,995,3306,3389,5432,8080,8443",
	Rate:  50, OrgRate: 10, Concurrency: 32, Timeout: 5 * time.Second,
}

// RegisterMonitor adds the --monitor-* flags of serve, with defaults from
// their PERISCOPE_MONITOR* variables. Call Validate after fs.Parse.
func RegisterMonitor(fs *flag.FlagSet, getenv Getenv) (*Monitor, error) {
	m := &Monitor{}
	d := monitorDefaults
	var bad error
	str := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	boolean := func(name string, def bool) bool {
		v := getenv(name)
		if v == "" {
			return def
		}
		b, err := strconv.ParseBool(v)
		if err != nil && bad == nil {
			bad = fmt.Errorf("%s must be true or false (got %q)", name, v)
		}
		return b
	}
	float := func(name string, def float64) float64 {
		v := getenv(name)
		if v == "" {
			return def
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil && bad == nil {
			bad = fmt.Errorf("%s must be a number (got %q)", name, v)
		}
		return f
	}
	interval, err := envDuration(getenv, "PERISCOPE_MONITOR_INTERVAL", d.Interval)
	if err != nil {
		return nil, err
	}
	timeout, err := envDuration(getenv, "PERISCOPE_MONITOR_TIMEOUT", d.Timeout)
	if err != nil {
		return nil, err
	}
	conc, err := envInt(getenv, "PERISCOPE_MONITOR_CONCURRENCY", d.Concurrency)
	if err != nil {
		return nil, err
	}
	fs.BoolVar(&m.Enabled, "monitor", boolean("PERISCOPE_MONITOR", d.Enabled), "run active monitoring of verified domains and authorised ranges; false turns probing, verification and on-demand scans off (env PERISCOPE_MONITOR)")
	fs.DurationVar(&m.Interval, "monitor-interval", interval, "time between two scheduled scans of an organization (env PERISCOPE_MONITOR_INTERVAL)")
	fs.StringVar(&m.Resolvers, "monitor-resolvers", str("PERISCOPE_MONITOR_RESOLVERS", d.Resolvers), "comma-separated DNS resolvers (host or host:port) for probes and domain verification (env PERISCOPE_MONITOR_RESOLVERS)")
	fs.StringVar(&m.Ports, "monitor-ports", str("PERISCOPE_MONITOR_PORTS", d.Ports), "comma-separated TCP ports tried on each address (env PERISCOPE_MONITOR_PORTS)")
	fs.Float64Var(&m.Rate, "monitor-rate", float("PERISCOPE_MONITOR_RATE", d.Rate), "new connections per second across all scans (env PERISCOPE_MONITOR_RATE)")
	fs.Float64Var(&m.OrgRate, "monitor-org-rate", float("PERISCOPE_MONITOR_ORG_RATE", d.OrgRate), "new connections per second per organization (env PERISCOPE_MONITOR_ORG_RATE)")
	fs.IntVar(&m.Concurrency, "monitor-concurrency", conc, "probes in flight at once across all scans (env PERISCOPE_MONITOR_CONCURRENCY)")
	fs.DurationVar(&m.Timeout, "monitor-timeout", timeout, "time limit of each probe: one DNS question, connect, TLS handshake or HTTP exchange (env PERISCOPE_MONITOR_TIMEOUT)")
	return m, bad
}

// ResolverList splits Resolvers.
func (m *Monitor) ResolverList() []string { return splitList(m.Resolvers) }

// PortList parses Ports.
func (m *Monitor) PortList() ([]int, error) {
	var out []int
	for _, s := range splitList(m.Ports) {
		p, err := strconv.Atoi(s)
		if err != nil || p < 1 || p > 65535 {
			return nil, fmt.Errorf("--monitor-ports: %q is not a port", s)
		}
		out = append(out, p)
	}
	return out, nil
}

// Validate checks the parsed values.
func (m *Monitor) Validate() error {
	if !m.Enabled {
		return nil
	}
	if _, err := m.PortList(); err != nil {
		return err
	}
	switch {
	case len(m.ResolverList()) == 0:
		return fmt.Errorf("--monitor-resolvers must name at least one resolver")
	case m.Interval < time.Minute:
		return fmt.Errorf("--monitor-interval must be at least 1m")
	case m.Rate <= 0 || m.OrgRate <= 0:
		return fmt.Errorf("--monitor-rate and --monitor-org-rate must be > 0")
	case m.Concurrency < 1:
		return fmt.Errorf("--monitor-concurrency must be >= 1")
	case m.Timeout <= 0:
		return fmt.Errorf("--monitor-timeout must be > 0")
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
