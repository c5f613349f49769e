// Package config is the only reader of flags and environment variables. Each
// setting is a flag whose default comes from its PERISCOPE_* variable.
package config

import (
	"flag"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Config is the service configuration shared by the subcommands.
type Config struct {
	Database        string        // SQLite file path or postgres:// URL
	Addr            string        // HTTP listen address
	RateLimit       int           // requests per minute per key; 0 = off
	AuthFailLimit   int           // failed authentications per minute per IP
	ShutdownTimeout time.Duration // how long in-flight requests get at shutdown
	LogLevel        string        // debug, info, warn, error
	Demo            bool          // serve: create demo accounts and load demo data
	// Feeds and enrichment, used by capabilities; empty means built-in defaults.
	GeoIPCity    string
	GeoIPASN     string
	CloudRanges  string
	KeepPrivate  bool          // ingest: keep records whose host is a lab-private address
	SyncInterval time.Duration // 0 = no scheduled sync
	NVDAPIKey    string
	VulnSync     VulnSync // upstream feeds of the scheduled vulnerability sync
	// AuditRetention is how long OEM audit records are kept; 0 keeps them
	// forever.
	AuditRetention time.Duration
	// TrustedProxies are the reverse proxies whose X-Forwarded-For is
	// believed (comma-separated CIDRs or addresses).
	TrustedProxies []netip.Prefix
	// PostingCacheMiB is the budget of serve's host query posting cache
	// (hoststore.Store.SetPostingCacheMiB); 0 turns it off.
	PostingCacheMiB int
	Instances       Instances
	Outbound        Outbound // connections made on a user's behalf (outbound.go)
}

// DefaultPostingCacheMiB is the posting cache's budget unless set: what
// hoststore.DefaultPostingCacheMiB says (config reads no other package; a
// test of serve checks they agree).
const DefaultPostingCacheMiB = 256

// MaxPostingCacheMiB bounds --posting-cache-mib: 1 TiB, far beyond any
// host index's posting lists, and below any count of bytes given by
// mistake for mebibytes.
const MaxPostingCacheMiB = 1 << 20

// DefaultAuditRetention is how long audit records are kept unless set.
const DefaultAuditRetention = 90 * 24 * time.Hour

// Getenv looks up an environment variable (os.Getenv, or a map in tests).
type Getenv func(string) string

// Register adds the common flags to fs, with defaults from the environment.
// Call Validate after fs.Parse.
func (c *Config) Register(fs *flag.FlagSet, getenv Getenv) {
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	fs.StringVar(&c.Database, "database", env("PERISCOPE_DATABASE", "./periscope.db"), "SQLite file path or postgres:// URL (env PERISCOPE_DATABASE)")
	fs.StringVar(&c.LogLevel, "log-level", env("PERISCOPE_LOG_LEVEL", "info"), "log level: debug, info, warn, error (env PERISCOPE_LOG_LEVEL)")
}

// RegisterServe adds the flags of the serve command.
func (c *Config) RegisterServe(fs *flag.FlagSet, getenv Getenv) error {
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	rl, err := envInt(getenv, "PERISCOPE_RATE_LIMIT", 60)
	if err != nil {
		return err
	}
	afl, err := envInt(getenv, "PERISCOPE_AUTH_FAIL_LIMIT", 30)
	if err != nil {
		return err
	}
	sync, err := envDuration(getenv, "PERISCOPE_SYNC_INTERVAL", 0)
	if err != nil {
		return err
	}
	fs.StringVar(&c.Addr, "addr", env("PERISCOPE_ADDR", "127.0.0.1:8080"), "listen address (env PERISCOPE_ADDR)")
	fs.IntVar(&c.RateLimit, "rate-limit", rl, "requests per minute per key on each route at FullHunt's general rate; routes FullHunt limits lower scale with it (docs/api.md); 0 turns per-key limits off (env PERISCOPE_RATE_LIMIT)")
	fs.IntVar(&c.AuthFailLimit, "auth-fail-limit", afl, "failed authentications per minute per client IP (env PERISCOPE_AUTH_FAIL_LIMIT)")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 30*time.Second, "time given to in-flight requests at shutdown")
	fs.BoolVar(&c.Demo, "demo", false, "create the demo accounts (printing their keys) and load the bundled demo data")
	fs.StringVar(&c.GeoIPCity, "geoip-city", env("PERISCOPE_GEOIP_CITY", ""), "MMDB file with city/country data (MaxMind, DB-IP or IPinfo layout) (env PERISCOPE_GEOIP_CITY)")
	fs.StringVar(&c.GeoIPASN, "geoip-asn", env("PERISCOPE_GEOIP_ASN", ""), "MMDB file with ASN data (env PERISCOPE_GEOIP_ASN)")
	fs.StringVar(&c.CloudRanges, "cloud-ranges", env("PERISCOPE_CLOUD_RANGES", ""), "directory of provider range files overriding the built-in set (env PERISCOPE_CLOUD_RANGES)")
	fs.DurationVar(&c.SyncInterval, "sync-interval", sync, "how often to sync the vulnerability feeds from upstream; 0 disables (env PERISCOPE_SYNC_INTERVAL)")
	fs.StringVar(&c.NVDAPIKey, "nvd-api-key", env("PERISCOPE_NVD_API_KEY", ""), "NVD API key, sent as the apiKey header (env PERISCOPE_NVD_API_KEY)")
	retention, err := envDuration(getenv, "PERISCOPE_AUDIT_RETENTION", DefaultAuditRetention)
	if err != nil {
		return err
	}
	fs.DurationVar(&c.AuditRetention, "audit-retention", retention, "how long OEM audit records are kept (2160h = 90 days); 0 keeps them forever (env PERISCOPE_AUDIT_RETENTION)")
	pcm, err := envInt(getenv, "PERISCOPE_POSTING_CACHE_MIB", DefaultPostingCacheMiB)
	if err != nil {
		return err
	}
	fs.IntVar(&c.PostingCacheMiB, "posting-cache-mib", pcm, "MiB of memory for the host index's posting lists that host queries, facets and global searches read, kept decoded; 0 turns the cache off (env PERISCOPE_POSTING_CACHE_MIB)")
	proxies, err := parsePrefixes(env("PERISCOPE_TRUSTED_PROXIES", ""))
	if err != nil {
		return fmt.Errorf("PERISCOPE_TRUSTED_PROXIES: %w", err)
	}
	c.TrustedProxies = proxies
	fs.Func("trusted-proxies", "comma-separated CIDRs of reverse proxies whose X-Forwarded-For is believed; empty trusts none (env PERISCOPE_TRUSTED_PROXIES)", func(v string) error {
		p, err := parsePrefixes(v)
		c.TrustedProxies = p
		return err
	})
	c.VulnSync.register(fs, getenv)
	return c.Instances.register(fs, getenv)
}

// parsePrefixes reads comma-separated CIDRs; a bare address is its /32 or /128.
func parsePrefixes(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if a, err := netip.ParseAddr(f); err == nil {
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR such as 10.0.0.0/8", f)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// Validate checks the parsed values.
func (c *Config) Validate() error {
	if c.Database == "" {
		return fmt.Errorf("--database must not be empty")
	}
	if c.RateLimit < 0 || c.AuthFailLimit < 0 {
		return fmt.Errorf("--rate-limit and --auth-fail-limit must be >= 0")
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("--log-level must be debug, info, warn or error (got %q)", c.LogLevel)
	}
	if c.SyncInterval < 0 {
		return fmt.Errorf("--sync-interval must be >= 0")
	}
	if c.AuditRetention < 0 {
		return fmt.Errorf("--audit-retention must be >= 0")
	}
	if c.Addr != "" { // serve's settings
		if c.PostingCacheMiB < 0 {
			return fmt.Errorf("--posting-cache-mib must be >= 0; 0 turns the cache off (got %d)", c.PostingCacheMiB)
		}
		if c.PostingCacheMiB > MaxPostingCacheMiB {
			return fmt.Errorf("--posting-cache-mib is in MiB: %d MiB is more than 1 TiB (at most %d)", c.PostingCacheMiB, MaxPostingCacheMiB)
		}
		return c.Instances.validate()
	}
	return nil
}

func envInt(getenv Getenv, name string, def int) (int, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%s must be an integer (got %q)", name, v)
	}
	return n, nil
}

func envDuration(getenv Getenv, name string, def time.Duration) (time.Duration, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s must be a duration such as 6h (got %q)", name, v)
	}
	return d, nil
}
